// Where an owner's webhook endpoint may point (DECISIONS "Webhook endpoints"): outside development
// an https URL without credentials whose host is a name or a public address, never a loopback,
// private, link-local or otherwise internal one, so the service can never be aimed at its own
// network. Development (the service's own public URL is plain http on loopback) also allows http
// and loopback, for local receivers. Pure: literal addresses only; names are checked again
// against what they resolve to when a delivery is sent.

export const MAX_ENDPOINT_URL_CHARS = 2048;

const INTERNAL_NAMES = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)$/i;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** True for an IPv4 literal in a range no public webhook lives in. */
export function isInternalIpv4(host: string): boolean {
  const match = IPV4.exec(host);
  if (match === null) return false;
  const [a, b] = [Number(match[1]), Number(match[2])];
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    a >= 224
  );
}

/** True for an IPv6 literal (without brackets) that is loopback, unspecified, ULA, link-local or a mapped internal IPv4. */
export function isInternalIpv6(host: string): boolean {
  const text = host.toLowerCase();
  if (!text.includes(':')) return false;
  if (text === '::' || text === '::1') return true;
  if (/^f[cd][0-9a-f]{0,2}:/.test(text) || /^fe[89ab][0-9a-f]?:/.test(text)) return true;
  const mapped = /^::ffff:(.+)$/.exec(text);
  if (mapped === null) return false;
  const tail = mapped[1]!;
  if (IPV4.test(tail)) return isInternalIpv4(tail);
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(tail);
  if (hex === null) return true;
  const high = parseInt(hex[1]!, 16);
  const low = parseInt(hex[2]!, 16);
  return isInternalIpv4(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
}

/** True when `hostname` (as URL gives it, IPv6 in brackets) names an internal address or name. */
export function isInternalHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return (
    INTERNAL_NAMES.test(host) ||
    isInternalIpv4(host) ||
    isInternalIpv6(host) ||
    (!host.includes('.') && !host.includes(':'))
  );
}

/** The URL normalised, or why it may not be an endpoint. */
export function checkEndpointUrl(
  text: string,
  options: { readonly development: boolean },
): { readonly url: string } | { readonly problem: string } {
  if (typeof text !== 'string' || text.length > MAX_ENDPOINT_URL_CHARS)
    return { problem: `a URL of at most ${MAX_ENDPOINT_URL_CHARS} characters` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: 'an absolute URL' };
  }
  if (url.username !== '' || url.password !== '') return { problem: 'a URL without credentials' };
  if (url.hash !== '') return { problem: 'a URL without a fragment' };
  if (options.development) {
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return { problem: 'an http(s) URL' };
    return { url: url.toString() };
  }
  if (url.protocol !== 'https:') return { problem: 'an https URL' };
  if (isInternalHost(url.hostname))
    return { problem: 'a public host, never a loopback, private or internal address' };
  return { url: url.toString() };
}

/** A deployment whose own public URL is plain http on a loopback host is a development one. */
export function isDevelopmentPublicUrl(publicUrl: string | null): boolean {
  if (publicUrl === null) return false;
  try {
    const url = new URL(publicUrl);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return (
      url.protocol === 'http:' && (host === 'localhost' || host === '::1' || /^127\./.test(host))
    );
  } catch {
    return false;
  }
}
