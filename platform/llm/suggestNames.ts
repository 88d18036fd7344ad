// suggest_names end to end: the language model when one is configured and answers validly,
// otherwise the deterministic fallback generator; the answer says which source produced the names
// and, for the fallback, why. Never throws for a validated input.
import { fallbackNames, type NameModel, type NameStyle } from '../../core/builder';
import type { LlmFailureReason } from './answer';

export type FallbackReason = 'NOT_CONFIGURED' | LlmFailureReason;

export type NameSuggestions =
  | { readonly source: 'model'; readonly model: string; readonly names: readonly string[] }
  | {
      readonly source: 'fallback';
      readonly names: readonly string[];
      readonly fallbackReason: FallbackReason;
    };

export interface SuggestNamesOptions {
  /** 1-20 (validated by validateSuggestNamesInput). */
  readonly count: number;
  readonly style: NameStyle;
  /** The fallback generator's seed; default 0. */
  readonly seed?: number;
}

/** `llm` (an LlmClient, or any NameModel) is null when no model is configured. A model answer holds 1..count names, the fallback exactly count. */
export async function suggestNames(
  idea: string,
  options: SuggestNamesOptions,
  llm: NameModel | null,
): Promise<NameSuggestions> {
  const fallback = (fallbackReason: FallbackReason): NameSuggestions => ({
    source: 'fallback',
    names: fallbackNames(idea, { count: options.count, style: options.style, seed: options.seed }),
    fallbackReason,
  });
  if (llm === null) return fallback('NOT_CONFIGURED');
  const answer = await llm.suggestNames({ idea, count: options.count, style: options.style });
  return answer.ok
    ? { source: 'model', model: answer.model, names: answer.names }
    : fallback(answer.reason);
}
