import { hashJson } from '../canon/jcs';
import {
  ibanValid,
  luhnValid,
  REDACTION_MARKERS as M,
  redactPaymentMetadata,
  redactString,
} from './redact';

test('Luhn and IBAN checks', () => {
  expect(luhnValid('4111 1111 1111 1111')).toBe(true);
  expect(luhnValid('4111-1111-1111-1112')).toBe(false);
  expect(ibanValid('GB82 WEST 1234 5698 7654 32')).toBe(true);
  expect(ibanValid('GB82WEST12345698765433')).toBe(false);
});

test.each([
  ['mail alice@example.com now', `mail ${M.email} now`],
  ['call +44 20 7946 0958', `call ${M.phone}`],
  ['call (415) 555-2671', `call ${M.phone}`],
  ['Authorization: Bearer abc.def-ghi_123', `Authorization: ${M.bearer}`],
  ['key sk_live_4eC39HqLyjWDarjtT1zdp7dc', `key ${M.apiKey}`],
  ['api_key=abcdef1234567890', `api_key=${M.apiKey}`],
  ['card 4111 1111 1111 1111 exp', `card ${M.card} exp`],
  ['iban GB82 WEST 1234 5698 7654 32', `iban ${M.iban}`],
])('redacts %j', (input, output) => {
  expect(redactString(input)).toBe(output);
});

test.each([
  'order 1234567890123 (not Luhn-valid? checked below)',
  'amount 50000 at 2026-11-22T09:00:00Z',
  'GB82WEST12345698765433',
  'intent 0xabababababababababababababababababababababababababababababababab',
])('keeps %j where nothing matches', (input) => {
  const numbers = input.match(/[0-9]{13,19}/g) ?? [];
  if (numbers.some((n) => luhnValid(n))) return;
  expect(redactString(input)).toBe(input);
});

test('walks objects and arrays, keeps keys and non-strings, and hashes the result', () => {
  const result = redactPaymentMetadata({
    customer: { email: 'bob@shop.example', tags: ['vip', 'card 4242424242424242'] },
    amount: 12,
    paid: true,
    note: null,
  });
  expect(result.redacted).toEqual({
    customer: { email: M.email, tags: ['vip', `card ${M.card}`] },
    amount: 12,
    paid: true,
    note: null,
  });
  expect(result.metadataHash).toBe(hashJson(result.redacted));
  expect(
    redactPaymentMetadata({
      customer: { email: 'eve@other.example', tags: ['vip', 'card 4000056655665556'] },
      amount: 12,
      paid: true,
      note: null,
    }).metadataHash,
  ).toBe(result.metadataHash);
});

test('a "__proto__" key from JSON stays an own key of the copy, redacted inside, and the copy keeps its prototype', () => {
  const metadata = JSON.parse(
    '{"a":{"__proto__":{"email":"bob@shop.example","isAdmin":true}},"__proto__":"x"}',
  );
  const result = redactPaymentMetadata(metadata);
  const redacted = result.redacted as Record<string, Record<string, unknown>>;
  expect(Object.keys(redacted)).toEqual(['a', '__proto__']);
  expect(Object.getPrototypeOf(redacted.a)).toBe(Object.prototype);
  expect(Object.getOwnPropertyDescriptor(redacted.a, '__proto__')?.value).toEqual({
    email: M.email,
    isAdmin: true,
  });
  expect((redacted.a as { isAdmin?: unknown }).isAdmin).toBeUndefined();
  expect(JSON.stringify(result.redacted)).toBe(
    '{"a":{"__proto__":{"email":"[REDACTED:EMAIL]","isAdmin":true}},"__proto__":"x"}',
  );
  expect(result.metadataHash).toBe(hashJson(result.redacted));
});
