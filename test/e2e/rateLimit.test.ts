// Rate limits through the public surface, with buckets in PostgreSQL as deployed: the real default
// limits against a sign-in flood and GraphQL over HTTP; then tight limits on an x402 stack for the
// per-payer bucket of paid calls, the per-IP bucket a 402 challenge costs, and the tighter bucket
// of a route that calls out. Every refusal is 429 RATE_LIMITED with an honest Retry-After.
import { performance } from 'node:perf_hooks';
import type { PaymentRequired } from '@x402/core/types';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import type { RateLimits } from '../../gateway/rateLimit/limiter';
import { createChainPublicClient, createChainWalletClient } from '../../platform/chain/clients';
import { mintToken, readTokenBalance } from '../../platform/chain/tokens';
import { loadConfig } from '../../platform/config';
import { challengeOf, signedPaymentHeader } from '../../devnet/agents/x402Payer';
import { startTestStack, type TestStack } from '../support/stack';

const POLLING = { pollingIntervalMs: 20 };

/** A 429 as documented: the error body, Retry-After in whole seconds, the same number in details. */
async function expectRateLimited(response: Response): Promise<number> {
  expect(response.status).toBe(429);
  const body = (await response.json()) as any;
  expect(body).toMatchObject({
    code: 'RATE_LIMITED',
    retryable: true,
    docsUrl: expect.stringMatching(/#rate_limited$/),
  });
  const retryAfter = response.headers.get('retry-after');
  expect(retryAfter).toMatch(/^[1-9][0-9]*$/);
  expect(body.details).toEqual({ retryAfterSeconds: Number(retryAfter) });
  return Number(retryAfter);
}

/** Runs `count` calls, at most `concurrency` at once; answers in call order. */
async function inParallel<T>(
  count: number,
  concurrency: number,
  call: (index: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const index = next;
        next += 1;
        results[index] = await call(index);
      }
    }),
  );
  return results;
}

describe('the default limits (no proxy trusted)', () => {
  let stack: TestStack;
  const defaults = loadConfig({}).rateLimit;

  beforeAll(async () => {
    stack = await startTestStack({ rateLimits: defaults });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('2,000 sign-in nonce requests at 64 concurrent: only the sign-in bucket’s worth is issued, the rest is 429', async () => {
    const started = performance.now();
    const responses = await inParallel(2_000, 64, async () => {
      const response = await fetch(`${stack.url}/consumer/auth/nonce`, { method: 'POST' });
      return { status: response.status, response };
    });
    const elapsedMs = performance.now() - started;
    const issued = responses.filter((answer) => answer.status === 200).length;
    const bound =
      defaults.signIn.burst + Math.floor((defaults.signIn.perMinute * elapsedMs) / 60_000);
    expect(issued).toBeGreaterThanOrEqual(1);
    expect(issued).toBeLessThanOrEqual(bound);
    expect(responses.filter((answer) => answer.status === 429)).toHaveLength(2_000 - issued);
    const rows = await stack.db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM policy.sign_in_nonces',
    );
    expect(rows.rows[0]!.n).toBe(issued);
    for (const { response } of responses.filter((answer) => answer.status === 429).slice(0, 20)) {
      expect(await expectRateLimited(response)).toBeLessThanOrEqual(
        Math.ceil(60 / defaults.signIn.perMinute),
      );
    }
  });

  it('a spoofed X-Forwarded-For does not buy a fresh bucket when no proxy is trusted', async () => {
    const response = await fetch(`${stack.url}/consumer/auth/nonce`, {
      method: 'POST',
      headers: { 'x-forwarded-for': '203.0.113.77' },
    });
    await expectRateLimited(response);
  });

  it('GraphQL over HTTP is charged to the same per-IP bucket', async () => {
    const started = performance.now();
    const statuses = await inParallel(defaults.ip.burst + 20, 8, async () => {
      const response = await fetch(`${stack.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ catalog { providers { id } } }' }),
      });
      if (response.status === 429) await expectRateLimited(response);
      else await response.arrayBuffer();
      return response.status;
    });
    const admitted = statuses.filter((status) => status === 200).length;
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(admitted).toBeLessThanOrEqual(
      defaults.ip.burst +
        Math.floor((defaults.ip.perMinute * (performance.now() - started)) / 60_000),
    );
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(0);
  });
});

describe('tight limits on an x402 stack behind a trusted proxy', () => {
  const LIMITS: RateLimits = {
    ip: { perMinute: 1, burst: 4 },
    payer: { perMinute: 1, burst: 2 },
    paidIp: { perMinute: 1_000, burst: 1_000 },
    signIn: { perMinute: 1, burst: 1 },
    outbound: { perMinute: 1, burst: 2 },
  };
  let devnet: DevnetChains;
  let stack: TestStack;
  let pingChallenge: PaymentRequired;

  async function fundedPayer(): Promise<PrivateKeyAccount> {
    const payer = privateKeyToAccount(generatePrivateKey());
    const funding = devnet.info.chains.funding;
    const minter = createChainWalletClient(funding, devnet.keys.deployer.account, POLLING);
    await mintToken({
      publicClient: createChainPublicClient(funding, POLLING),
      minter,
      token: funding.token.address,
      to: payer.address,
      amountAtomic: 1_000_000n,
    });
    return payer;
  }

  function balance(payer: PrivateKeyAccount): Promise<bigint> {
    const funding = devnet.info.chains.funding;
    return readTokenBalance(
      createChainPublicClient(funding, POLLING),
      funding.token.address,
      payer.address,
    );
  }

  /** A paid GET /ping_service from `client` (the address the trusted proxy reports) by `payer`. */
  async function paidPing(client: string, payer: PrivateKeyAccount): Promise<Response> {
    const header = await signedPaymentHeader(pingChallenge, payer);
    return fetch(`${stack.url}/ping_service`, {
      headers: { 'x-forwarded-for': client, 'payment-signature': header },
    });
  }

  beforeAll(async () => {
    devnet = await startDevnetChains({ dataDir: null });
    stack = await startTestStack({
      x402: { devnet },
      rateLimits: LIMITS,
      trustProxy: ['loopback'],
    });
    pingChallenge = challengeOf(
      await fetch(`${stack.url}/ping_service`, { headers: { 'x-forwarded-for': '192.0.2.250' } }),
    );
  });

  afterAll(async () => {
    await stack?.stop();
    await devnet?.stop();
  });

  it('charges paid calls to their payer: the third of one payer is 429 and not charged, another payer still pays', async () => {
    const first = await fundedPayer();
    const second = await fundedPayer();
    const answers = [
      await paidPing('198.51.100.10', first),
      await paidPing('198.51.100.10', first),
    ];
    expect(answers.map((response) => response.status)).toEqual([200, 200]);
    await expectRateLimited(await paidPing('198.51.100.10', first));
    expect(await balance(first)).toBe(1_000_000n - 2n * 10_000n);
    expect((await paidPing('198.51.100.10', second)).status).toBe(200);
    expect(await balance(second)).toBe(1_000_000n - 10_000n);
  });

  it('charges an unpaid challenge to the client’s IP bucket, which a paid call does not touch', async () => {
    for (let index = 0; index < LIMITS.ip.burst; index += 1) {
      expect(
        (
          await fetch(`${stack.url}/ping_service`, {
            headers: { 'x-forwarded-for': '198.51.100.11' },
          })
        ).status,
      ).toBe(402);
    }
    await expectRateLimited(
      await fetch(`${stack.url}/ping_service`, { headers: { 'x-forwarded-for': '198.51.100.11' } }),
    );
    // Another client behind the same proxy has its own bucket; a paid call goes by its payer.
    expect(
      (
        await fetch(`${stack.url}/ping_service`, {
          headers: { 'x-forwarded-for': '198.51.100.12' },
        })
      ).status,
    ).toBe(402);
    expect((await paidPing('198.51.100.11', await fundedPayer())).status).toBe(200);
  });

  it('gives a route that calls out a tighter bucket than the client’s own', async () => {
    const sync = () =>
      fetch(`${stack.url}/sync_policy_registration`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${stack.adminToken}`,
          'x-forwarded-for': '198.51.100.13',
        },
        body: JSON.stringify({ policyId: '1', txHash: `0x${'ab'.repeat(32)}` }),
      });
    for (let index = 0; index < LIMITS.outbound.burst; index += 1)
      expect((await sync()).status).not.toBe(429);
    expect(await expectRateLimited(await sync())).toBeLessThanOrEqual(60);
    // The client's per-IP bucket still has tokens for a free route.
    expect(
      (await fetch(`${stack.url}/catalog`, { headers: { 'x-forwarded-for': '198.51.100.13' } }))
        .status,
    ).toBe(200);
  });

  it('gives sign-in its own tighter bucket', async () => {
    const nonce = () =>
      fetch(`${stack.url}/consumer/auth/nonce`, {
        method: 'POST',
        headers: { 'x-forwarded-for': '198.51.100.14' },
      });
    expect((await nonce()).status).toBe(200);
    await expectRateLimited(await nonce());
  });
});
