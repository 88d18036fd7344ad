// The launch pack's settings from the environment: the optional language model (LLM_API_KEY,
// LLM_BASE_URL, LLM_MODEL, LLM_TIMEOUT_MS; all three of the first or none) and the TLDs checked when
// a request names none (BUILDER_DEFAULT_TLDS). Problems name the variable, never the key's value.
import {
  checkLlmOptions,
  DEFAULT_LLM_TIMEOUT_MS,
  LLM_TIMEOUT_BOUNDS_MS,
  LlmConfigError,
} from '../llm';
import type { EnvReader } from './envReader';
import type { BuilderConfig } from './sections';

const LLM_VARIABLES = {
  apiKey: 'LLM_API_KEY',
  baseUrl: 'LLM_BASE_URL',
  model: 'LLM_MODEL',
} as const;
const MAX_DEFAULT_TLDS = 10;
const TLD = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function readBuilder(read: EnvReader): BuilderConfig {
  return { llm: readLlm(read), defaultTlds: readDefaultTlds(read) };
}

function readLlm(read: EnvReader): BuilderConfig['llm'] {
  const timeoutMs = read.integer(
    'LLM_TIMEOUT_MS',
    DEFAULT_LLM_TIMEOUT_MS,
    LLM_TIMEOUT_BOUNDS_MS.min,
    LLM_TIMEOUT_BOUNDS_MS.max,
  );
  const apiKey = read.raw(LLM_VARIABLES.apiKey);
  const baseUrl = read.raw(LLM_VARIABLES.baseUrl);
  const model = read.raw(LLM_VARIABLES.model);
  const set = [apiKey, baseUrl, model].filter((value) => value !== undefined).length;
  if (set === 0) return null;
  if (set < 3) {
    read.problem(
      LLM_VARIABLES.apiKey,
      'LLM_API_KEY, LLM_BASE_URL and LLM_MODEL are set together or not at all',
    );
    return null;
  }
  try {
    return checkLlmOptions({ apiKey: apiKey!, baseUrl: baseUrl!, model: model!, timeoutMs });
  } catch (error) {
    if (!(error instanceof LlmConfigError) || error.field === 'timeoutMs') throw error;
    read.problem(LLM_VARIABLES[error.field], error.message.replace(/^LLM \w+ /, ''));
    return null;
  }
}

/** null: not set (the devnet registry's TLDs on the embedded devnet, else the builder's defaults). */
function readDefaultTlds(read: EnvReader): readonly string[] | null {
  if (read.raw('BUILDER_DEFAULT_TLDS') === undefined) return null;
  const tlds = read.list('BUILDER_DEFAULT_TLDS').map((tld) => tld.toLowerCase());
  const valid =
    tlds.length >= 1 &&
    tlds.length <= MAX_DEFAULT_TLDS &&
    new Set(tlds).size === tlds.length &&
    tlds.every((tld) => TLD.test(tld) && !/^[0-9]+$/.test(tld));
  if (valid) return tlds;
  read.problem(
    'BUILDER_DEFAULT_TLDS',
    `must be 1-${MAX_DEFAULT_TLDS} distinct top-level domain labels, comma-separated (e.g. com,io,ai)`,
  );
  return null;
}
