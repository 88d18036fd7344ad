// The port a language model that suggests names fills (platform/llm's client is the one adapter):
// the question, the answer and its failure reasons, as types only. Kept here, below every layer,
// so the subgraph kit can carry a model to the builder without any money path's imports reaching
// the model client (test/architecture/noModelOnMoneyPath.test.ts).
import type { NameStyle } from './fallbackNames';

export const NAME_MODEL_FAILURE_REASONS = [
  'TIMEOUT',
  'NETWORK',
  'AUTH_REJECTED',
  'RATE_LIMITED',
  'HTTP_ERROR',
  'RESPONSE_TOO_LARGE',
  'MALFORMED_RESPONSE',
  'REFUSED',
  'NO_VALID_NAMES',
] as const;
export type NameModelFailureReason = (typeof NAME_MODEL_FAILURE_REASONS)[number];

export interface NamesQuestion {
  readonly idea: string;
  readonly count: number;
  readonly style: NameStyle;
}

export type NameModelAnswer =
  | { readonly ok: true; readonly model: string; readonly names: readonly string[] }
  | { readonly ok: false; readonly reason: NameModelFailureReason; readonly detail: string };

export interface NameModel {
  /** The configured model id (not secret). */
  readonly model: string;
  /** Names for a validated question; never throws (a failure is an answer). */
  suggestNames(question: NamesQuestion): Promise<NameModelAnswer>;
}
