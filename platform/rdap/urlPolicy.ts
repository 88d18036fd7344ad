// Which URLs the RDAP client may ask: https anywhere, plain http only on the loopback interface
// (the devnet registry). Applied to bootstrap sources, base URLs and every redirect hop alike;
// outside development each hop is also held to public addresses (RdapAddressPolicy).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

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

/**
 * Whose addresses a lookup may reach on each hop (the base URL and every redirect). `development`:
 * the rule above (the devnet registry on loopback http). `public`, everywhere else: https only, to
 * a host that neither is nor resolves to a loopback, private, link-local or otherwise non-public
 * address, so a registry's redirect cannot point the service at its own network.
 */
export type RdapAddressPolicy = 'development' | 'public';

const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');

/** Whether an IP address (v4, v6, or v4-mapped v6) is outside the public internet. */
export function isNonPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return NON_PUBLIC.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return NON_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why `url` may not be asked under `policy`, or null; a host name is resolved and every address judged. */
export async function addressProblem(
  url: URL,
  policy: RdapAddressPolicy,
  resolve: (host: string) => Promise<readonly string[]> = resolveAll,
): Promise<string | null> {
  if (!isAllowedRdapUrl(url)) return 'not https (or loopback http)';
  if (policy === 'development') return null;
  if (url.protocol !== 'https:') return 'plain http outside development';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) !== 0 ? [host] : await resolve(host).catch(() => []);
  if (addresses.length === 0) return `${host} does not resolve`;
  if (addresses.some(isNonPublicAddress)) return `${host} is not a public address`;
  return null;
}

async function resolveAll(host: string): Promise<readonly string[]> {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
}
