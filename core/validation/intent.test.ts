// validateSpendIntent against every bound of DECISIONS "SpendIntent (wire)", each accepted at its
// edge and refused one step past it.
import { intentHash, itemHash } from '../canon/intent-hash';
import {
  NOW_MS,
  NOW_SECONDS,
  policySnapshot,
  RECIPIENT,
  TOKEN,
  wireIntent,
} from '../test-support/spend-fixtures';
import { spendIntentErrors, spendIntentToWire, validateSpendIntent } from './intent';

const policy = policySnapshot();

function errorsFor(overrides: Record<string, unknown>, now = NOW_MS) {
  const result = validateSpendIntent(wireIntent(policy, overrides), now);
  if (result.ok) throw new Error('expected the intent to be refused');
  return result.errors;
}

function fieldsIn(overrides: Record<string, unknown>): string[] {
  return errorsFor(overrides).map((e) => e.field);
}

describe('validateSpendIntent', () => {
  it('accepts the DECISIONS example and returns it in domain units with both hashes', () => {
    const result = validateSpendIntent(
      wireIntent(policy, {
        recipient: `0x${RECIPIENT.slice(2).toUpperCase()}`,
        endpoint: 'HTTPS://API.vendor.example:443/candles#x',
      }),
      NOW_MS,
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { intent } = result;
    expect(intent.amountAtomic).toBe(50_000n);
    expect(intent.deadlineUnixSeconds).toBe(NOW_SECONDS + 3600);
    expect(intent.nonce).toBe(1n);
    expect(intent.recipient).toBe(RECIPIENT);
    expect(intent.token).toBe(TOKEN);
    expect(intent.endpoint).toBe('https://api.vendor.example/candles');
    expect(intent.itemHash).toBe(
      itemHash({ params: { pair: 'EURUSD' }, description: 'EURUSD 1m candles, 24h' }),
    );
    expect(intent.intentHash).toBe(intentHash(intent));
  });

  it('round-trips through its wire form', () => {
    const first = validateSpendIntent(wireIntent(policy), NOW_MS);
    if (!first.ok) throw new Error('fixture refused');
    const again = validateSpendIntent(spendIntentToWire(first.intent), NOW_MS);
    expect(again).toEqual(first);
  });

  it('refuses a non-object', () => {
    expect(validateSpendIntent('{}', NOW_MS)).toEqual({
      ok: false,
      errors: [{ field: '(root)', reason: 'must be a JSON object' }],
    });
    expect(validateSpendIntent([], NOW_MS).ok).toBe(false);
  });

  it('refuses unknown top-level fields', () => {
    expect(errorsFor({ amountUsd: '1.00' })).toEqual([
      { field: 'amountUsd', reason: 'is not a known field' },
    ]);
  });

  it('lists every missing field', () => {
    const result = validateSpendIntent({}, NOW_MS);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => e.field)).toEqual([
      'policyId',
      'policyHash',
      'agentId',
      'category',
      'provider',
      'capability',
      'item',
      'recipient',
      'network',
      'token',
      'amount',
      'deadline',
      'nonce',
      'endpoint',
    ]);
  });

  it('reports all problems at once', () => {
    expect(fieldsIn({ amount: '0', category: 'Market', nonce: '-1' })).toEqual([
      'category',
      'amount',
      'nonce',
    ]);
  });

  describe('bounds', () => {
    it.each([
      ['agentId', 'a'.repeat(128), 'a'.repeat(129)],
      ['agentId', 'Bot_1.x:y-z', 'bot 1'],
      ['category', 'market-data.v2', 'Market-Data'],
      ['category', 'c'.repeat(64), 'c'.repeat(65)],
      ['provider', 'p'.repeat(253), 'p'.repeat(254)],
      ['provider', 'api.vendor.example', 'api vendor'],
      ['capability', 'quotes.read', 'Quotes.read'],
      ['capability', 'domains.check.*', 'quotes..read'],
      ['capability', `a${'b'.repeat(63)}`, `a${'b'.repeat(64)}`],
      ['recipient', `0x${RECIPIENT.slice(2).toUpperCase()}`, '0x1234'],
      ['token', TOKEN, `${TOKEN}00`],
      ['network', 'eip155:196', 'eip155:0'],
      ['network', 'eip155:8453', 'solana:mainnet'],
      ['amount', '1', '0'],
      ['amount', '9'.repeat(30), '1'.repeat(31)],
      ['amount', '50000', '050000'],
      ['amount', '50000', '5e4'],
      ['amount', '50000', 50000],
      ['nonce', '0', '01'],
      ['nonce', ((1n << 256n) - 1n).toString(), (1n << 256n).toString()],
      ['policyId', '0', '-1'],
      ['policyHash', `0x${'A'.repeat(64)}`, `0x${'a'.repeat(63)}`],
      ['endpoint', 'http://api.vendor.example/x', 'ftp://api.vendor.example/x'],
      [
        'endpoint',
        `https://a.example/${'x'.repeat(2048 - 18)}`,
        `https://a.example/${'x'.repeat(2048 - 17)}`,
      ],
    ])('%s: accepts %j, refuses %j', (field, good, bad) => {
      expect(validateSpendIntent(wireIntent(policy, { [field]: good }), NOW_MS).ok).toBe(true);
      expect(fieldsIn({ [field]: bad })).toEqual([field]);
    });

    it('item: description up to 500 characters', () => {
      expect(
        validateSpendIntent(wireIntent(policy, { item: { description: 'd'.repeat(500) } }), NOW_MS)
          .ok,
      ).toBe(true);
      expect(fieldsIn({ item: { description: 'd'.repeat(501) } })).toEqual(['item.description']);
    });

    it('item: canonical JSON up to 4096 bytes', () => {
      // {"p":"…"} is 8 bytes of frame around the value.
      expect(
        validateSpendIntent(wireIntent(policy, { item: { p: 'x'.repeat(4088) } }), NOW_MS).ok,
      ).toBe(true);
      expect(fieldsIn({ item: { p: 'x'.repeat(4089) } })).toEqual(['item']);
      // Multi-byte characters count as their UTF-8 bytes.
      expect(fieldsIn({ item: { p: '€'.repeat(1400) } })).toEqual(['item']);
    });

    it('item: must be a JSON object of JSON values', () => {
      expect(fieldsIn({ item: 'candles' })).toEqual(['item']);
      expect(fieldsIn({ item: { n: Number.NaN } })).toEqual(['item.n']);
    });

    it('deadline: parseable and strictly in the future of the given now', () => {
      expect(fieldsIn({ deadline: 'soon' })).toEqual(['deadline']);
      expect(errorsFor({ deadline: '2026-11-22T09:00:00Z' })).toEqual([
        { field: 'deadline', reason: 'must be in the future' },
      ]);
      expect(
        validateSpendIntent(wireIntent(policy, { deadline: '2026-11-22T09:00:01Z' }), NOW_MS).ok,
      ).toBe(true);
      // The same intent is refused once the caller's clock has passed its deadline.
      expect(
        validateSpendIntent(wireIntent(policy, { deadline: '2026-11-22T09:00:01Z' }), NOW_MS + 1000)
          .ok,
      ).toBe(false);
    });
  });

  it('requires the caller to pass a real clock reading', () => {
    expect(() => validateSpendIntent(wireIntent(policy), Number.NaN)).toThrow(TypeError);
  });
});

describe('spendIntentErrors', () => {
  it.each<[string, Record<string, unknown>]>([
    ['a valid intent', {}],
    ['an amount of zero', { amount: '0' }],
    ['a past deadline and an unknown field', { deadline: '2000-01-01T00:00:00Z', surprise: 1 }],
    ['a malformed recipient', { recipient: '0x12' }],
  ])('refuses exactly what validateSpendIntent refuses: %s', (_name, overrides) => {
    const raw = wireIntent(policy, overrides);
    const full = validateSpendIntent(raw, NOW_MS);
    expect(spendIntentErrors(raw, NOW_MS)).toEqual(full.ok ? [] : full.errors);
  });
});
