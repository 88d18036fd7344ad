// Which URLs the RDAP client may ask: https anywhere, plain http only on the loopback interface
// (the devnet registry). Applied to bootstrap sources, base URLs and every redirect hop alike.
const LOOPBACK_HOSTNAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

export function isAllowedRdapUrl(url: URL): boolean {
  if (url.username !== '' || url.password !== '') return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && LOOPBACK_HOSTNAMES.has(url.hostname);
}

/** The parsed URL when `text` is an allowed RDAP URL, else null. */
export function parseAllowedRdapUrl(text: string, base?: string): URL | null {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    return null;
  }
  return isAllowedRdapUrl(url) ? url : null;
}
