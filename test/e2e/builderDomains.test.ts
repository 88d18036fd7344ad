// The launch pack's free routes through the gateway, against the devnet RDAP registry: live domain
// checks (registered names TAKEN, others AVAILABLE, a failing registry UNKNOWN, never a guess), the
// 50-domain bound, the tighter outbound bucket under a burst, ranking and the SEO checklist, every
// bad input a 400 with its field list, the same operations on GraphQL, and a deployment without a
// model or a registry answering from the fallback and UNKNOWN.
import { fallbackNames, rankOptions, seoTips } from '../../core/builder';
import { DEVNET_REGISTERED_NAMES } from '../../devnet/rdap/names';
import { startDevnetRdapRegistry, type DevnetRdapRegistry } from '../../devnet/rdap/registry';
import { uniformLimits } from '../../gateway/rateLimit/limiter';
import { createRdapClient } from '../../platform/rdap';
import { graphql, postJson, startTestStack, type TestStack } from '../support/stack';

const OUTBOUND = { perMinute: 1, burst: 3 };
const TLDS = ['test', 'example'];

let registry: DevnetRdapRegistry;
let stack: TestStack;
let bare: TestStack;

beforeAll(async () => {
  registry = await startDevnetRdapRegistry();
  stack = await startTestStack({
    rdap: createRdapClient({
      addressPolicy: 'development',
      bootstrapSource: registry.bootstrapUrl,
      lookupTimeoutMs: 2_000,
      transportRetries: 0,
    }),
    builder: { nameModel: null, defaultTlds: TLDS },
    rateLimits: { ...uniformLimits(), outbound: OUTBOUND },
    trustProxy: ['loopback'],
  });
  // No model, no registry: what a deployment without LLM_* or RDAP_BOOTSTRAP_URL answers.
  bare = await startTestStack();
});

afterAll(async () => {
  await bare?.stop();
  await stack?.stop();
  await registry?.stop();
});

afterEach(() => registry.clearFaults());

/** A POST from its own client address, so each test has its own rate buckets. */
let clientNumber = 0;
async function post(path: string, body: unknown, target: TestStack = stack) {
  clientNumber += 1;
  const response = await fetch(`${target.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-forwarded-for': `198.51.100.${clientNumber}`,
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any, response };
}

function fieldsOf(body: any): string[] {
  expect(body.code).toBe('REQUEST_INVALID');
  return body.details.map((detail: { field: string }) => detail.field);
}

describe('POST /builder/check_domains', () => {
  it('answers registered names TAKEN and others AVAILABLE, naming the registry asked, and says it is no purchase', async () => {
    const { status, body } = await post('/builder/check_domains', {
      names: ['taken', 'freshname'],
      tlds: ['test'],
    });
    expect(status).toBe(200);
    expect(body.note).toMatch(/not a purchase or a reservation/);
    expect(body.results).toEqual([
      expect.objectContaining({
        domain: 'taken.test',
        name: 'taken',
        status: 'TAKEN',
        registry: `${registry.url}/domain/taken.test`,
        cached: false,
      }),
      expect.objectContaining({
        domain: 'freshname.test',
        name: 'freshname',
        status: 'AVAILABLE',
        registry: `${registry.url}/domain/freshname.test`,
      }),
    ]);
    expect(registry.requests.map((request) => request.path)).toEqual(
      expect.arrayContaining(['/domain/taken.test', '/domain/freshname.test']),
    );
  });

  it('checks given domains as A-labels, and names under the deployment’s default TLDs', async () => {
    const byDomain = await post('/builder/check_domains', {
      domains: ['München.test', 'registered.example', 'nobody-here.example'],
    });
    expect(byDomain.status).toBe(200);
    expect(
      byDomain.body.results.map((result: any) => [result.domain, result.name, result.status]),
    ).toEqual([
      ['xn--mnchen-3ya.test', null, 'TAKEN'],
      ['registered.example', null, 'TAKEN'],
      ['nobody-here.example', null, 'AVAILABLE'],
    ]);
    const byName = await post('/builder/check_domains', { names: ['example'] });
    expect(byName.body.results.map((result: any) => [result.domain, result.status])).toEqual([
      ['example.test', 'TAKEN'],
      ['example.example', 'AVAILABLE'],
    ]);
    expect(DEVNET_REGISTERED_NAMES).toContain('example.test');
  });

  it('answers UNKNOWN with the reason while the registry fails, never AVAILABLE', async () => {
    registry.setFaults({ answer: 'HTTP_500' });
    const failing = await post('/builder/check_domains', { domains: ['down-one.test'] });
    expect(failing.status).toBe(200);
    expect(failing.body.results).toEqual([
      expect.objectContaining({
        domain: 'down-one.test',
        status: 'UNKNOWN',
        reason: 'SERVER_ERROR',
      }),
    ]);
    registry.setFaults({ answer: 'HTTP_429', retryAfterSeconds: 7 });
    const limited = await post('/builder/check_domains', { domains: ['down-two.test'] });
    expect(limited.body.results[0]).toMatchObject({
      status: 'UNKNOWN',
      reason: 'RATE_LIMITED',
      retryAfterSeconds: 7,
    });
    registry.clearFaults();
    // An UNKNOWN is not cached: the next check asks again and gets the real answer.
    const again = await post('/builder/check_domains', { domains: ['down-one.test'] });
    expect(again.body.results[0]).toMatchObject({ status: 'AVAILABLE', cached: false });
  });

  it('answers a repeated check from the short cache without asking the registry again', async () => {
    await post('/builder/check_domains', { domains: ['cache-me.test'] });
    const asked = registry.requests.filter((r) => r.path === '/domain/cache-me.test').length;
    const second = await post('/builder/check_domains', { domains: ['cache-me.test'] });
    expect(second.body.results[0]).toMatchObject({ status: 'AVAILABLE', cached: true });
    expect(registry.requests.filter((r) => r.path === '/domain/cache-me.test')).toHaveLength(asked);
  });

  it('checks 50 domains, and refuses 51 (or names × TLDs over 50) with a 400 naming the field', async () => {
    const fifty = Array.from({ length: 50 }, (_, index) => `bulk${index}.test`);
    const ok = await post('/builder/check_domains', { domains: fifty });
    expect(ok.status).toBe(200);
    expect(ok.body.results).toHaveLength(50);
    expect(registry.stats.maxInFlight).toBeLessThanOrEqual(8);
    const names51 = Array.from({ length: 51 }, (_, index) => `name${index}`);
    const tooMany = await post('/builder/check_domains', { names: names51, tlds: ['test'] });
    expect(tooMany.status).toBe(400);
    expect(fieldsOf(tooMany.body)).toEqual(['names']);
    const domains51 = await post('/builder/check_domains', {
      domains: [...fifty, 'one-more.test'],
    });
    expect(domains51.status).toBe(400);
    expect(fieldsOf(domains51.body)).toEqual(['domains']);
    // 26 names under the two default TLDs make 52 domains: the subgraph, which knows the defaults, refuses.
    const product = await post('/builder/check_domains', { names: names51.slice(0, 26) });
    expect(product.status).toBe(400);
    expect(fieldsOf(product.body)).toEqual(['names']);
    expect(product.body.details[0].reason).toMatch(/52 domains; at most 50/);
  });

  it('holds the outbound bucket under a burst: past its burst a caller gets 429 and the registry is not asked', async () => {
    registry.resetStats();
    const started = performance.now();
    const responses = await Promise.all(
      Array.from({ length: 12 }, () =>
        fetch(`${stack.url}/builder/check_domains`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.9' },
          body: JSON.stringify({ domains: ['burst.test'] }),
        }),
      ),
    );
    const statuses = responses.map((response) => response.status);
    const admitted = statuses.filter((status) => status === 200).length;
    const refillMinutes = Math.floor((performance.now() - started) / 60_000);
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThanOrEqual(OUTBOUND.burst + refillMinutes * OUTBOUND.perMinute);
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    const limited = responses.find((response) => response.status === 429)!;
    expect(limited.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    expect((await limited.json()) as any).toMatchObject({ code: 'RATE_LIMITED' });
    expect(registry.stats.domainRequests).toBeLessThanOrEqual(admitted);
  });

  it('refuses every bad body with a 400 listing each bad field', async () => {
    const cases: Array<[unknown, string[]]> = [
      [{}, ['names']],
      [[], ['(root)']],
      [{ names: ['ok'], domains: ['ok.test'] }, ['domains']],
      [{ domains: ['ok.test'], tlds: ['test'] }, ['tlds']],
      [
        { names: ['Bad Name', 'ok', 'ok'], tlds: ['.com', 'test'], extra: 1 },
        ['extra', 'names[0]', 'names[2]', 'tlds[0]'],
      ],
      [{ domains: ['no-tld', 'a/b.test', 7] }, ['domains[0]', 'domains[1]', 'domains[2]']],
      [{ names: 'ok' }, ['names']],
    ];
    for (const [body, fields] of cases) {
      const answer = await post('/builder/check_domains', body);
      expect([answer.status, fieldsOf(answer.body).sort()]).toEqual([400, [...fields].sort()]);
    }
  });
});

describe('POST /builder/rank_options and /builder/seo_tips', () => {
  it('ranks names with the score and its parts', async () => {
    const names = ['strngth', 'banana', 'my-app-2', 'lumora'];
    const { status, body } = await post('/builder/rank_options', { names });
    expect(status).toBe(200);
    expect(body).toEqual({ ranked: rankOptions(names) });
    expect(body.ranked[0]).toMatchObject({
      rank: 1,
      parts: { length: 30, charset: 20, pronounceability: expect.any(Number), availability: null },
    });
  });

  it('scores availability from check results given with the names, listing only AVAILABLE domains', async () => {
    const check = await post('/builder/check_domains', {
      names: ['taken', 'lumora'],
      tlds: ['test', 'example'],
    });
    const domains = check.body.results.map(({ domain, status }: any) => ({ domain, status }));
    const { status, body } = await post('/builder/rank_options', {
      names: ['taken', 'lumora'],
      domains,
    });
    expect(status).toBe(200);
    const byName = Object.fromEntries(body.ranked.map((option: any) => [option.name, option]));
    expect(byName.taken.availableDomains).toEqual(['taken.example']);
    expect(byName.lumora.availableDomains).toEqual(['lumora.example', 'lumora.test']);
    expect(byName.lumora.parts.availability).toBeGreaterThan(byName.taken.parts.availability);
  });

  it('answers the deterministic launch checklist for a name', async () => {
    const request = { name: 'lumora', idea: 'Handmade lamps for reading nooks.' };
    const first = await post('/builder/seo_tips', request);
    const second = await post('/builder/seo_tips', request);
    expect(first.status).toBe(200);
    expect(first.body).toEqual(second.body);
    expect(first.body).toEqual(JSON.parse(JSON.stringify(seoTips('lumora', request.idea))));
    expect(first.body.handles.checked).toBe(false);
  });

  it('refuses bad bodies with a 400 listing each bad field', async () => {
    const rank = await post('/builder/rank_options', {
      names: ['ok', 'Not OK', 'ok'],
      extra: true,
    });
    expect([rank.status, fieldsOf(rank.body).sort()]).toEqual([
      400,
      ['extra', 'names[1]', 'names[2]'],
    ]);
    const empty = await post('/builder/rank_options', { names: [] });
    expect([empty.status, fieldsOf(empty.body)]).toEqual([400, ['names']]);
    const seo = await post('/builder/seo_tips', { name: '-bad-', idea: '   ' });
    expect([seo.status, fieldsOf(seo.body).sort()]).toEqual([400, ['idea', 'name']]);
  });
});

describe('the same operations on GraphQL', () => {
  it('serves checkDomains, rankOptions and seoTips as queries with the REST answers', async () => {
    const { status, body } = await graphql(
      stack.url,
      `
        query ($domains: [String!], $names: [String!]) {
          checkDomains(domains: $domains)
          rankOptions(names: $names)
          seoTips(name: "lumora")
        }
      `,
      { domains: ['taken.test'], names: ['lumora', 'banana'] },
    );
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data.checkDomains.results[0]).toMatchObject({
      domain: 'taken.test',
      status: 'TAKEN',
    });
    expect(body.data.rankOptions).toEqual({ ranked: rankOptions(['lumora', 'banana']) });
    expect(body.data.seoTips.name).toBe('lumora');
  });

  it('answers bad GraphQL input with REQUEST_INVALID and the same field list', async () => {
    const { body } = await graphql(stack.url, '{ rankOptions(names: ["ok", "BAD NAME"]) }');
    expect(body.errors?.[0].extensions).toMatchObject({
      code: 'REQUEST_INVALID',
      details: [{ field: 'names[1]', reason: expect.any(String) }],
    });
  });

  it('charges /graphql checkDomains to the same outbound bucket, and refuses it selected twice (aliases)', async () => {
    const ask = (query: string) =>
      fetch(`${stack.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.20' },
        body: JSON.stringify({ query }),
      }).then(async (response) => (await response.json()) as any);
    const twice = await ask(
      '{ a: checkDomains(domains: ["gql-a.test"]) b: checkDomains(domains: ["gql-b.test"]) }',
    );
    expect(twice.errors[0].extensions.code).toBe('REQUEST_INVALID');
    expect(registry.requests.some((request) => request.path === '/domain/gql-a.test')).toBe(false);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => ask('{ checkDomains(domains: ["gql-c.test"]) }')),
    );
    const codes = answers.map((answer) => answer.errors?.[0].extensions.code ?? 'OK');
    expect(codes.filter((code) => code === 'OK').length).toBeLessThanOrEqual(OUTBOUND.burst + 1);
    expect(codes.filter((code) => code !== 'OK' && code !== 'RATE_LIMITED')).toEqual([]);
    expect(codes).toContain('RATE_LIMITED');
  });

  it('keeps the priced operations to their paid routes (PAID_ROUTE_ONLY on /graphql)', async () => {
    for (const query of [
      'mutation { suggestNames(idea: "coffee") }',
      'mutation { brandPack(idea: "coffee") }',
    ]) {
      const { body } = await graphql(stack.url, query, {}, stack.adminToken);
      expect(body.errors?.[0].extensions?.code).toBe('PAID_ROUTE_ONLY');
    }
  });
});

describe('a deployment without a model or an RDAP registry', () => {
  it('suggests names from the fallback and says so (NOT_CONFIGURED)', async () => {
    const idea = 'Coffee roasting subscriptions for offices';
    const { status, body } = await postJson(bare.url, '/builder/suggest_names', {
      idea,
      count: 5,
      style: 'short',
    });
    expect(status).toBe(200);
    expect(body).toEqual({
      idea,
      style: 'short',
      count: 5,
      source: 'fallback',
      fallbackReason: 'NOT_CONFIGURED',
      names: fallbackNames(idea, { count: 5, style: 'short' }),
    });
  });

  it('answers every domain UNKNOWN, asking no registry', async () => {
    const { status, body } = await postJson(bare.url, '/builder/check_domains', {
      domains: ['anything.com'],
    });
    expect(status).toBe(200);
    expect(body.results).toEqual([
      expect.objectContaining({
        domain: 'anything.com',
        status: 'UNKNOWN',
        registry: null,
        reason: 'NOT_CONFIGURED',
      }),
    ]);
  });
});
