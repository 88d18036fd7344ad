// check_domains: each domain's availability as its registry answers over RDAP (platform/rdap):
// registered → TAKEN, no such object → AVAILABLE, anything else → UNKNOWN with the reason. At most
// CHECK_CONCURRENCY lookups of one call run at once (the RDAP client caps all calls together too);
// definite answers are cached briefly (cache.ts). Availability is not a purchase or a reservation.
import type { DomainAvailability } from '../../../core/builder';
import type { DomainLookup, RdapClient } from '../../../platform/rdap';
import { domainCacheFor } from './cache';
import type { DomainToCheck } from './request';
import { CHECK_NOTE, type DomainCheck, type DomainCheckResult } from './result';

export { CHECK_NOTE, type DomainCheck, type DomainCheckResult } from './result';

/** Lookups of one call in flight at once. */
export const CHECK_CONCURRENCY = 8;

const STATUS_OF: Readonly<Record<DomainLookup['status'], DomainAvailability>> = {
  REGISTERED: 'TAKEN',
  NOT_REGISTERED: 'AVAILABLE',
  UNKNOWN: 'UNKNOWN',
};

/** `rdap` null: no registry configured, every domain UNKNOWN. Results in the order asked. */
export async function checkDomains(
  rdap: RdapClient | null,
  domains: readonly DomainToCheck[],
  now: () => Date,
): Promise<DomainCheckResult> {
  const results: DomainCheck[] = new Array(domains.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < domains.length) {
      const index = next;
      next += 1;
      results[index] = await checkOne(rdap, domains[index], now);
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(CHECK_CONCURRENCY, domains.length) }, () => worker()),
  );
  return { results, note: CHECK_NOTE };
}

async function checkOne(
  rdap: RdapClient | null,
  { domain, name }: DomainToCheck,
  now: () => Date,
): Promise<DomainCheck> {
  if (rdap === null)
    return {
      domain,
      name,
      status: 'UNKNOWN',
      registry: null,
      checkedAt: now().toISOString(),
      cached: false,
      reason: 'NOT_CONFIGURED',
      detail: 'no RDAP bootstrap is configured on this deployment; no registry was asked',
    };
  const cache = domainCacheFor(rdap);
  const hit = cache.get(domain, now().getTime());
  if (hit !== null) return { ...hit, name, cached: true };
  const lookup = await rdap.lookupDomain(domain);
  const check: DomainCheck = {
    domain: lookup.domain,
    name,
    status: STATUS_OF[lookup.status],
    registry: lookup.attempts === 0 ? null : lookup.source,
    checkedAt: lookup.checkedAt,
    cached: false,
    ...(lookup.reason === undefined ? {} : { reason: lookup.reason }),
    detail: lookup.detail,
    ...(lookup.retryAfterSeconds === undefined
      ? {}
      : { retryAfterSeconds: lookup.retryAfterSeconds }),
  };
  cache.put(check, now().getTime());
  return check;
}
