// The HTTP pieces the RDAP client shares: reading an answer within a byte bound, and telling a
// transport failure (no HTTP answer: refused, reset, timed out) apart, by name and system code only
// (an error's message may quote a URL).

export class AnswerTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the answer is larger than ${maxBytes} bytes`);
    this.name = 'AnswerTooLargeError';
  }
}

/** The body as UTF-8, or AnswerTooLargeError past `maxBytes`; a broken stream rejects as fetch does. */
export async function readBoundedText(response: Response, maxBytes: number): Promise<string> {
  if (response.body === null) return '';
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body.cancel();
    throw new AnswerTooLargeError(maxBytes);
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel();
      throw new AnswerTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function isTimeout(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

/** A system or undici code such as ECONNREFUSED or UND_ERR_SOCKET, else "network error". */
export function networkCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  const code = cause?.code ?? (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : 'network error';
}
