// Domain lookups against real registries on 127.0.0.1: the devnet registry (through its own
// bootstrap) and a hop server for redirects. Registered → REGISTERED, 404 → NOT_REGISTERED, every
// failure → UNKNOWN with a reason; only transport failures are retried; the concurrency cap holds.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DEVNET_REGISTERED_NAMES } from '../../devnet/rdap/names';
import { type DevnetRdapRegistry, startDevnetRdapRegistry } from '../../devnet/rdap/registry';
import { type LoopbackServer, serveOnLoopback } from '../../devnet/peers/loopback';
import { MAX_REDIRECTS } from './limits';
import { createRdapClient, type RdapClientOptions } from './lookupDomain';
import { InvalidDomainNameError } from './names';

const NOW = new Date('2026-03-14T09:00:00Z');

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('lookupDomain', () => {
  let registry: DevnetRdapRegistry;
  let hops: LoopbackServer;
  let dir: string;
  let fileBootstrap: string;
  let refusedPort: number;

  const client = (options: Partial<RdapClientOptions> = {}) =>
    createRdapClient({
      addressPolicy: 'development',
      bootstrapSource: registry.bootstrapUrl,
      now: () => NOW,
      ...options,
    });

  beforeAll(async () => {
    registry = await startDevnetRdapRegistry({
      registeredNames: [...DEVNET_REGISTERED_NAMES, 'held.hop.test'],
    });
    // Each path prefix is one way a registry can answer a query it is asked.
    hops = await serveOnLoopback((req, res) => {
      const [, mode, , name] = (req.url ?? '').split('/');
      if (mode === 'to-registry')
        res.writeHead(302, { location: `${registry.url}/domain/${name}` }).end();
      else if (mode === 'loop') res.writeHead(301, { location: req.url }).end();
      else if (mode === 'downgrade')
        res.writeHead(302, { location: `http://rdap.example.com/domain/${name}` }).end();
      else if (mode === 'other-name')
        res
          .writeHead(200, { 'content-type': 'application/rdap+json' })
          .end(JSON.stringify({ objectClassName: 'domain', ldhName: 'someone-else.test' }));
      else if (mode === 'huge')
        res.writeHead(200).end(`{"objectClassName":"domain","pad":"${'x'.repeat(1_100_000)}"}`);
      else if (mode === 'teapot') res.writeHead(418).end();
      else res.writeHead(500).end();
    });
    refusedPort = await closedPort();
    dir = mkdtempSync(path.join(os.tmpdir(), 'rdap-lookup-'));
    fileBootstrap = path.join(dir, 'dns.json');
    const hop = (mode: string) => `${hops.url}/${mode}/`;
    writeFileSync(
      fileBootstrap,
      JSON.stringify({
        version: '1.0',
        services: [
          [['test'], [`${registry.url}/`]],
          [['hop.test'], [hop('to-registry')]],
          [['loop.test'], [hop('loop')]],
          [['downgrade.test'], [hop('downgrade')]],
          [['mismatch.test'], [hop('other-name')]],
          [['huge.test'], [hop('huge')]],
          [['teapot.test'], [hop('teapot')]],
          [['refused.test'], [`http://127.0.0.1:${refusedPort}/`]],
        ],
      }),
    );
  });

  afterAll(async () => {
    await registry.stop();
    await hops.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    registry.clearFaults();
    registry.resetStats();
  });

  it('answers REGISTERED for a registered name, asking <base>domain/<name> with Accept application/rdap+json', async () => {
    const lookup = await client().lookupDomain('taken.test');
    expect(lookup).toEqual({
      domain: 'taken.test',
      status: 'REGISTERED',
      source: `${registry.url}/domain/taken.test`,
      checkedAt: NOW.toISOString(),
      attempts: 1,
      detail:
        'the registry holds a domain object for taken.test (status: active, client transfer prohibited)',
    });
    expect(registry.requests).toEqual([
      { path: '/domain/taken.test', accept: 'application/rdap+json' },
    ]);
  });

  it('answers NOT_REGISTERED for a name the registry does not hold (404)', async () => {
    const lookup = await client().lookupDomain('free-name.example');
    expect(lookup).toMatchObject({
      status: 'NOT_REGISTERED',
      source: `${registry.url}/domain/free-name.example`,
      attempts: 1,
    });
    expect(lookup.reason).toBeUndefined();
  });

  it('asks for internationalised names as lowercase A-labels, trailing dot stripped', async () => {
    const lookup = await client().lookupDomain('MÜNCHEN.Test.');
    expect(lookup).toMatchObject({
      domain: 'xn--mnchen-3ya.test',
      status: 'REGISTERED',
      source: `${registry.url}/domain/xn--mnchen-3ya.test`,
    });
    expect(registry.requests.map((seen) => seen.path)).toEqual(['/domain/xn--mnchen-3ya.test']);
  });

  it('refuses an invalid name without asking anyone', async () => {
    await expect(client().lookupDomain('taken.test/../x')).rejects.toThrow(InvalidDomainNameError);
    expect(registry.stats.domainRequests).toBe(0);
  });

  it('answers UNKNOWN for a TLD the bootstrap names no registry for, naming the bootstrap as source', async () => {
    const lookup = await client().lookupDomain('example.org');
    expect(lookup).toMatchObject({
      status: 'UNKNOWN',
      reason: 'NO_RDAP_SERVER',
      source: registry.bootstrapUrl,
      attempts: 0,
    });
  });

  it('answers UNKNOWN when the bootstrap cannot be loaded', async () => {
    const source = `http://127.0.0.1:${refusedPort}/dns.json`;
    const lookup = await client({ bootstrapSource: source }).lookupDomain('taken.test');
    expect(lookup).toMatchObject({
      status: 'UNKNOWN',
      reason: 'BOOTSTRAP_UNAVAILABLE',
      source,
      detail: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it.each([
    ['HTTP_500', 'SERVER_ERROR', 'the registry failed (HTTP 500)'],
    ['HTTP_429', 'RATE_LIMITED', 'the registry is rate limiting (HTTP 429; Retry-After 7 s)'],
    ['MALFORMED_JSON', 'MALFORMED_ANSWER', 'the registry answered 200 with invalid JSON'],
  ] as const)('answers UNKNOWN on %s (%s) and asks only once', async (answer, reason, detail) => {
    registry.setFaults({ answer, retryAfterSeconds: 7 });
    const lookup = await client({ transportRetries: 3 }).lookupDomain('taken.test');
    expect(lookup).toMatchObject({ status: 'UNKNOWN', reason, detail, attempts: 1 });
    expect(registry.stats.domainRequests).toBe(1);
    if (answer === 'HTTP_429') expect(lookup.retryAfterSeconds).toBe(7);
  });

  it('retries a reset connection, then answers UNKNOWN (NETWORK): the registry saw 1 + retries requests', async () => {
    registry.setFaults({ answer: 'RESET' });
    const lookup = await client({ transportRetries: 2 }).lookupDomain('taken.test');
    expect(lookup).toMatchObject({ status: 'UNKNOWN', reason: 'NETWORK', attempts: 3 });
    expect(registry.stats.domainRequests).toBe(3);
  });

  it('retries a slow registry after each timeout, then answers UNKNOWN (TIMEOUT)', async () => {
    registry.setFaults({ delayMs: 2_000 });
    const lookup = await client({ lookupTimeoutMs: 200, transportRetries: 1 }).lookupDomain(
      'taken.test',
    );
    expect(lookup).toMatchObject({
      status: 'UNKNOWN',
      reason: 'TIMEOUT',
      attempts: 2,
      detail: 'no complete answer within 200 ms',
    });
    expect(registry.stats.domainRequests).toBe(2);
  });

  it('answers as soon as a retry succeeds', async () => {
    registry.setFaults({ answer: 'RESET' });
    const rdap = client({ transportRetries: 3 });
    const pending = rdap.lookupDomain('taken.test');
    // The first request has been answered with a reset by the time this wait resolves.
    await registry.waitForRequest();
    registry.clearFaults();
    expect(await pending).toMatchObject({ status: 'REGISTERED', attempts: 2 });
  });

  it('retries a refused connection `transportRetries` times', async () => {
    const lookup = await client({
      bootstrapSource: fileBootstrap,
      transportRetries: 2,
    }).lookupDomain('a.refused.test');
    expect(lookup).toMatchObject({
      status: 'UNKNOWN',
      reason: 'NETWORK',
      attempts: 3,
      detail: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('never has more requests in flight than the cap', async () => {
    registry.setFaults({ delayMs: 300 });
    const rdap = client({ maxConcurrentLookups: 3 });
    const names = Array.from({ length: 10 }, (_value, index) => `name-${index}.test`);
    const lookups = await Promise.all(names.map((name) => rdap.lookupDomain(name)));
    expect(lookups.map((lookup) => lookup.status)).toEqual(names.map(() => 'NOT_REGISTERED'));
    expect(registry.stats).toMatchObject({ domainRequests: 10, maxInFlight: 3 });
  });

  it('follows a registry redirect (longest bootstrap suffix first) and names the URL first asked', async () => {
    const lookup = await client({ bootstrapSource: fileBootstrap }).lookupDomain('held.hop.test');
    expect(lookup).toMatchObject({
      status: 'REGISTERED',
      source: `${hops.url}/to-registry/domain/held.hop.test`,
    });
    expect(registry.requests.map((seen) => seen.path)).toEqual(['/domain/held.hop.test']);
  });

  it.each([
    ['a.loop.test', 'TOO_MANY_REDIRECTS', `more than ${MAX_REDIRECTS} redirects`],
    [
      'a.downgrade.test',
      'REDIRECT_REFUSED',
      'redirected to a URL that is not https (or loopback http)',
    ],
    [
      'a.mismatch.test',
      'NAME_MISMATCH',
      'the registry answered for another name than a.mismatch.test',
    ],
    ['a.huge.test', 'ANSWER_TOO_LARGE', 'the answer is larger than 1048576 bytes'],
    ['a.teapot.test', 'UNEXPECTED_STATUS', 'the registry answered HTTP 418'],
  ])('answers UNKNOWN for %s (%s), without retrying', async (name, reason, detail) => {
    const lookup = await client({ bootstrapSource: fileBootstrap }).lookupDomain(name);
    expect(lookup).toMatchObject({ status: 'UNKNOWN', reason, detail, attempts: 1 });
  });

  it('outside development (addressPolicy public) no hop is plain http or a loopback address: the registry is never asked', async () => {
    const before = registry.requests.length;
    const lookup = await client({ addressPolicy: 'public' }).lookupDomain('asked.test');
    expect(lookup).toMatchObject({
      status: 'UNKNOWN',
      reason: 'REDIRECT_REFUSED',
      detail: 'refused plain http outside development',
      attempts: 1,
    });
    expect(registry.requests.length).toBe(before);
  });

  it('refuses options outside their bounds', () => {
    expect(() => client({ lookupTimeoutMs: 0 })).toThrow(/lookupTimeoutMs/);
    expect(() => client({ transportRetries: 6 })).toThrow(/transportRetries/);
    expect(() => client({ maxConcurrentLookups: 0 })).toThrow(/maxConcurrentLookups/);
  });
});
