// RFC 9083 domain lookups: is a name registered, according to the registry the bootstrap names for
// it? 200 with a domain object → REGISTERED, 404 → NOT_REGISTERED, anything else → UNKNOWN with a
// reason. Only transport failures are retried (a bounded number of times); requests share a concurrency cap.
import { setTimeout as sleep } from 'node:timers/promises';
import { findRdapBaseUrl } from './bootstrap';
import { BootstrapCache, BootstrapUnavailableError } from './bootstrapCache';
import {
  DEFAULT_LOOKUP_TIMEOUT_MS,
  DEFAULT_MAX_CONCURRENT_LOOKUPS,
  DEFAULT_TRANSPORT_RETRIES,
  MAX_CONCURRENT_LOOKUPS,
  MAX_LOOKUP_TIMEOUT_MS,
  MAX_TRANSPORT_RETRIES,
  MAX_WAITING_LOOKUPS,
  MIN_LOOKUP_TIMEOUT_MS,
  RETRY_BACKOFF_MS,
} from './limits';
import { normaliseDomainName } from './names';
import { queryRdap, type QueryResult } from './query';
import type { RdapAddressPolicy } from './urlPolicy';
import { Semaphore } from '../semaphore';

export type DomainRegistration = 'REGISTERED' | 'NOT_REGISTERED' | 'UNKNOWN';

/** Why a lookup is UNKNOWN. */
export type RdapFailureReason =
  | 'BOOTSTRAP_UNAVAILABLE'
  | 'NO_RDAP_SERVER'
  | 'TIMEOUT'
  | 'NETWORK'
  | 'RATE_LIMITED'
  | 'SERVER_ERROR'
  | 'UNEXPECTED_STATUS'
  | 'MALFORMED_ANSWER'
  | 'NAME_MISMATCH'
  | 'REDIRECT_REFUSED'
  | 'TOO_MANY_REDIRECTS'
  | 'ANSWER_TOO_LARGE'
  | 'OVERLOADED';

export interface DomainLookup {
  /** The name asked, as a lowercase A-label. */
  readonly domain: string;
  readonly status: DomainRegistration;
  /** The registry URL asked (`<base>domain/<name>`), or the bootstrap source when no registry was found. */
  readonly source: string;
  /** ISO-8601 UTC, when the answer (or the final failure) came. */
  readonly checkedAt: string;
  /** HTTP requests made (1 + transport retries); 0 when no registry was asked. */
  readonly attempts: number;
  /** Set exactly when status is UNKNOWN. */
  readonly reason?: RdapFailureReason;
  /** A sentence on what the registry said or why there is no answer. */
  readonly detail: string;
  /** From a 429's Retry-After (seconds), when the registry gave one. */
  readonly retryAfterSeconds?: number;
}

export interface RdapClientOptions {
  /** RFC 9224 dns.json: https URL, loopback http URL, file: URL or absolute path. */
  readonly bootstrapSource: string;
  readonly now?: () => Date;
  readonly lookupTimeoutMs?: number;
  readonly transportRetries?: number;
  readonly maxConcurrentLookups?: number;
  /**
   * `development` (the devnet registry on loopback http) or `public` (default): https only, and no
   * hop (base URL or redirect) to a loopback, private or link-local address.
   */
  readonly addressPolicy?: RdapAddressPolicy;
}

export interface RdapClient {
  readonly bootstrap: BootstrapCache;
  /** Throws InvalidDomainNameError for a name that cannot be queried; never throws for registry failures. */
  lookupDomain(name: string): Promise<DomainLookup>;
}

/** What every lookup of one client shares: its clock, bootstrap, concurrency slots and bounds. */
interface LookupContext {
  readonly now: () => Date;
  readonly bootstrap: BootstrapCache;
  readonly slots: Semaphore;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly addressPolicy: RdapAddressPolicy;
}

export function createRdapClient(options: RdapClientOptions): RdapClient {
  const now = options.now ?? (() => new Date());
  const timeoutMs = bounded(
    'lookupTimeoutMs',
    options.lookupTimeoutMs ?? DEFAULT_LOOKUP_TIMEOUT_MS,
    MIN_LOOKUP_TIMEOUT_MS,
    MAX_LOOKUP_TIMEOUT_MS,
  );
  const retries = bounded(
    'transportRetries',
    options.transportRetries ?? DEFAULT_TRANSPORT_RETRIES,
    0,
    MAX_TRANSPORT_RETRIES,
  );
  const permits = bounded(
    'maxConcurrentLookups',
    options.maxConcurrentLookups ?? DEFAULT_MAX_CONCURRENT_LOOKUPS,
    1,
    MAX_CONCURRENT_LOOKUPS,
  );
  const bootstrap = new BootstrapCache(options.bootstrapSource, now);
  const slots = new Semaphore(permits, MAX_WAITING_LOOKUPS);
  const addressPolicy = options.addressPolicy ?? 'public';
  const context: LookupContext = { now, bootstrap, slots, timeoutMs, retries, addressPolicy };
  return { bootstrap, lookupDomain: (name) => lookupDomain(context, name) };
}

/** One request in a slot, repeated after transport failures only; null result: no slot free. */
async function ask(
  { slots, timeoutMs, retries, addressPolicy }: LookupContext,
  url: string,
): Promise<{ result: QueryResult | null; attempts: number }> {
  for (let attempt = 1; ; attempt += 1) {
    const acquiring = slots.tryAcquire();
    if (acquiring === null) return { result: null, attempts: attempt - 1 };
    const release = await acquiring;
    let result: QueryResult;
    try {
      result = await queryRdap(url, timeoutMs, addressPolicy);
    } finally {
      release();
    }
    if (result.kind !== 'transport' || attempt > retries) return { result, attempts: attempt };
    await sleep(RETRY_BACKOFF_MS * attempt);
  }
}

async function lookupDomain(context: LookupContext, name: string): Promise<DomainLookup> {
  const { bootstrap, now } = context;
  const domain = normaliseDomainName(name);
  const unknown = (
    source: string,
    attempts: number,
    reason: RdapFailureReason,
    detail: string,
  ): DomainLookup => ({
    domain,
    status: 'UNKNOWN',
    source,
    checkedAt: now().toISOString(),
    attempts,
    reason,
    detail,
  });
  let baseUrl: string | null;
  try {
    baseUrl = findRdapBaseUrl(await bootstrap.current(), domain);
  } catch (error) {
    if (!(error instanceof BootstrapUnavailableError)) throw error;
    return unknown(bootstrap.source, 0, 'BOOTSTRAP_UNAVAILABLE', error.message);
  }
  if (baseUrl === null) {
    return unknown(
      bootstrap.source,
      0,
      'NO_RDAP_SERVER',
      `the RDAP bootstrap names no registry for ${domain}`,
    );
  }
  const source = new URL(`domain/${domain}`, baseUrl).href;
  const { result, attempts } = await ask(context, source);
  if (result === null)
    return unknown(
      source,
      attempts,
      'OVERLOADED',
      `more than ${MAX_WAITING_LOOKUPS} lookups are waiting; not asked`,
    );
  if (result.kind !== 'answer') return unknown(source, attempts, result.reason, result.detail);
  return {
    ...classifyAnswer(domain, result),
    domain,
    source,
    checkedAt: now().toISOString(),
    attempts,
  };
}

type Classified = Pick<DomainLookup, 'status' | 'reason' | 'detail' | 'retryAfterSeconds'>;

function classifyAnswer(
  domain: string,
  answer: Extract<QueryResult, { kind: 'answer' }>,
): Classified {
  const { status } = answer;
  if (status === 404)
    return {
      status: 'NOT_REGISTERED',
      detail: `the registry has no domain object for ${domain} (HTTP 404); not a reservation`,
    };
  if (status === 200) return classifyDomainObject(domain, answer.text);
  if (status === 429) {
    const retryAfterSeconds = /^[0-9]{1,6}$/.test(answer.headers.get('retry-after')?.trim() ?? '')
      ? Number(answer.headers.get('retry-after')?.trim())
      : undefined;
    const after = retryAfterSeconds === undefined ? '' : `; Retry-After ${retryAfterSeconds} s`;
    return {
      status: 'UNKNOWN',
      reason: 'RATE_LIMITED',
      detail: `the registry is rate limiting (HTTP 429${after})`,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    };
  }
  if (status >= 500)
    return {
      status: 'UNKNOWN',
      reason: 'SERVER_ERROR',
      detail: `the registry failed (HTTP ${status})`,
    };
  return {
    status: 'UNKNOWN',
    reason: 'UNEXPECTED_STATUS',
    detail: `the registry answered HTTP ${status}`,
  };
}

function classifyDomainObject(domain: string, text: string): Classified {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return {
      status: 'UNKNOWN',
      reason: 'MALFORMED_ANSWER',
      detail: 'the registry answered 200 with invalid JSON',
    };
  }
  if (
    typeof json !== 'object' ||
    json === null ||
    (json as Record<string, unknown>).objectClassName !== 'domain'
  ) {
    return {
      status: 'UNKNOWN',
      reason: 'MALFORMED_ANSWER',
      detail: 'the registry answered 200 without a domain object',
    };
  }
  const { ldhName, status } = json as Record<string, unknown>;
  // An answer about another name is no answer about this one (a registrar redirect gone wrong, a cache).
  if (
    ldhName !== undefined &&
    (typeof ldhName !== 'string' || ldhName.toLowerCase().replace(/\.$/, '') !== domain)
  ) {
    return {
      status: 'UNKNOWN',
      reason: 'NAME_MISMATCH',
      detail: `the registry answered for another name than ${domain}`,
    };
  }
  // Only RFC 9083 §10.2.2-shaped values ("active", "client hold") reach the detail, and a receipt after it.
  const statuses = Array.isArray(status)
    ? status
        .filter((item): item is string => typeof item === 'string' && /^[a-z ]{1,40}$/.test(item))
        .slice(0, 10)
    : [];
  const shown = statuses.length > 0 ? ` (status: ${statuses.join(', ')})` : '';
  return {
    status: 'REGISTERED',
    detail: `the registry holds a domain object for ${domain}${shown}`,
  };
}

function bounded(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new RangeError(`${name} must be an integer in ${min}..${max}`);
  return value;
}
