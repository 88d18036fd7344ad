// What the language-model client needs to run: an OpenAI-compatible endpoint, its key, the model
// and a timeout, each checked here once. The key is only ever used for the Authorization header:
// no message here (or anywhere in platform/llm) quotes it. Reading these from the environment
// (LLM_API_KEY, LLM_BASE_URL, LLM_MODEL) is the config module's job.

export interface LlmOptions {
  /** Sent as `Authorization: Bearer <apiKey>`; printable ASCII without spaces. */
  readonly apiKey: string;
  /** The API root, e.g. https://api.openai.com/v1; `/chat/completions` is appended. */
  readonly baseUrl: string;
  readonly model: string;
  /** The whole call (connect, answer, body) must finish within this. */
  readonly timeoutMs: number;
}

export const DEFAULT_LLM_TIMEOUT_MS = 8_000;
export const LLM_TIMEOUT_BOUNDS_MS = { min: 100, max: 120_000 } as const;
/** A complete answer for 20 names is a few KiB; more than this is refused unread. */
export const MAX_LLM_RESPONSE_BYTES = 64 * 1024;
const MAX_API_KEY_CHARS = 1_024;
const MAX_MODEL_CHARS = 200;
const MAX_BASE_URL_CHARS = 2_048;
const PRINTABLE_NO_SPACE = /^[\x21-\x7e]+$/;

export class LlmConfigError extends RangeError {
  constructor(
    readonly field: keyof LlmOptions,
    reason: string,
  ) {
    super(`LLM ${field} ${reason}`);
    this.name = 'LlmConfigError';
  }
}

/** The options with the base URL's trailing slashes removed; LlmConfigError names the bad field, never its value. */
export function checkLlmOptions(options: LlmOptions): LlmOptions {
  const { apiKey, baseUrl, model, timeoutMs } = options;
  if (
    typeof apiKey !== 'string' ||
    apiKey.length === 0 ||
    apiKey.length > MAX_API_KEY_CHARS ||
    !PRINTABLE_NO_SPACE.test(apiKey)
  ) {
    throw new LlmConfigError(
      'apiKey',
      `must be 1-${MAX_API_KEY_CHARS} printable ASCII characters without spaces`,
    );
  }
  if (
    typeof model !== 'string' ||
    model.length === 0 ||
    model.length > MAX_MODEL_CHARS ||
    !PRINTABLE_NO_SPACE.test(model)
  ) {
    throw new LlmConfigError(
      'model',
      `must be 1-${MAX_MODEL_CHARS} printable ASCII characters without spaces`,
    );
  }
  if (
    !Number.isInteger(timeoutMs) ||
    timeoutMs < LLM_TIMEOUT_BOUNDS_MS.min ||
    timeoutMs > LLM_TIMEOUT_BOUNDS_MS.max
  ) {
    throw new LlmConfigError(
      'timeoutMs',
      `must be an integer in ${LLM_TIMEOUT_BOUNDS_MS.min}..${LLM_TIMEOUT_BOUNDS_MS.max}`,
    );
  }
  return { apiKey, model, timeoutMs, baseUrl: checkBaseUrl(baseUrl) };
}

function checkBaseUrl(baseUrl: unknown): string {
  const reason = 'must be an absolute http(s) URL without credentials, query or fragment';
  if (typeof baseUrl !== 'string' || baseUrl.length > MAX_BASE_URL_CHARS || !URL.canParse(baseUrl))
    throw new LlmConfigError('baseUrl', reason);
  const url = new URL(baseUrl);
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    throw new LlmConfigError('baseUrl', reason);
  }
  return url.href.replace(/\/+$/, '');
}
