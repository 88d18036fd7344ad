// The devnet RDAP registry answers as RFC 9083 registries do (domain objects, 404 error objects,
// application/rdap+json), serves a bootstrap that points its TLDs at itself, and fails on request
// in each of the ways a real registry can: slow, 500, malformed JSON, 429 with Retry-After, reset.
import { DEVNET_REGISTERED_NAMES } from './names';
import { type DevnetRdapRegistry, startDevnetRdapRegistry } from './registry';

const NOW = new Date('2026-03-14T09:00:00Z');

describe('devnet RDAP registry', () => {
  let registry: DevnetRdapRegistry;

  beforeAll(async () => {
    registry = await startDevnetRdapRegistry({ now: () => NOW });
  });

  afterAll(async () => {
    await registry.stop();
  });

  afterEach(() => {
    registry.clearFaults();
  });

  const get = async (
    path: string,
  ): Promise<{ status: number; type: string | null; body: any; headers: Headers }> => {
    const response = await fetch(`${registry.url}${path}`, {
      headers: { accept: 'application/rdap+json' },
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // malformed on purpose in the fault tests; the raw text is the body then
    }
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      body,
      headers: response.headers,
    };
  };

  it('listens on 127.0.0.1 and serves an RFC 9224 bootstrap pointing the devnet TLDs at itself', async () => {
    expect(new URL(registry.url).hostname).toBe('127.0.0.1');
    const answer = await get('/dns.json');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(answer.body).toEqual({
      version: '1.0',
      publication: NOW.toISOString(),
      description: expect.any(String),
      services: [[['test', 'example'], [`${registry.url}/`]]],
    });
  });

  it('answers a registered name with an RFC 9083 domain object, whatever its case or script', async () => {
    expect(registry.registeredNames).toEqual(DEVNET_REGISTERED_NAMES);
    const answer = await get('/domain/TAKEN.test');
    expect(answer.status).toBe(200);
    expect(answer.type).toMatch(/^application\/rdap\+json/);
    expect(answer.body).toMatchObject({
      objectClassName: 'domain',
      ldhName: 'taken.test',
      status: ['active', 'client transfer prohibited'],
      events: expect.arrayContaining([
        { eventAction: 'registration', eventDate: '2025-03-14T09:00:00.000Z' },
      ]),
      entities: [expect.objectContaining({ objectClassName: 'entity', roles: ['registrar'] })],
      links: [expect.objectContaining({ rel: 'self', href: `${registry.url}/domain/taken.test` })],
    });
    expect(answer.body.rdapConformance).toContain('rdap_level_0');
    expect((await get(`/domain/${encodeURIComponent('münchen.test')}`)).body.ldhName).toBe(
      'xn--mnchen-3ya.test',
    );
  });

  it('answers 404 with an RFC 9083 error object for a name it does not hold, and 400 for a non-name', async () => {
    const missing = await get('/domain/free-name.test');
    expect(missing.status).toBe(404);
    expect(missing.type).toMatch(/^application\/rdap\+json/);
    expect(missing.body).toEqual({
      rdapConformance: ['rdap_level_0'],
      errorCode: 404,
      title: 'Not Found',
      description: [expect.stringContaining('free-name.test')],
    });
    const bad = await get('/domain/not_a_name');
    expect(bad.status).toBe(400);
    expect(bad.body.errorCode).toBe(400);
  });

  it('fails with 500, 429 plus Retry-After, or malformed JSON while the switch is set', async () => {
    registry.setFaults({ answer: 'HTTP_500' });
    expect((await get('/domain/taken.test')).status).toBe(500);
    registry.setFaults({ answer: 'HTTP_429', retryAfterSeconds: 7 });
    const limited = await get('/domain/taken.test');
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '7']);
    registry.setFaults({ answer: 'MALFORMED_JSON' });
    const malformed = await get('/domain/taken.test');
    expect(malformed.status).toBe(200);
    expect(() => JSON.parse(malformed.body)).toThrow();
    registry.clearFaults();
    expect((await get('/domain/taken.test')).status).toBe(200);
  });

  it('cuts the connection without an answer when RESET, and delays answers when slow', async () => {
    registry.setFaults({ answer: 'RESET' });
    await expect(fetch(`${registry.url}/domain/taken.test`)).rejects.toThrow('fetch failed');
    registry.setFaults({ answer: 'NORMAL', delayMs: 2_000 });
    await expect(
      fetch(`${registry.url}/domain/taken.test`, { signal: AbortSignal.timeout(200) }),
    ).rejects.toThrow(/timeout/i);
  });

  it('counts requests and the most it had in flight at once, and records the Accept header', async () => {
    registry.resetStats();
    registry.setFaults({ delayMs: 300 });
    await Promise.all(['a.test', 'b.test', 'c.test'].map((name) => get(`/domain/${name}`)));
    await get('/dns.json');
    expect(registry.stats).toEqual({
      bootstrapRequests: 1,
      domainRequests: 3,
      inFlight: 0,
      maxInFlight: 3,
    });
    expect(registry.requests.map((seen) => seen.accept)).toEqual([
      'application/rdap+json',
      'application/rdap+json',
      'application/rdap+json',
    ]);
  });

  it('takes fault switches on its loopback admin endpoint and refuses bad ones', async () => {
    const put = (body: unknown) =>
      fetch(`${registry.url}/_admin/faults`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const set = await put({ answer: 'HTTP_500' });
    expect(await set.json()).toEqual({ delayMs: 0, answer: 'HTTP_500', retryAfterSeconds: 1 });
    expect((await get('/domain/taken.test')).status).toBe(500);
    expect(registry.faults.answer).toBe('HTTP_500');
    const refused = await put({ answer: 'EXPLODE' });
    expect(refused.status).toBe(400);
    expect((await put({ delayMs: -1 })).status).toBe(400);
    expect(registry.faults).toEqual({ delayMs: 0, answer: 'HTTP_500', retryAfterSeconds: 1 });
    await put({ answer: 'NORMAL' });
    const stats = await (await fetch(`${registry.url}/_admin/stats`)).json();
    expect(stats).toEqual(
      expect.objectContaining({ inFlight: 0, domainRequests: expect.any(Number) }),
    );
  });

  it('refuses to hold a name under a TLD its bootstrap does not point at it', async () => {
    await expect(startDevnetRdapRegistry({ registeredNames: ['taken.com'] })).rejects.toThrow(
      /not under a served TLD/,
    );
    await expect(startDevnetRdapRegistry({ registeredNames: ['bad_name.test'] })).rejects.toThrow(
      /invalid domain name/,
    );
  });
});
