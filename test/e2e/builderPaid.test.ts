// The launch pack's priced routes end to end on the devnet: POST /builder/suggest_names ($0.01) and
// POST /builder/brand_pack ($0.05) answer 402 unpaid and their result when the official x402
// client pays; a bad body is a 400 with its field list before any 402, so nothing is charged. With
// the devnet model stand-in configured the names come from it (its request carries the idea);
// with it failing the fallback answers and says why. brand_pack's picks list only domains the live
// RDAP check found AVAILABLE.
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { fallbackNames } from '../../core/builder';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import { standInNames, startDevnetLlm, type DevnetLlm } from '../../devnet/llm';
import { DEVNET_REGISTERED_NAMES } from '../../devnet/rdap/names';
import { startDevnetRdapRegistry, type DevnetRdapRegistry } from '../../devnet/rdap/registry';
import { createChainPublicClient, createChainWalletClient } from '../../platform/chain/clients';
import { mintToken, readTokenBalance } from '../../platform/chain/tokens';
import { createLlmClient } from '../../platform/llm';
import { createRdapClient } from '../../platform/rdap';
import { startTestStack, type TestStack } from '../support/stack';
import { officialFetch } from '../support/officialClient';

const POLLING = { pollingIntervalMs: 20 };
const SUGGEST_PRICE = 10_000n;
const PACK_PRICE = 50_000n;
const IDEA = 'Coffee roasting subscriptions for offices';
/** Names the stand-in model suggests for IDEA, registered so the pack meets TAKEN domains. */
const REGISTERED = ['coffeeverse.test', 'coffeeverse.example', 'coffeemind.test'];

let devnet: DevnetChains;
let registry: DevnetRdapRegistry;
let llm: DevnetLlm;
let stack: TestStack;

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
  registry = await startDevnetRdapRegistry({
    registeredNames: [...DEVNET_REGISTERED_NAMES, ...REGISTERED],
  });
  llm = await startDevnetLlm();
  stack = await startTestStack({
    x402: { devnet, settleTimeoutMs: 5_000 },
    rdap: createRdapClient({
      addressPolicy: 'development',
      bootstrapSource: registry.bootstrapUrl,
      lookupTimeoutMs: 2_000,
    }),
    builder: {
      nameModel: createLlmClient({
        apiKey: llm.apiKey,
        baseUrl: llm.baseUrl,
        model: 'stand-in-1',
        timeoutMs: 2_000,
      }),
      defaultTlds: ['test', 'example'],
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await llm?.stop();
  await registry?.stop();
  await devnet?.stop();
});

afterEach(() => llm.clearFaults());

function funding() {
  return devnet.info.chains.funding;
}

async function fundedPayer(): Promise<PrivateKeyAccount> {
  const payer = privateKeyToAccount(generatePrivateKey());
  const minter = createChainWalletClient(funding(), devnet.keys.deployer.account, POLLING);
  await mintToken({
    publicClient: createChainPublicClient(funding(), POLLING),
    minter,
    token: funding().token.address,
    to: payer.address,
    amountAtomic: 1_000_000n,
  });
  return payer;
}

function balance(payer: PrivateKeyAccount): Promise<bigint> {
  return readTokenBalance(
    createChainPublicClient(funding(), POLLING),
    funding().token.address,
    payer.address,
  );
}

async function paidPost(payer: PrivateKeyAccount, path: string, body: unknown) {
  const response = await officialFetch(payer, {
    network: 'eip155:196',
    asset: funding().token.address,
  })(`${stack.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  expect(decodePaymentResponseHeader(response.headers.get('payment-response')!).success).toBe(true);
  return (await response.json()) as any;
}

function unpaidPost(path: string, body: unknown): Promise<Response> {
  return fetch(`${stack.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('the challenge and bad input', () => {
  it.each([
    ['/builder/suggest_names', SUGGEST_PRICE],
    ['/builder/brand_pack', PACK_PRICE],
  ])('%s answers 402 with its price when unpaid', async (path, price) => {
    const response = await unpaidPost(path, { idea: IDEA });
    expect(response.status).toBe(402);
    expect(await response.text()).toBe('{}');
    const required = decodePaymentRequiredHeader(response.headers.get('payment-required')!);
    expect(required.accepts[0]).toMatchObject({
      network: 'eip155:196',
      amount: price.toString(),
      asset: funding().token.address,
    });
  });

  it('answers a bad body with 400 and the field list before any 402, and a paying client is not charged', async () => {
    const cases: Array<[string, unknown, string[]]> = [
      ['/builder/suggest_names', {}, ['idea']],
      [
        '/builder/suggest_names',
        { idea: ' ', count: 21, style: 'loud', seed: 1 },
        ['count', 'idea', 'seed', 'style'],
      ],
      ['/builder/brand_pack', { idea: 7, count: 3 }, ['count', 'idea']],
      ['/builder/brand_pack', ['coffee'], ['(root)']],
    ];
    for (const [path, body, fields] of cases) {
      const response = await unpaidPost(path, body);
      const answer = (await response.json()) as any;
      expect(response.status).toBe(400);
      expect(response.headers.get('payment-required')).toBeNull();
      expect(answer.code).toBe('REQUEST_INVALID');
      expect(answer.details.map((detail: any) => detail.field).sort()).toEqual(fields);
    }
    const payer = await fundedPayer();
    const response = await officialFetch(payer, {
      network: 'eip155:196',
      asset: funding().token.address,
    })(`${stack.url}/builder/suggest_names`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ idea: IDEA, count: 0 }),
    });
    expect(response.status).toBe(400);
    expect(await balance(payer)).toBe(1_000_000n);
  });
});

describe('POST /builder/suggest_names, paid', () => {
  it('answers the model’s names when a model is configured, and the model was asked about the idea', async () => {
    const payer = await fundedPayer();
    const body = await paidPost(payer, '/builder/suggest_names', { idea: IDEA, count: 4 });
    expect(body).toEqual({
      idea: IDEA,
      style: 'brandable',
      count: 4,
      source: 'model',
      model: expect.any(String),
      names: standInNames(IDEA, 4),
    });
    const request = llm.requests.at(-1)!;
    expect(request.idea).toBe(IDEA);
    expect(request.authorization).toBe(`Bearer ${llm.apiKey}`);
    expect(await balance(payer)).toBe(1_000_000n - SUGGEST_PRICE);
  });

  it.each([
    ['HTTP_500', 'HTTP_ERROR'],
    ['RESET', 'NETWORK'],
    ['INVALID_NAMES', 'NO_VALID_NAMES'],
  ] as const)('falls back and says so when the model answers %s', async (fault, reason) => {
    llm.setFaults({ answer: fault });
    const payer = await fundedPayer();
    const body = await paidPost(payer, '/builder/suggest_names', {
      idea: IDEA,
      count: 6,
      style: 'descriptive',
    });
    expect(body).toEqual({
      idea: IDEA,
      style: 'descriptive',
      count: 6,
      source: 'fallback',
      fallbackReason: reason,
      names: fallbackNames(IDEA, { count: 6, style: 'descriptive' }),
    });
  });

  it('falls back when the model is down altogether', async () => {
    const down = await startDevnetLlm();
    const baseUrl = down.baseUrl;
    await down.stop();
    const local = await startTestStack({
      builder: {
        nameModel: createLlmClient({ apiKey: 'k', baseUrl, model: 'gone', timeoutMs: 1_000 }),
        defaultTlds: ['test'],
      },
    });
    try {
      const response = await fetch(`${local.url}/builder/suggest_names`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ idea: IDEA, count: 3 }),
      });
      expect(await response.json()).toMatchObject({
        source: 'fallback',
        fallbackReason: 'NETWORK',
        names: fallbackNames(IDEA, { count: 3 }),
      });
    } finally {
      await local.stop();
    }
  });
});

describe('POST /builder/brand_pack, paid', () => {
  it('answers suggestions, live domain results, ranked picks listing only AVAILABLE domains, and SEO tips', async () => {
    const payer = await fundedPayer();
    const pack = await paidPost(payer, '/builder/brand_pack', { idea: IDEA });
    expect(await balance(payer)).toBe(1_000_000n - PACK_PRICE);
    expect(pack.suggestions).toMatchObject({ source: 'model', names: standInNames(IDEA, 10) });
    expect(pack.domains.note).toMatch(/not a purchase or a reservation/);
    const results: Array<{ domain: string; name: string; status: string }> = pack.domains.results;
    expect(results).toHaveLength(20);
    const statusOf = new Map(results.map((result) => [result.domain, result.status]));
    for (const domain of REGISTERED) expect(statusOf.get(domain)).toBe('TAKEN');
    expect(statusOf.get('roastingverse.test')).toBe('AVAILABLE');
    expect(pack.picks.length).toBeGreaterThan(0);
    for (const pick of pack.picks) {
      const available = results
        .filter((result) => result.name === pick.name && result.status === 'AVAILABLE')
        .map((result) => result.domain)
        .sort();
      expect(pick.availableDomains).toEqual(available);
      for (const domain of pick.availableDomains) expect(statusOf.get(domain)).toBe('AVAILABLE');
    }
    expect(pack.picks.flatMap((pick: any) => pick.availableDomains)).not.toEqual(
      expect.arrayContaining(['coffeemind.test']),
    );
    expect(pack.seoTips.name).toBe(pack.picks[0].name);
  });

  it('lists no available domain while the registry cannot answer', async () => {
    registry.setFaults({ answer: 'HTTP_500' });
    try {
      const payer = await fundedPayer();
      const pack = await paidPost(payer, '/builder/brand_pack', {
        idea: 'Bicycle repair vans for city commuters',
      });
      expect(pack.domains.results.every((result: any) => result.status === 'UNKNOWN')).toBe(true);
      for (const pick of pack.picks) expect(pick.availableDomains).toEqual([]);
    } finally {
      registry.clearFaults();
    }
  });
});
