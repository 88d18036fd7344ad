// The inputs of the builder operations (suggest_names, rank_options, seo_tips) checked against
// their bounds before anything runs. Every problem is collected as a `{field, reason}`, so a caller
// fixes a request in one round trip; the route answers REQUEST_INVALID (400) with that list.
import { AppError, type FieldError } from '../errors';
import {
  fieldPath,
  has as hasKey,
  integerInRange,
  isPlainObject,
  rejectUnknownKeys,
  ROOT_FIELD,
  type FieldErrors,
} from '../validation/fields';
import {
  DEFAULT_NAME_COUNT,
  DEFAULT_NAME_STYLE,
  NAME_COUNT_MAX,
  NAME_COUNT_MIN,
  NAME_STYLES,
  type NameStyle,
} from './fallbackNames';
import { readDomainResults } from './domainResults';
import { BUILDER_NAME_MAX_CHARS, isBuilderName } from './names';
import type { AvailabilityByName } from './rankOptions';

export const IDEA_MAX_CHARS = 500;
export const RANK_NAMES_MAX = 50;
// Tabs and line breaks are fine in an idea; other control characters are not text.
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const NAME_REASON = `must be 1-${BUILDER_NAME_MAX_CHARS} of a-z, 0-9 and inner hyphens (a DNS label), without "--" in positions 3-4`;

export type BuilderValidation<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

export interface SuggestNamesInput {
  readonly idea: string;
  readonly count: number;
  readonly style: NameStyle;
}

export interface RankOptionsInput {
  readonly names: readonly string[];
  /** From `domains` when given: each name's check results (docs/builder.md "Ranking"). */
  readonly availability?: AvailabilityByName;
}

export interface SeoTipsInput {
  readonly name: string;
  readonly idea?: string;
}

/** Absent, undefined and null all mean "not given", as in the REST layer's body reader. */
function has(body: Record<string, unknown>, key: string): boolean {
  return hasKey(body, key) && body[key] !== null;
}

/** The REST/GraphQL failure for a list of field problems: REQUEST_INVALID with `details`. */
export function builderInputError(errors: readonly FieldError[]): AppError {
  return new AppError('REQUEST_INVALID', 'The request body is invalid.', [...errors]);
}

/** `{idea, count?, style?}`; count defaults to 10, style to brandable. */
export function validateSuggestNamesInput(raw: unknown): BuilderValidation<SuggestNamesInput> {
  return readObject(raw, ['idea', 'count', 'style'], (body, errors) => {
    const idea = readIdea(body, 'idea', true, errors);
    let count = DEFAULT_NAME_COUNT;
    if (has(body, 'count')) {
      if (integerInRange(body.count, NAME_COUNT_MIN, NAME_COUNT_MAX)) count = body.count;
      else
        errors.push({
          field: 'count',
          reason: `must be an integer in ${NAME_COUNT_MIN}..${NAME_COUNT_MAX}`,
        });
    }
    let style: NameStyle = DEFAULT_NAME_STYLE;
    if (has(body, 'style')) {
      if ((NAME_STYLES as readonly unknown[]).includes(body.style)) style = body.style as NameStyle;
      else errors.push({ field: 'style', reason: `must be one of ${NAME_STYLES.join(', ')}` });
    }
    return { idea: idea!, count, style };
  });
}

/** `{names, domains?}`: 1-50 distinct builder names (case as given; no rewriting), and check results. */
export function validateRankOptionsInput(raw: unknown): BuilderValidation<RankOptionsInput> {
  return readObject(raw, ['names', 'domains'], (body, errors) => {
    const names = body.names;
    if (!has(body, 'names')) errors.push({ field: 'names', reason: 'required' });
    else if (!Array.isArray(names))
      errors.push({ field: 'names', reason: 'must be an array of strings' });
    else if (names.length < 1 || names.length > RANK_NAMES_MAX)
      errors.push({ field: 'names', reason: `must hold 1-${RANK_NAMES_MAX} names` });
    else checkNames(names, errors);
    if (!has(body, 'domains')) return { names: names as string[] };
    const known = Array.isArray(names) ? names.filter(isBuilderName) : [];
    return {
      names: names as string[],
      availability: readDomainResults(body.domains, known, errors),
    };
  });
}

/** `{name, idea?}`. */
export function validateSeoTipsInput(raw: unknown): BuilderValidation<SeoTipsInput> {
  return readObject(raw, ['name', 'idea'], (body, errors) => {
    if (!has(body, 'name')) errors.push({ field: 'name', reason: 'required' });
    else if (!isBuilderName(body.name)) errors.push({ field: 'name', reason: NAME_REASON });
    const idea = readIdea(body, 'idea', false, errors);
    return idea === undefined ? { name: body.name as string } : { name: body.name as string, idea };
  });
}

/** `{idea}`: brand_pack's one field. */
export function validateBrandPackInput(raw: unknown): BuilderValidation<{ readonly idea: string }> {
  return readObject(raw, ['idea'], (body, errors) => ({
    idea: readIdea(body, 'idea', true, errors)!,
  }));
}

/** An idea: a string of 1-500 code points with a non-space character and no control characters but tab and line breaks. */
export function readIdea(
  body: Record<string, unknown>,
  field: string,
  required: boolean,
  errors: FieldErrors,
): string | undefined {
  if (!has(body, field)) {
    if (required) errors.push({ field, reason: 'required' });
    return undefined;
  }
  const value = body[field];
  if (typeof value !== 'string') errors.push({ field, reason: 'must be a string' });
  else if (value.trim().length === 0 || [...value].length > IDEA_MAX_CHARS)
    errors.push({ field, reason: `must be 1-${IDEA_MAX_CHARS} characters, not only spaces` });
  else if (CONTROL_CHARACTERS.test(value))
    errors.push({
      field,
      reason: 'must not contain control characters other than tab and line breaks',
    });
  else return value;
  return undefined;
}

function checkNames(names: readonly unknown[], errors: FieldErrors): void {
  const firstIndex = new Map<string, number>();
  names.forEach((name, index) => {
    const field = fieldPath('names', index);
    if (!isBuilderName(name)) {
      errors.push({ field, reason: NAME_REASON });
      return;
    }
    const earlier = firstIndex.get(name);
    if (earlier !== undefined) errors.push({ field, reason: `repeats names[${earlier}]` });
    else firstIndex.set(name, index);
  });
}

/** A JSON object with only `allowed` keys, read by `read`; ok only when no problem was found. */
function readObject<T>(
  raw: unknown,
  allowed: readonly string[],
  read: (body: Record<string, unknown>, errors: FieldErrors) => T,
): BuilderValidation<T> {
  if (!isPlainObject(raw))
    return { ok: false, errors: [{ field: ROOT_FIELD, reason: 'must be a JSON object' }] };
  const errors: FieldErrors = [];
  rejectUnknownKeys(raw, new Set(allowed), '', errors);
  const value = read(raw, errors);
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value };
}
