// Every bound the RDAP client works within, named in one place so config validation, the client
// and the docs agree: lookup time, attempts, concurrency, redirects, answer sizes, bootstrap cache.
// Worst case for one lookup: (1 + retries) × timeout + the backoffs, whatever the registry does.

/** One attempt (the request, its redirects and reading the answer) must finish within this. */
export const DEFAULT_LOOKUP_TIMEOUT_MS = 5_000;
export const MIN_LOOKUP_TIMEOUT_MS = 50;
export const MAX_LOOKUP_TIMEOUT_MS = 60_000;

/** Extra attempts after a transport failure (refused, reset, timeout); HTTP answers are never retried. */
export const DEFAULT_TRANSPORT_RETRIES = 2;
export const MAX_TRANSPORT_RETRIES = 5;
/** Pause before retry n is n × this. */
export const RETRY_BACKOFF_MS = 100;

/** Requests to registries in flight at once from one client; the rest wait their turn. */
export const DEFAULT_MAX_CONCURRENT_LOOKUPS = 8;
export const MAX_CONCURRENT_LOOKUPS = 64;
/** Lookups waiting for a slot beyond this are answered UNKNOWN (OVERLOADED) at once. */
export const MAX_WAITING_LOOKUPS = 1_000;

/** RFC 7480 §5.2 redirects (registry → registrar) followed per attempt. */
export const MAX_REDIRECTS = 3;
/** Domain objects are a few KiB; a larger answer is refused rather than buffered. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** IANA's dns.json is ~10 KiB; this leaves room without letting a bad source fill memory. */
export const MAX_BOOTSTRAP_BYTES = 4 * 1024 * 1024;
export const BOOTSTRAP_FETCH_TIMEOUT_MS = 10_000;
/** Used when the source says nothing about freshness (and for files). */
export const DEFAULT_BOOTSTRAP_TTL_MS = 24 * 60 * 60 * 1000;
/** A shorter max-age (or no-cache) is raised to this: IANA asks clients not to fetch per query. */
export const MIN_BOOTSTRAP_TTL_MS = 60 * 1000;
export const MAX_BOOTSTRAP_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** After a failed load, lookups use the last good copy (or answer UNKNOWN) this long before the next load. */
export const BOOTSTRAP_RETRY_AFTER_FAILURE_MS = 30 * 1000;

/** The production default of RDAP_BOOTSTRAP_URL (RFC 9224); never fetched by the tests. */
export const IANA_DNS_BOOTSTRAP_URL = 'https://data.iana.org/rdap/dns.json';
