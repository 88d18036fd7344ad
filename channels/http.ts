// The one way adapters call an HTTP peer: a bounded time, no redirects followed (a redirect could
// carry a signed body elsewhere), a bounded response read, and transport failures turned into
// retryable ChannelDeliveryErrors that name only the peer's host, never a path or a token.
import type { ChannelKind } from './types';
import { ChannelDeliveryError } from './errors';

export type FetchLike = typeof fetch;

/** A peer slower than this is treated as down; the escalation worker retries later. */
export const DELIVERY_TIMEOUT_MS = 10_000;
export const MAX_DELIVERY_TIMEOUT_MS = 60_000;
/** Telegram and Slack answer in a few hundred bytes; webhook receivers are read only for status. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface PeerResponse {
  readonly status: number;
  readonly headers: Headers;
  /** At most MAX_RESPONSE_BYTES of the body, decoded as UTF-8. */
  readonly text: string;
}

export interface PeerPost {
  readonly kind: ChannelKind;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly fetch?: FetchLike;
  readonly timeoutMs?: number;
}

export async function postToPeer(post: PeerPost): Promise<PeerResponse> {
  const timeoutMs = post.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const fetchImpl = post.fetch ?? fetch;
  const host = hostOf(post.url);
  let response: Response;
  try {
    response = await fetchImpl(post.url, {
      method: 'POST',
      headers: post.headers,
      body: post.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    if (isTimeout(error)) {
      throw new ChannelDeliveryError(post.kind, `no answer from ${host} within ${timeoutMs} ms`, {
        retryable: true,
        reason: 'TIMEOUT',
      });
    }
    throw new ChannelDeliveryError(post.kind, `could not reach ${host} (${networkCode(error)})`, {
      retryable: true,
      reason: 'NETWORK',
      peerError: networkCode(error),
    });
  }
  const text = await readBounded(response, post.kind, host);
  return { status: response.status, headers: response.headers, text };
}

/** For adapter factories: a configured timeout must be whole milliseconds within the bound. */
export function checkTimeoutMs(kind: string, timeoutMs: number | undefined): void {
  if (timeoutMs === undefined) return;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_DELIVERY_TIMEOUT_MS) {
    throw new RangeError(`${kind} timeoutMs must be an integer in 1..${MAX_DELIVERY_TIMEOUT_MS}`);
  }
}

/** Retry-After in seconds when the peer gave a plain number, else null. */
export function retryAfterSeconds(headers: Headers): number | null {
  const value = headers.get('retry-after');
  if (value === null || !/^[0-9]{1,6}$/.test(value.trim())) return null;
  return Number(value.trim());
}

/** 5xx, 429 and 408 may pass if tried again; any other failure will not. */
export function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A peer's JSON answer when it is an object, else null (HTML error pages, truncated bodies). */
export function parseJsonObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'an unparseable URL';
  }
}

async function readBounded(response: Response, kind: ChannelKind, host: string): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = MAX_RESPONSE_BYTES - size;
      chunks.push(value.length > room ? value.subarray(0, room) : value);
      size += Math.min(value.length, room);
      if (size >= MAX_RESPONSE_BYTES) {
        await reader.cancel();
        break;
      }
    }
  } catch (error) {
    throw new ChannelDeliveryError(kind, `answer from ${host} broke off (${networkCode(error)})`, {
      retryable: true,
      reason: isTimeout(error) ? 'TIMEOUT' : 'NETWORK',
      status: response.status,
    });
  }
  return Buffer.concat(chunks).toString('utf8');
}

function isTimeout(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

/** A system error code such as ECONNREFUSED, never the error's message (which may quote a URL). */
function networkCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  const code = cause?.code ?? (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : 'network error';
}
