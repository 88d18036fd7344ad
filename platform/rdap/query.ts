// One RDAP request attempt (RFC 7480): GET with Accept application/rdap+json, redirects followed
// by hand up to MAX_REDIRECTS, each hop held to the URL policy, all of it (answer body included)
// under one timeout. Says whether it got an HTTP answer, was refused, or failed in transport.
import { AnswerTooLargeError, isTimeout, networkCode, readBoundedText } from './http';
import { MAX_ANSWER_BYTES, MAX_REDIRECTS } from './limits';
import { addressProblem, parseAllowedRdapUrl, type RdapAddressPolicy } from './urlPolicy';

export const RDAP_MEDIA_TYPE = 'application/rdap+json';
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export type QueryResult =
  /** The final answer; `text` is read only for 200 (the one answer whose body matters). */
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly headers: Headers;
      readonly text: string;
    }
  /** The client declined to go on; asking again would end the same way. */
  | {
      readonly kind: 'refused';
      readonly reason: 'REDIRECT_REFUSED' | 'TOO_MANY_REDIRECTS' | 'ANSWER_TOO_LARGE';
      readonly detail: string;
    }
  /** No HTTP answer: refused or reset connection, or the time ran out. The only kind worth retrying. */
  | { readonly kind: 'transport'; readonly reason: 'TIMEOUT' | 'NETWORK'; readonly detail: string };

export async function queryRdap(
  url: string,
  timeoutMs: number,
  policy: RdapAddressPolicy = 'public',
): Promise<QueryResult> {
  const signal = AbortSignal.timeout(timeoutMs);
  let current = url;
  try {
    for (let hop = 0; ; hop += 1) {
      // Every hop, the first included: the registry's base URL and each redirect it answers.
      const problem = await addressProblem(new URL(current), policy);
      if (problem !== null)
        return { kind: 'refused', reason: 'REDIRECT_REFUSED', detail: `refused ${problem}` };
      const response = await fetch(current, {
        headers: { accept: RDAP_MEDIA_TYPE },
        redirect: 'manual',
        signal,
      });
      const location = response.headers.get('location');
      if (!REDIRECT_STATUSES.has(response.status) || location === null) {
        const text =
          response.status === 200
            ? await readBoundedText(response, MAX_ANSWER_BYTES)
            : await discard(response);
        return { kind: 'answer', status: response.status, headers: response.headers, text };
      }
      await discard(response);
      const next = parseAllowedRdapUrl(location, current);
      if (next === null)
        return {
          kind: 'refused',
          reason: 'REDIRECT_REFUSED',
          detail: 'redirected to a URL that is not https (or loopback http)',
        };
      if (hop + 1 > MAX_REDIRECTS)
        return {
          kind: 'refused',
          reason: 'TOO_MANY_REDIRECTS',
          detail: `more than ${MAX_REDIRECTS} redirects`,
        };
      current = next.href;
    }
  } catch (error) {
    if (error instanceof AnswerTooLargeError)
      return { kind: 'refused', reason: 'ANSWER_TOO_LARGE', detail: error.message };
    if (isTimeout(error) || signal.aborted)
      return {
        kind: 'transport',
        reason: 'TIMEOUT',
        detail: `no complete answer within ${timeoutMs} ms`,
      };
    return {
      kind: 'transport',
      reason: 'NETWORK',
      detail: `could not reach ${hostOf(current)} (${networkCode(error)})`,
    };
  }
}

async function discard(response: Response): Promise<string> {
  await response.body?.cancel();
  return '';
}

function hostOf(url: string): string {
  return new URL(url).host;
}
