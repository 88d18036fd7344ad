// The short cache of registry answers: definite answers kept for DOMAIN_CACHE_TTL_MS, UNKNOWN never
// kept, the oldest entry evicted at the bound, one cache per RDAP client.
import type { RdapClient } from '../../../platform/rdap';
import {
  DOMAIN_CACHE_MAX_ENTRIES,
  DOMAIN_CACHE_TTL_MS,
  DomainCache,
  domainCacheFor,
} from './cache';
import type { DomainCheck } from './result';

function check(domain: string, status: DomainCheck['status']): DomainCheck {
  return {
    domain,
    name: null,
    status,
    registry: 'http://127.0.0.1/domain/x',
    checkedAt: '2026-01-01T00:00:00.000Z',
    cached: false,
    detail: 'test',
  };
}

describe('DomainCache', () => {
  it('keeps AVAILABLE and TAKEN until the TTL ends, and never UNKNOWN', () => {
    const cache = new DomainCache();
    cache.put(check('a.test', 'AVAILABLE'), 1_000);
    cache.put(check('b.test', 'TAKEN'), 1_000);
    cache.put(check('c.test', 'UNKNOWN'), 1_000);
    expect(cache.get('a.test', 1_000 + DOMAIN_CACHE_TTL_MS - 1)?.status).toBe('AVAILABLE');
    expect(cache.get('b.test', 1_000)?.status).toBe('TAKEN');
    expect(cache.get('c.test', 1_000)).toBeNull();
    expect(cache.get('a.test', 1_000 + DOMAIN_CACHE_TTL_MS)).toBeNull();
  });

  it('evicts the oldest entry once full', () => {
    const cache = new DomainCache();
    for (let index = 0; index <= DOMAIN_CACHE_MAX_ENTRIES; index += 1)
      cache.put(check(`d${index}.test`, 'AVAILABLE'), 0);
    expect(cache.get('d0.test', 0)).toBeNull();
    expect(cache.get('d1.test', 0)).not.toBeNull();
    expect(cache.get(`d${DOMAIN_CACHE_MAX_ENTRIES}.test`, 0)).not.toBeNull();
  });

  it('is one cache per RDAP client', () => {
    const first = {} as RdapClient;
    const second = {} as RdapClient;
    expect(domainCacheFor(first)).toBe(domainCacheFor(first));
    expect(domainCacheFor(first)).not.toBe(domainCacheFor(second));
  });
});
