// Just enough MIME to read what the SMTP sink receives: unfolded headers with RFC 2047 encoded
// words decoded, and the first text/plain body (quoted-printable, base64 or plain, any charset
// TextDecoder knows), looking into multipart bodies to a bounded depth. Not a general mail parser.
export const MAX_MULTIPART_DEPTH = 3;
export const MAX_MULTIPART_PARTS = 32;

export interface MimeEntity {
  /** Lowercased header name to its first value, unfolded and decoded. */
  readonly headers: Readonly<Record<string, string>>;
  /** The first text/plain body, decoded, with CRLF turned into LF; null when there is none. */
  readonly text: string | null;
}

/** Bytes, not text: headers and bodies are decoded only once their charset is known. */
export function parseMimeMessage(raw: Buffer, depth = 0): MimeEntity {
  const source = raw.toString('latin1');
  const split = /\r?\n\r?\n/.exec(source);
  const headerText = split === null ? source : source.slice(0, split.index);
  const bodyText = split === null ? '' : source.slice(split.index + split[0].length);
  const headers = parseHeaders(headerText);
  return { headers, text: textOf(headers, bodyText, depth) };
}

function parseHeaders(headerText: string): Record<string, string> {
  const headers: Record<string, string> = {};
  const unfolded = headerText.replace(/\r?\n[ \t]+/g, ' ');
  for (const line of unfolded.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!(name in headers)) headers[name] = decodeEncodedWords(line.slice(colon + 1).trim());
  }
  return headers;
}

function textOf(headers: Record<string, string>, body: string, depth: number): string | null {
  const contentType = parseContentType(headers['content-type'] ?? 'text/plain');
  if (contentType.type.startsWith('multipart/')) {
    const boundary = contentType.params.boundary;
    if (boundary === undefined || depth >= MAX_MULTIPART_DEPTH) return null;
    for (const part of splitMultipart(body, boundary)) {
      const text = parseMimeMessage(Buffer.from(part, 'latin1'), depth + 1).text;
      if (text !== null) return text;
    }
    return null;
  }
  if (contentType.type !== 'text/plain') return null;
  const bytes = decodeTransfer(headers['content-transfer-encoding'] ?? '7bit', body);
  return decodeCharset(bytes, contentType.params.charset ?? 'utf-8').replace(/\r\n/g, '\n');
}

function parseContentType(value: string): { type: string; params: Record<string, string> } {
  const [type, ...rest] = value.split(';');
  const params: Record<string, string> = {};
  for (const param of rest) {
    const match = /^\s*([A-Za-z0-9_-]+)\s*=\s*"?([^"]*)"?\s*$/.exec(param);
    if (match) params[match[1].toLowerCase()] = match[2];
  }
  return { type: type.trim().toLowerCase(), params };
}

function splitMultipart(body: string, boundary: string): string[] {
  const parts = body.split(new RegExp(`(?:^|\\r?\\n)--${escapeRegExp(boundary)}`));
  // parts[0] is the preamble; a part starting with "--" is the closing delimiter and the epilogue.
  return parts
    .slice(1)
    .filter((part) => !part.startsWith('--'))
    .slice(0, MAX_MULTIPART_PARTS)
    .map((part) => part.replace(/^[ \t]*\r?\n/, ''));
}

function decodeTransfer(encoding: string, body: string): Buffer {
  switch (encoding.trim().toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
    case 'quoted-printable':
      return decodeQuotedPrintable(body.replace(/[ \t]+(\r?\n)/g, '$1').replace(/=\r?\n/g, ''));
    default:
      return Buffer.from(body, 'latin1');
  }
}

function decodeQuotedPrintable(text: string): Buffer {
  return Buffer.from(
    text.replace(/=([0-9A-Fa-f]{2})/g, (_match, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    ),
    'latin1',
  );
}

function decodeCharset(bytes: Buffer, charset: string): string {
  try {
    return new TextDecoder(charset.trim().toLowerCase()).decode(bytes);
  } catch {
    return bytes.toString('utf8');
  }
}

/** RFC 2047 `=?charset?B|Q?text?=`; whitespace between two adjacent encoded words is dropped. */
function decodeEncodedWords(value: string): string {
  const header = Buffer.from(value, 'latin1').toString('utf8');
  return header
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(
      /=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g,
      (_match, charset: string, encoding: string, text: string) => {
        const bytes =
          encoding.toUpperCase() === 'B'
            ? Buffer.from(text, 'base64')
            : decodeQuotedPrintable(text.replace(/_/g, ' '));
        return decodeCharset(bytes, charset);
      },
    );
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
