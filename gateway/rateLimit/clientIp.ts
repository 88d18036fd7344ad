// Whose per-IP bucket a request uses: the client address Express reports (the socket's, or the
// first untrusted X-Forwarded-For hop once TRUST_PROXY names the proxies). An IPv4-mapped IPv6
// address is its IPv4 address; any other IPv6 address counts as its /64, since one end site
// usually holds a whole /64 and could otherwise take a fresh bucket per request.
import { isIPv4, isIPv6 } from 'node:net';

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** The eight 16-bit groups of an IPv6 address (zone dropped, embedded IPv4 split), or null. */
export function ipv6Groups(address: string): number[] | null {
  const bare = address.split('%')[0]!;
  if (!isIPv6(bare)) return null;
  const halves = bare.split('::');
  const parse = (part: string): number[] => {
    if (part === '') return [];
    return part.split(':').flatMap((group) => {
      if (!group.includes('.')) return [parseInt(group, 16)];
      const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
      return [(a << 8) | b, (c << 8) | d];
    });
  };
  const head = parse(halves[0]!);
  const tail = halves.length > 1 ? parse(halves[1]!) : [];
  const zeros = halves.length > 1 ? 8 - head.length - tail.length : 0;
  return [...head, ...new Array<number>(zeros).fill(0), ...tail];
}

/** The per-IP bucket id of a client address: `203.0.113.7`, or `2001:db8:1:2::/64`. */
export function clientBucketId(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  const mapped = MAPPED_IPV4.exec(address);
  if (mapped && isIPv4(mapped[1]!)) return mapped[1]!;
  if (isIPv4(address)) return address;
  const groups = ipv6Groups(address);
  if (groups === null) return 'unknown';
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}
