// RDAP lookups from the environment: where the bootstrap registry comes from, and the timeout,
// concurrency and retry bounds of a lookup (their limits live in platform/rdap/limits.ts).
import path from 'node:path';
import * as rdapLimits from '../rdap/limits';
import { isAllowedRdapUrl } from '../rdap/urlPolicy';
import type { EnvReader } from './envReader';
import type { RdapConfig } from './sections';

/** Off the devnet the real IANA bootstrap is the default; plain http is accepted on loopback only. */
export function readRdap(read: EnvReader, devnet: boolean, isProduction: boolean): RdapConfig {
  const raw = read.raw('RDAP_BOOTSTRAP_URL');
  let bootstrapSource = devnet ? null : rdapLimits.IANA_DNS_BOOTSTRAP_URL;
  if (raw !== undefined && path.isAbsolute(raw)) bootstrapSource = raw;
  else if (raw !== undefined) {
    const url = URL.canParse(raw) ? new URL(raw) : null;
    if (url !== null && (url.protocol === 'file:' || isAllowedRdapUrl(url))) bootstrapSource = raw;
    else
      read.problem(
        'RDAP_BOOTSTRAP_URL',
        'must be an https URL, an http URL on loopback, a file: URL or an absolute path',
      );
  }
  const {
    MIN_LOOKUP_TIMEOUT_MS,
    MAX_LOOKUP_TIMEOUT_MS,
    MAX_CONCURRENT_LOOKUPS,
    MAX_TRANSPORT_RETRIES,
  } = rdapLimits;
  return {
    bootstrapSource,
    // In production no hop (base URL or redirect) may be plain http or a non-public address.
    addressPolicy: isProduction ? 'public' : 'development',
    lookupTimeoutMs: read.integer(
      'RDAP_LOOKUP_TIMEOUT_MS',
      rdapLimits.DEFAULT_LOOKUP_TIMEOUT_MS,
      MIN_LOOKUP_TIMEOUT_MS,
      MAX_LOOKUP_TIMEOUT_MS,
    ),
    maxConcurrentLookups: read.integer(
      'RDAP_MAX_CONCURRENT_LOOKUPS',
      rdapLimits.DEFAULT_MAX_CONCURRENT_LOOKUPS,
      1,
      MAX_CONCURRENT_LOOKUPS,
    ),
    transportRetries: read.integer(
      'RDAP_TRANSPORT_RETRIES',
      rdapLimits.DEFAULT_TRANSPORT_RETRIES,
      0,
      MAX_TRANSPORT_RETRIES,
    ),
  };
}
