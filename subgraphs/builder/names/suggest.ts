// suggest_names: names from the configured model, or the seeded fallback when there is none or it
// fails (platform/llm suggestNames); the answer says which source produced them and, for the
// fallback, why. The model only ever names things: nothing here touches money.
import type { SuggestNamesInput } from '../../../core/builder';
import { suggestNames, type NameSuggestions } from '../../../platform/llm';
import type { BuilderServices } from '../../kit';

export interface SuggestNamesAnswer {
  readonly idea: string;
  readonly style: SuggestNamesInput['style'];
  readonly count: number;
  readonly source: NameSuggestions['source'];
  /** The model that answered (source "model"). */
  readonly model?: string;
  /** Why the fallback answered (source "fallback"): NOT_CONFIGURED or the model's failure. */
  readonly fallbackReason?: string;
  readonly names: readonly string[];
}

export async function suggestNamesFor(
  services: BuilderServices,
  input: SuggestNamesInput,
): Promise<SuggestNamesAnswer> {
  const { idea, count, style } = input;
  const answer = await suggestNames(idea, { count, style }, services.nameModel);
  const base = { idea, style, count, source: answer.source, names: answer.names };
  return answer.source === 'model'
    ? { ...base, model: answer.model }
    : { ...base, fallbackReason: answer.fallbackReason };
}
