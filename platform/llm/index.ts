// The language-model client for builder name suggestions and the model-or-fallback composition.
// Never imported by the engine or a payment path (test/architecture/noModelOnMoneyPath.test.ts).
export {
  LLM_FAILURE_REASONS,
  readNamesAnswer,
  type LlmFailureReason,
  type LlmNamesResult,
} from './answer';
export { createLlmClient, type LlmClient } from './client';
export {
  checkLlmOptions,
  DEFAULT_LLM_TIMEOUT_MS,
  LLM_TIMEOUT_BOUNDS_MS,
  LlmConfigError,
  MAX_LLM_RESPONSE_BYTES,
  type LlmOptions,
} from './options';
export {
  chatCompletionRequest,
  NAMES_SCHEMA_NAME,
  PROMPT_LINES,
  type NamesQuestion,
} from './prompt';
export {
  suggestNames,
  type FallbackReason,
  type NameSuggestions,
  type SuggestNamesOptions,
} from './suggestNames';
