// The pure half of creating a consumer intent: the merchant's x402 v2 challenge decoded with the
// official helper and the payable entry chosen; the quote arithmetic and its JSON; the SpendIntent
// built for the policy (the mapping docs/consumer.md documents); the request body's checks.
import { encodePaymentRequiredHeader } from '@x402/core/http';
import { AppError } from '../../../../core/errors';
import { validateSpendIntent } from '../../../../core/validation/intent';
import type { ConsumerRailAsset, ConsumerRails } from '../../../kit';
import { parseConsumerIntentRequest } from './body';
import { challengeOf, chooseRequirements } from './merchantQuote';
import { isDomainName, merchantRouteOf, merchantUrl } from './merchantRoutes';
import { buildQuote, buildSpendIntent, nonceOfIntentId } from './quoteIntent';

const USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const USDT0 = '0x779Ded0c9e1022225f8E0630b35a9b54bE713736';
const MERCHANT = '0x52908400098527886E0F7030069857D2E4169EE7';
const TREASURY = '0x8617E340B3D01FA5F11F306F4090FD50E238070D';

function rail(overrides: Partial<ConsumerRailAsset>): ConsumerRailAsset {
  return {
    network: 'eip155:8453',
    chainId: 8453,
    rpcUrl: 'http://127.0.0.1:1',
    token: USDC,
    decimals: 6,
    symbol: 'USDC',
    name: 'USD Coin',
    version: '2',
    treasury: TREASURY,
    ...overrides,
  };
}

const RAILS: ConsumerRails = {
  settlement: rail({}),
  funding: rail({
    network: 'eip155:196',
    chainId: 196,
    token: USDT0,
    name: 'USD\u20AE0',
    version: '1',
  }),
  providers: { 'spendctl-domains': 'http://127.0.0.1:4100' },
  spreadBps: 50n,
};

function entry(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    scheme: 'exact',
    network: 'eip155:8453',
    asset: USDC,
    amount: '50000',
    payTo: MERCHANT,
    maxTimeoutSeconds: 300,
    extra: { name: 'USD Coin', version: '2' },
    ...overrides,
  };
}

function paymentRequired(accepts: unknown[], version = 2): Record<string, unknown> {
  return {
    x402Version: version,
    error: 'Payment required',
    resource: {
      url: 'http://127.0.0.1:4100/domains/check?domain=a.test',
      mimeType: 'application/json',
    },
    accepts,
  };
}

function response(status: number, header: string | null) {
  return {
    status,
    headers: { get: (name: string) => (name === 'payment-required' ? header : null) },
  };
}

function providerCode(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return error instanceof AppError ? error.code : 'not an AppError';
  }
  return 'no error';
}

describe('the merchant’s challenge', () => {
  test('the first entry the settlement rail can pay is chosen verbatim, with the resource', () => {
    const other = entry({
      network: 'eip155:196',
      asset: USDT0,
      extra: { name: 'USD\u20AE0', version: '1' },
    });
    const chosen = chooseRequirements(
      paymentRequired([other, entry(), entry({ amount: '1' })]),
      RAILS.settlement,
    );
    expect(chosen).toEqual({
      requirements: entry(),
      resource: paymentRequired([]).resource,
      amountAtomic: 50000n,
      payTo: MERCHANT.toLowerCase(),
      maxTimeoutSeconds: 300,
    });
  });

  test.each([
    ['another scheme', { scheme: 'upto' }],
    ['another network', { network: 'eip155:1' }],
    ['another asset', { asset: USDT0 }],
    ['no EIP-712 name', { extra: { version: '2' } }],
    ['another EIP-712 version', { extra: { name: 'USD Coin', version: '1' } }],
    ['no extra', { extra: undefined }],
    ['a zero amount', { amount: '0' }],
    ['a decimal amount', { amount: '0.05' }],
    ['a malformed payTo', { payTo: '0x1234' }],
    ['no timeout', { maxTimeoutSeconds: 0 }],
  ])('%s is not payable', (_name, overrides) => {
    expect(chooseRequirements(paymentRequired([entry(overrides)]), RAILS.settlement)).toBeNull();
  });

  test('a v1 challenge, one without a resource or without accepts is not usable', () => {
    expect(chooseRequirements(paymentRequired([entry()], 1), RAILS.settlement)).toBeNull();
    expect(
      chooseRequirements({ ...paymentRequired([entry()]), resource: null }, RAILS.settlement),
    ).toBeNull();
    expect(
      chooseRequirements({ x402Version: 2, resource: { url: 'x' } }, RAILS.settlement),
    ).toBeNull();
    expect(chooseRequirements('402', RAILS.settlement)).toBeNull();
  });

  test('a 402 is read from its PAYMENT-REQUIRED header (the official encoding)', () => {
    const header = encodePaymentRequiredHeader(paymentRequired([entry()]) as never);
    expect(challengeOf(response(402, header), RAILS.settlement).amountAtomic).toBe(50000n);
  });

  test('anything else is PROVIDER_UNAVAILABLE', () => {
    const header = encodePaymentRequiredHeader(paymentRequired([entry()]) as never);
    expect(providerCode(() => challengeOf(response(503, header), RAILS.settlement))).toBe(
      'PROVIDER_UNAVAILABLE',
    );
    expect(providerCode(() => challengeOf(response(200, null), RAILS.settlement))).toBe(
      'PROVIDER_UNAVAILABLE',
    );
    expect(providerCode(() => challengeOf(response(402, null), RAILS.settlement))).toBe(
      'PROVIDER_UNAVAILABLE',
    );
    expect(providerCode(() => challengeOf(response(402, '%%%not base64'), RAILS.settlement))).toBe(
      'PROVIDER_UNAVAILABLE',
    );
    const unpayable = encodePaymentRequiredHeader(
      paymentRequired([entry({ network: 'eip155:1' })]) as never,
    );
    expect(providerCode(() => challengeOf(response(402, unpayable), RAILS.settlement))).toBe(
      'PROVIDER_UNAVAILABLE',
    );
  });
});

describe('the quote and the SpendIntent', () => {
  const challenge = chooseRequirements(paymentRequired([entry()]), RAILS.settlement)!;
  const quotedAt = new Date('2026-11-22T09:00:00.000Z');
  const url = 'http://127.0.0.1:4100/domains/check?domain=a.test';

  test('50000 at 0 bp fee and 50 bp spread: fee 0, spread 250, funding 50250, expiring 5 minutes later', () => {
    const quote = buildQuote({
      quoteId: 'cq_0123456789abcdef01',
      quotedAt,
      capability: 'domains.check',
      provider: 'spendctl-domains',
      feeBps: 0,
      rails: RAILS,
      url,
      method: 'GET',
      challenge,
    });
    expect(quote.fundingAtomic).toBe(50250n);
    expect(quote.expiresAt.toISOString()).toBe('2026-11-22T09:05:00.000Z');
    expect(quote.json).toEqual({
      quoteId: 'cq_0123456789abcdef01',
      quotedAt: '2026-11-22T09:00:00.000Z',
      expiresAt: '2026-11-22T09:05:00.000Z',
      capability: 'domains.check',
      provider: 'spendctl-domains',
      providerCost: { network: 'eip155:8453', asset: USDC.toLowerCase(), amount: '50000' },
      feeBps: 0,
      fee: '0',
      spreadBps: 50,
      spread: '250',
      funding: {
        network: 'eip155:196',
        asset: USDT0.toLowerCase(),
        amount: '50250',
        payTo: TREASURY.toLowerCase(),
      },
      merchant: {
        url,
        method: 'GET',
        payTo: MERCHANT.toLowerCase(),
        maxTimeoutSeconds: 300,
        requirements: entry(),
        resource: paymentRequired([]).resource,
      },
    });
  });

  test('a fee rounds up on the provider cost, beside the spread', () => {
    const quote = buildQuote({
      quoteId: 'cq_0123456789abcdef01',
      quotedAt,
      capability: 'domains.check',
      provider: 'spendctl-domains',
      feeBps: 3,
      rails: RAILS,
      url,
      method: 'GET',
      challenge,
    });
    expect(quote.json).toMatchObject({ fee: '15', spread: '250', funding: { amount: '50265' } });
  });

  test('the SpendIntent: the consumer’s funding amount in the policy’s asset, to the merchant, until the quote expires', () => {
    const intentId = 'ci_00000000000000000000002a';
    const wire = buildSpendIntent({
      intentId,
      policy: {
        policyId: '42',
        policyHash: `0x${'11'.repeat(32)}`,
        asset: { network: 'eip155:196', token: USDT0 },
      },
      wallet: '0xABCDEF0000000000000000000000000000000001',
      category: 'domains',
      provider: 'spendctl-domains',
      capability: 'domains.check',
      params: { domain: 'a.test' },
      summary: 'a.test',
      recipient: MERCHANT,
      fundingAtomic: 50250n,
      fundingAsset: { network: 'eip155:196', token: USDT0 },
      quoteExpiresAt: new Date('2026-11-22T09:05:00.000Z'),
      endpoint: url,
    });
    expect(wire).toEqual({
      policyId: '42',
      policyHash: `0x${'11'.repeat(32)}`,
      agentId: 'consumer:0xabcdef0000000000000000000000000000000001',
      category: 'domains',
      provider: 'spendctl-domains',
      capability: 'domains.check',
      item: { description: 'domains.check a.test', params: { domain: 'a.test' } },
      recipient: MERCHANT.toLowerCase(),
      network: 'eip155:196',
      token: USDT0.toLowerCase(),
      amount: '50250',
      deadline: '2026-11-22T09:05:00Z',
      nonce: '42',
      endpoint: url,
    });
    const validated = validateSpendIntent(wire, quotedAt);
    expect(validated.ok).toBe(true);
    expect(nonceOfIntentId('ci_ffffffffffffffffffffffff')).toBe(2n ** 96n - 1n);
    expect(() => nonceOfIntentId('cq_0123')).toThrow(RangeError);
  });
});

describe('the request', () => {
  test('domains.check takes {domain}, lowercased; the merchant URL carries it', () => {
    const request = parseConsumerIntentRequest({
      capability: 'domains.check',
      params: { domain: 'Example.TEST' },
      idempotencyKey: 'k-1',
    });
    expect(request).toEqual({
      capability: 'domains.check',
      params: { domain: 'example.test' },
      idempotencyKey: 'k-1',
    });
    const route = merchantRouteOf('domains.check')!;
    expect(merchantUrl('http://127.0.0.1:4100/', route, { domain: 'example.test' })).toBe(
      'http://127.0.0.1:4100/domains/check?domain=example.test',
    );
    expect(merchantRouteOf('domains.register')).toBeNull();
    expect(merchantRouteOf('toString')).toBeNull();
  });

  test.each([
    ['a.test', true],
    ['xn--bcher-kva.example', true],
    ['localhost', false],
    ['-a.test', false],
    ['a..test', false],
    ['a.test.', false],
    [`${'a'.repeat(64)}.test`, false],
  ])('%s is a domain name: %s', (name, expected) => {
    expect(isDomainName(name)).toBe(expected);
  });

  test('every problem is one field of REQUEST_INVALID', () => {
    const problems = (raw: unknown) => {
      try {
        parseConsumerIntentRequest(raw);
      } catch (error) {
        return (error as AppError).details;
      }
      return null;
    };
    expect(problems({ capability: 'Domains check', params: [], idempotencyKey: '' })).toEqual([
      { field: 'capability', reason: 'must be a capability id such as domains.check' },
      { field: 'params', reason: 'must be a JSON object' },
      { field: 'idempotencyKey', reason: 'must be 1–128 characters' },
    ]);
    expect(problems({ capability: 'domains.check', params: {} })).toEqual([
      { field: 'params.domain', reason: 'is required' },
    ]);
    expect(problems({ capability: 'gifts.x', params: { anything: 1 } })).toBeNull();
  });
});
