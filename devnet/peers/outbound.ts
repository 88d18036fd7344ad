// How a stand-in calls back into the service (Telegram updates, Slack interactions): one POST with
// a bounded time, to loopback addresses only, answering the HTTP status the service gave.
export const OUTBOUND_TIMEOUT_MS = 10_000;
const LOOPBACK_HOSTNAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

export function isLoopbackHttpUrl(text: unknown): text is string {
  if (typeof text !== 'string') return false;
  try {
    const url = new URL(text);
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      LOOPBACK_HOSTNAMES.has(url.hostname)
    );
  } catch {
    return false;
  }
}

export async function postToService(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<number> {
  if (!isLoopbackHttpUrl(url)) throw new RangeError('devnet stand-ins call loopback URLs only');
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(OUTBOUND_TIMEOUT_MS),
  });
  await response.arrayBuffer();
  return response.status;
}
