// Rate limits through the public surface, with buckets in PostgreSQL as deployed: the real default
// limits against a sign-in flood and GraphQL over HTTP; the real defaults on an x402 stack never
// throttle a paying client (the official client's 50 paid calls in a row) nor an agent's
// create → preflight → poll loop at 10 a second from one address; then tight limits for the
// per-payer bucket of paid calls, the challenge bucket a 402 costs, the per-principal bucket of
// signed-in callers and the tighter bucket of a route that calls out. Every refusal is
// 429 RATE_LIMITED with an honest Retry-After.
import { performance } from 'node:perf_hooks';
import type { PaymentRequired } from '@x402/core/types';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import type { RateLimits } from '../../gateway/rateLimit/limiter';
import { createChainPublicClient, createChainWalletClient } from '../../platform/chain/clients';
import { mintToken, readTokenBalance } from '../../platform/chain/tokens';
import { loadConfig } from '../../platform/config';
import { challengeOf, signedPaymentHeader } from '../../devnet/agents/x402Payer';
import { policyDocument, wireIntent } from '../../core/test-support/spend-fixtures';
import { formatIsoSeconds } from '../../core/validation/timestamp';
import { officialFetch } from '../support/officialClient';
import { postJson, startTestStack, type TestStack } from '../support/stack';

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
    const statuses = await inParallel(defaults.ip.burst * 3, 16, async () => {
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

describe('the default limits on an x402 stack: paying clients and agents are not throttled', () => {
  const defaults = loadConfig({}).rateLimit;
  const PING_PRICE = 10_000n;
  const PREFLIGHT_PRICE = 50_000n;
  let devnet: DevnetChains;
  let stack: TestStack;
  let token: string;

  async function fundedPayer(amountAtomic: bigint): Promise<PrivateKeyAccount> {
    const payer = privateKeyToAccount(generatePrivateKey());
    const funding = devnet.info.chains.funding;
    await mintToken({
      publicClient: createChainPublicClient(funding, POLLING),
      minter: createChainWalletClient(funding, devnet.keys.deployer.account, POLLING),
      token: funding.token.address,
      to: payer.address,
      amountAtomic,
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

  beforeAll(async () => {
    devnet = await startDevnetChains({ dataDir: null });
    stack = await startTestStack({ x402: { devnet }, rateLimits: defaults });
    token = devnet.info.chains.funding.token.address.toLowerCase();
  });

  afterAll(async () => {
    await stack?.stop();
    await devnet?.stop();
  });

  it('the official @x402/fetch client makes 50 paid GET /ping_service calls in a row from one address without a 429', async () => {
    const payer = await fundedPayer(1_000_000n);
    const pay = officialFetch(payer, { network: 'eip155:196', asset: token });
    const statuses: number[] = [];
    for (let call = 0; call < 50; call += 1) {
      const response = await pay(`${stack.url}/ping_service`);
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    expect(statuses).toEqual(new Array(50).fill(200));
    expect(await balance(payer)).toBe(1_000_000n - 50n * PING_PRICE);
  });

  it('an agent’s create → preflight → poll loop runs 10 times a second from one address without a 429', async () => {
    const created = await postJson(
      stack.url,
      '/create_spend_policy',
      { policy: policyDocument({ rateLimit: { callsPerHour: 1000 } }) },
      stack.adminToken,
    );
    expect(created.status).toBe(201);
    const policy = { policyId: created.body.policyId, policyHash: created.body.policyHash };
    const payer = await fundedPayer(10_000_000n);
    const pay = officialFetch(payer, { network: 'eip155:196', asset: token });
    const deadline = formatIsoSeconds(Math.floor(Date.now() / 1000) + 3600);
    const loop = async (round: number): Promise<number[]> => {
      const intent = wireIntent(policy, {
        token,
        deadline,
        nonce: String(round + 1),
        item: { description: 'candles', round },
      });
      const stored = await postJson(stack.url, '/create_spend_intent', {
        policyId: policy.policyId,
        intent,
      });
      const decided = await pay(`${stack.url}/preflight_payment`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ policyId: policy.policyId, intentHash: stored.body.intentHash }),
      });
      const decision = (await decided.json()) as any;
      const poll = await fetch(
        decision.escalation
          ? `${stack.url}/escalation_status/${decision.escalation.pollRef}`
          : `${stack.url}/receipt_status/${decision.receiptId}`,
      );
      await poll.arrayBuffer();
      return [stored.status, decided.status, poll.status];
    };
    // 30 rounds, one started every 100 ms (a pace, not an assertion: nothing here is timed).
    const rounds: Promise<number[]>[] = [];
    for (let round = 0; round < 30; round += 1) {
      rounds.push(loop(round));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const statuses = (await Promise.all(rounds)).flat();
    expect(statuses.filter((status) => status === 429)).toEqual([]);
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect(await balance(payer)).toBe(10_000_000n - 30n * PREFLIGHT_PRICE);
  });

  it('a burst of 300 anonymous nonce requests still meets 429', async () => {
    const statuses = await inParallel(300, 32, async () => {
      const response = await fetch(`${stack.url}/consumer/auth/nonce`, { method: 'POST' });
      if (response.status === 429) await expectRateLimited(response);
      else await response.arrayBuffer();
      return response.status;
    });
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
  });
});

describe('tight limits on an x402 stack behind a trusted proxy', () => {
  const LIMITS: RateLimits = {
    ip: { perMinute: 1, burst: 4 },
    challenge: { perMinute: 1, burst: 4 },
    principal: { perMinute: 1, burst: 3 },
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

  it('charges an unpaid challenge to the client’s challenge bucket, which neither a paid call nor a free route touches', async () => {
    for (let index = 0; index < LIMITS.challenge.burst; index += 1) {
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
    // The free routes of that client still have their own bucket.
    expect(
      (await fetch(`${stack.url}/catalog`, { headers: { 'x-forwarded-for': '198.51.100.11' } }))
        .status,
    ).toBe(200);
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

  it('charges a signed-in caller to its principal, wherever it calls from', async () => {
    const asAdmin = (client: string) =>
      fetch(`${stack.url}/catalog`, {
        headers: { authorization: `Bearer ${stack.adminToken}`, 'x-forwarded-for': client },
      });
    // One request from each of burst + 1 fresh addresses: no per-IP bucket could refuse any of them.
    let limited: Response | null = null;
    let last = '';
    for (let index = 0; index <= LIMITS.principal.burst && limited === null; index += 1) {
      last = `198.51.100.${40 + index}`;
      const response = await asAdmin(last);
      if (response.status === 429) limited = response;
      else expect(response.status).toBe(200);
    }
    expect(limited).not.toBeNull();
    await expectRateLimited(limited!);
    // An anonymous caller at that address keeps its own per-IP bucket.
    expect(
      (await fetch(`${stack.url}/catalog`, { headers: { 'x-forwarded-for': last } })).status,
    ).toBe(200);
  });
});
