// Reads a chat-completions answer strictly: the envelope, the first choice's message, its content
// as JSON `{names: [...]}`, and the names through the builder-name rule (trimmed, lowercased,
// deduplicated, at most `count`). Failures carry a reason code and our own words only, never a
// quote of the answer.
import {
  distinctBuilderNames,
  NAME_MODEL_FAILURE_REASONS,
  type NameModelAnswer,
  type NameModelFailureReason,
} from '../../core/builder';

/** The port's failure reasons (core/builder/nameModel.ts), under this client's names. */
export const LLM_FAILURE_REASONS = NAME_MODEL_FAILURE_REASONS;
export type LlmFailureReason = NameModelFailureReason;
export type LlmNamesResult = NameModelAnswer;

const MODEL_ID = /^[\x21-\x7e]{1,200}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function malformed(detail: string): LlmNamesResult {
  return { ok: false, reason: 'MALFORMED_RESPONSE', detail };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `askedModel` names the answer when the envelope does not say which model answered. */
export function readNamesAnswer(body: string, count: number, askedModel: string): LlmNamesResult {
  const envelope = parseJson(body);
  if (!isRecord(envelope)) return malformed('the answer is not a JSON object');
  const choice = Array.isArray(envelope.choices) ? envelope.choices[0] : undefined;
  const message = isRecord(choice) ? choice.message : undefined;
  if (!isRecord(message)) return malformed('the answer has no choices[0].message');
  if (typeof message.refusal === 'string' && message.refusal.length > 0)
    return { ok: false, reason: 'REFUSED', detail: 'the model refused the request' };
  if (typeof message.content !== 'string')
    return malformed('choices[0].message.content is not a string');
  const content = parseJson(message.content);
  if (!isRecord(content) || !Array.isArray(content.names))
    return malformed('the message is not JSON of the form {"names": [...]}');
  const names = distinctBuilderNames(content.names, count);
  if (names.length === 0)
    return {
      ok: false,
      reason: 'NO_VALID_NAMES',
      detail: 'no name in the answer is a valid DNS label',
    };
  const model =
    typeof envelope.model === 'string' && MODEL_ID.test(envelope.model)
      ? envelope.model
      : askedModel;
  return { ok: true, model, names };
}
