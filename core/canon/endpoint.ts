// One spelling per endpoint URL, so the same endpoint always lands in the intent hash the same
// way: lowercase scheme and host, default port dropped, query parameters sorted, fragment
// dropped. Only absolute http(s) URLs without credentials are accepted.

export const MAX_ENDPOINT_LENGTH = 2048;

export class EndpointError extends Error {
  constructor(problem: string) {
    super(`endpoint ${problem}`);
    this.name = 'EndpointError';
  }
}

/**
 * The WHATWG URL parser already lowercases scheme and host, drops default ports and resolves
 * dot segments; sorting uses URLSearchParams (stable by key, form-encoded), so `?b=2&a=1` and
 * `?a=1&b=2` agree. Paths keep their case: servers may treat it as significant.
 */
export function canonicalEndpoint(raw: string): string {
  if (typeof raw !== 'string') throw new EndpointError('must be a string');
  if (raw.length === 0 || raw.length > MAX_ENDPOINT_LENGTH) {
    throw new EndpointError(`must be 1–${MAX_ENDPOINT_LENGTH} characters`);
  }
  if (raw.trim() !== raw || /[\u0000-\u001f\u007f\s]/.test(raw)) {
    throw new EndpointError('must not contain whitespace or control characters');
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EndpointError('is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new EndpointError('must use http or https');
  if (url.username !== '' || url.password !== '')
    throw new EndpointError('must not carry credentials');
  if (url.hostname === '') throw new EndpointError('must name a host');
  url.hash = '';
  url.searchParams.sort();
  // An empty query after sorting leaves a bare "?", which is not a second spelling we want.
  if (url.searchParams.toString() === '') url.search = '';
  const canonical = url.toString();
  if (canonical.length > MAX_ENDPOINT_LENGTH)
    throw new EndpointError(`is longer than ${MAX_ENDPOINT_LENGTH} characters once canonical`);
  return canonical;
}
