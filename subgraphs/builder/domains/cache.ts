// A short cache of registry answers, one per RDAP client (so per process and registry setup): a
// burst of checks for the same names asks the registry once. Only definite answers (AVAILABLE,
// TAKEN) are kept, for DOMAIN_CACHE_TTL_MS; an UNKNOWN is asked again next time. Bounded in size,
// oldest entry evicted first.
import type { RdapClient } from '../../../platform/rdap';
import type { DomainCheck } from './result';

export const DOMAIN_CACHE_TTL_MS = 60_000;
export const DOMAIN_CACHE_MAX_ENTRIES = 10_000;

interface Entry {
  readonly check: DomainCheck;
  readonly expiresAtMs: number;
}

export class DomainCache {
  private readonly entries = new Map<string, Entry>();

  get(domain: string, nowMs: number): DomainCheck | null {
    const entry = this.entries.get(domain);
    if (entry === undefined) return null;
    if (entry.expiresAtMs <= nowMs) {
      this.entries.delete(domain);
      return null;
    }
    return entry.check;
  }

  put(check: DomainCheck, nowMs: number): void {
    if (check.status === 'UNKNOWN') return;
    this.entries.delete(check.domain);
    if (this.entries.size >= DOMAIN_CACHE_MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(check.domain, { check, expiresAtMs: nowMs + DOMAIN_CACHE_TTL_MS });
  }
}

const caches = new WeakMap<RdapClient, DomainCache>();

/** The cache of this client's answers. */
export function domainCacheFor(rdap: RdapClient): DomainCache {
  let cache = caches.get(rdap);
  if (cache === undefined) {
    cache = new DomainCache();
    caches.set(rdap, cache);
  }
  return cache;
}
