// The SDK's intent is the service's: the same validator's verdicts, an intentHash equal to the
// service's fast encoder and to viem's hashTypedData over the typed data it hands a wallet, and
// all of it computed with no Buffer in reach (as in a browser).
import { hashTypedData } from 'viem';
import { intentHash as serviceIntentHash } from '../../core/canon/intent-hash';
import { validateSpendIntent } from '../../core/validation/intent';
import { buildSpendIntent, type SpendIntentInput } from './intent';
import { SpendControlError } from './errors';

const NOW = new Date(Date.UTC(2026, 10, 22, 9, 0, 0));
const INPUT: SpendIntentInput = {
  policyId: '76020000000000000000000000000000000000000000000000000000000000000001',
  policyHash: '0x9F0C2B6A4D7E5F1A3C8B2D4E6F708192A3B4C5D6E7F8091A2B3C4D5E6F708192',
  agentId: 'research-bot-1',
  category: 'market-data',
  provider: 'api.vendor.example',
  capability: 'quotes.read',
  item: { description: 'EURUSD 1m candles, 24h', params: { pair: 'EURUSD' } },
  recipient: '0x2222222222222222222222222222222222222222',
  network: 'eip155:196',
  token: '0x779DED0C9E1022225F8E0630B35A9B54BE713736',
  amountAtomic: 50_000n,
  deadline: new Date(NOW.getTime() + 3_600_000),
  nonce: 7n,
  endpoint: 'HTTPS://API.Vendor.Example:443/candles?b=2&a=1#top',
};

test('the built intent is the wire form the service validates, and its hash is the service’s', () => {
  const built = buildSpendIntent(INPUT, { now: NOW });
  const served = validateSpendIntent(built.wire, NOW);
  expect(served.ok).toBe(true);
  expect(built.intentHash).toBe(served.ok ? served.intent.intentHash : null);
  expect(built.intentHash).toBe(serviceIntentHash(built.intent));
  expect(built.intentHash).toBe(hashTypedData(built.typedData));
  expect(built.wire).toMatchObject({
    amount: '50000',
    deadline: '2026-11-22T10:00:00Z',
    nonce: '7',
    token: '0x779ded0c9e1022225f8e0630b35a9b54be713736',
    endpoint: 'https://api.vendor.example/candles?a=1&b=2',
  });
});

test('without Buffer (a browser) the SDK, loaded afresh, builds the same intent and hash', () => {
  const expected = buildSpendIntent(INPUT, { now: NOW }).intentHash;
  const saved = globalThis.Buffer;
  // @ts-expect-error: Node's Buffer taken away while the modules load and run
  delete globalThis.Buffer;
  try {
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const fresh = require('./intent') as typeof import('./intent');
      expect(typeof globalThis.Buffer).toBe('undefined');
      expect(fresh.buildSpendIntent(INPUT, { now: NOW }).intentHash).toBe(expected);
    });
  } finally {
    globalThis.Buffer = saved;
  }
});

test('two intents built alike without a nonce get two random nonces, hence two hashes', () => {
  const { nonce: _nonce, ...withoutNonce } = INPUT;
  const one = buildSpendIntent(withoutNonce, { now: NOW });
  const two = buildSpendIntent(withoutNonce, { now: NOW });
  expect(one.wire.nonce).not.toBe(two.wire.nonce);
  expect(one.intentHash).not.toBe(two.intentHash);
});

test('a refused intent throws INTENT_MALFORMED with the service’s field details, in its order', () => {
  const refusal = (() => {
    try {
      buildSpendIntent(
        {
          ...INPUT,
          amountAtomic: 0n,
          deadline: new Date(NOW.getTime() - 1000),
          category: 'Bad Cat',
        },
        { now: NOW },
      );
    } catch (error) {
      return error;
    }
    return null;
  })();
  const served = validateSpendIntent(
    {
      ...buildSpendIntent(INPUT, { now: NOW }).wire,
      amount: '0',
      category: 'Bad Cat',
      deadline: '2026-11-22T08:59:59Z',
    },
    NOW,
  );
  expect(refusal).toBeInstanceOf(SpendControlError);
  expect(refusal).toMatchObject({ code: 'INTENT_MALFORMED', status: null });
  expect((refusal as SpendControlError).details).toEqual(served.ok ? null : served.errors);
});
