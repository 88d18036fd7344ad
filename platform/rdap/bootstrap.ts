// RFC 9224 DNS bootstrap: parses the registry file (`{version, publication, services: [[labels],
// [base URLs]]}`), picks the registry for a name by the longest matching suffix (https preferred),
// and reads how long a fetched copy stays fresh from its HTTP caching headers, within named bounds.
import { DEFAULT_BOOTSTRAP_TTL_MS, MAX_BOOTSTRAP_TTL_MS, MIN_BOOTSTRAP_TTL_MS } from './limits';
import { normaliseDomainName, suffixesOf } from './names';
import { parseAllowedRdapUrl } from './urlPolicy';

export interface DnsBootstrap {
  readonly publication: string | null;
  /** Normalised label (TLD or longer suffix) → its base URLs, each ending with "/", best first. */
  readonly services: ReadonlyMap<string, readonly string[]>;
}

export class BootstrapFormatError extends Error {
  constructor(reason: string) {
    super(`RDAP bootstrap file: ${reason}`);
    this.name = 'BootstrapFormatError';
  }
}

/** Validates a parsed dns.json. Entries with no allowed base URL are left out (no server known). */
export function parseDnsBootstrap(json: unknown): DnsBootstrap {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new BootstrapFormatError('not a JSON object');
  const { version, publication, services } = json as Record<string, unknown>;
  if (version !== '1.0')
    throw new BootstrapFormatError(`version ${JSON.stringify(version)} is not "1.0"`);
  if (!Array.isArray(services)) throw new BootstrapFormatError('services is not an array');
  const map = new Map<string, string[]>();
  services.forEach((service: unknown, index) => {
    if (
      !Array.isArray(service) ||
      service.length < 2 ||
      !Array.isArray(service[0]) ||
      !Array.isArray(service[1])
    ) {
      throw new BootstrapFormatError(`services[${index}] is not [[labels], [urls]]`);
    }
    const urls = preferHttps(service[1]);
    if (urls.length === 0) return;
    for (const label of service[0] as unknown[]) {
      const key = bootstrapLabel(label);
      if (key !== null && !map.has(key)) map.set(key, urls);
    }
  });
  return { publication: typeof publication === 'string' ? publication : null, services: map };
}

/** The base URL of the registry for `ldhName` (already normalised), or null when no entry matches. */
export function findRdapBaseUrl(bootstrap: DnsBootstrap, ldhName: string): string | null {
  for (const suffix of suffixesOf(ldhName)) {
    const urls = bootstrap.services.get(suffix);
    if (urls !== undefined) return urls[0];
  }
  return null;
}

/**
 * How long a copy fetched at `now` stays fresh: Cache-Control max-age (less Age), else Expires
 * (against the answer's Date, or `now`), else the default; no-store and no-cache mean the minimum.
 * Always within MIN_BOOTSTRAP_TTL_MS..MAX_BOOTSTRAP_TTL_MS.
 */
export function bootstrapTtlMs(headers: Headers, now: Date): number {
  const clamp = (ms: number) => Math.min(MAX_BOOTSTRAP_TTL_MS, Math.max(MIN_BOOTSTRAP_TTL_MS, ms));
  const cacheControl = (headers.get('cache-control') ?? '').toLowerCase();
  if (/(?:^|,)\s*(?:no-store|no-cache)\s*(?:,|=|$)/.test(cacheControl)) return MIN_BOOTSTRAP_TTL_MS;
  const maxAge = /(?:^|,)\s*max-age\s*=\s*"?([0-9]{1,10})"?\s*(?:,|$)/.exec(cacheControl);
  if (maxAge !== null) {
    const ageSeconds = Number(/^[0-9]{1,10}$/.exec(headers.get('age')?.trim() ?? '')?.[0] ?? 0);
    return clamp((Number(maxAge[1]) - ageSeconds) * 1000);
  }
  const expires = headers.get('expires');
  if (expires !== null) {
    const expiresAt = Date.parse(expires);
    const dateHeader = Date.parse(headers.get('date') ?? '');
    const reference = Number.isNaN(dateHeader) ? now.getTime() : dateHeader;
    // An unparseable Expires (often "0" or "-1") means already expired (RFC 9111 §5.3).
    return clamp(Number.isNaN(expiresAt) ? 0 : expiresAt - reference);
  }
  return DEFAULT_BOOTSTRAP_TTL_MS;
}

function bootstrapLabel(label: unknown): string | null {
  if (typeof label !== 'string') return null;
  // A bare TLD is not a domain name on its own; normalise it as one to get its A-label form.
  try {
    return normaliseDomainName(`x.${label}`).slice(2);
  } catch {
    return null;
  }
}

function preferHttps(urls: unknown[]): string[] {
  const allowed = urls
    .filter((url): url is string => typeof url === 'string')
    .map((text) => parseAllowedRdapUrl(text))
    .filter((url): url is URL => url !== null && url.search === '' && url.hash === '')
    .map((url) => (url.href.endsWith('/') ? url.href : `${url.href}/`));
  return [
    ...allowed.filter((url) => url.startsWith('https:')),
    ...allowed.filter((url) => url.startsWith('http:')),
  ];
}
