// An OpenAI-compatible chat-completions client that asks for names: one POST to
// {baseUrl}/chat/completions, bounded by a timeout and a response size, no redirects followed and
// no retries (a caller falls back instead). It never throws: every failure is {ok:false, reason}.
// The key lives in this closure only and is sent in the Authorization header, nowhere else.
import type { NameModel } from '../../core/builder';
import { AnswerTooLargeError, isTimeout, networkCode, readBoundedText } from '../rdap/http';
import { readNamesAnswer, type LlmNamesResult } from './answer';
import { checkLlmOptions, MAX_LLM_RESPONSE_BYTES, type LlmOptions } from './options';
import { chatCompletionRequest, type NamesQuestion } from './prompt';

/** The name-model port (core/builder/nameModel.ts) over an OpenAI-compatible API. */
export interface LlmClient extends NameModel {
  /** Names for a validated question (idea 1-500 characters, count 1-20). */
  suggestNames(question: NamesQuestion): Promise<LlmNamesResult>;
}

/** Throws LlmConfigError on bad options (at start-up); the calls themselves never throw. */
export function createLlmClient(options: LlmOptions): LlmClient {
  const { apiKey, baseUrl, model, timeoutMs } = checkLlmOptions(options);
  const endpoint = `${baseUrl}/chat/completions`;

  const post = async (question: NamesQuestion): Promise<LlmNamesResult> => {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify(chatCompletionRequest(model, question)),
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) {
      // The error body is not read: a server may quote the request, key included.
      await response.body?.cancel().catch(() => undefined);
      return statusFailure(response.status);
    }
    const body = await readBoundedText(response, MAX_LLM_RESPONSE_BYTES);
    return readNamesAnswer(body, question.count, model);
  };

  return {
    model,
    async suggestNames(question) {
      try {
        return await post(question);
      } catch (error) {
        return transportFailure(error, timeoutMs);
      }
    },
  };
}

function statusFailure(status: number): LlmNamesResult {
  if (status === 401 || status === 403)
    return { ok: false, reason: 'AUTH_REJECTED', detail: `HTTP ${status}: the key was refused` };
  if (status === 429) return { ok: false, reason: 'RATE_LIMITED', detail: 'HTTP 429' };
  return { ok: false, reason: 'HTTP_ERROR', detail: `HTTP ${status}` };
}

/** By error class and system code only: a transport error's message may quote the URL or headers. */
function transportFailure(error: unknown, timeoutMs: number): LlmNamesResult {
  if (error instanceof AnswerTooLargeError)
    return {
      ok: false,
      reason: 'RESPONSE_TOO_LARGE',
      detail: `the answer is larger than ${error.maxBytes} bytes`,
    };
  if (isTimeout(error))
    return { ok: false, reason: 'TIMEOUT', detail: `no complete answer within ${timeoutMs} ms` };
  return { ok: false, reason: 'NETWORK', detail: networkCode(error) };
}
