// The launch pack's pure parts: names (fallback generator and the name rule), ranking, the SEO
// checklist and input validation. No I/O, no clock, no unseeded randomness (a test walks the imports).
export {
  DEFAULT_NAME_COUNT,
  DEFAULT_NAME_SEED,
  DEFAULT_NAME_STYLE,
  fallbackNames,
  NAME_COUNT_MAX,
  NAME_COUNT_MIN,
  NAME_SEED_MAX,
  NAME_STYLES,
  STYLE_LENGTHS,
  type FallbackNameOptions,
  type NameStyle,
} from './fallbackNames';
export {
  BUILDER_NAME_MAX_CHARS,
  distinctBuilderNames,
  isBuilderName,
  toBuilderName,
} from './names';
export { pronounceabilityPoints } from './pronounceability';
export {
  DOMAIN_AVAILABILITY,
  rankOptions,
  RANK_POINTS,
  type AvailabilityByName,
  type DomainAvailability,
  type DomainStatus,
  type RankedOption,
  type ScoreParts,
} from './rankOptions';
export {
  META_DESCRIPTION_MAX_CHARS,
  seoTips,
  TITLE_MAX_CHARS,
  type ChecklistItem,
  type SeoTips,
  type SuggestedText,
} from './seoTips';
export { HANDLES_NOTE, type HandleChecklist, type HandleToCheck } from './handles';
export {
  builderInputError,
  IDEA_MAX_CHARS,
  RANK_NAMES_MAX,
  validateBrandPackInput,
  validateRankOptionsInput,
  validateSeoTipsInput,
  validateSuggestNamesInput,
  type BuilderValidation,
  type RankOptionsInput,
  type SeoTipsInput,
  type SuggestNamesInput,
} from './validate';
export {
  NAME_MODEL_FAILURE_REASONS,
  type NameModel,
  type NameModelAnswer,
  type NameModelFailureReason,
  type NamesQuestion,
} from './nameModel';
export { BUILDER_ROUTES, builderRoute, type BuilderOperation, type BuilderRoute } from './routes';
