// Hostile values for bodies, parameters and headers: junk of every JSON type (lone surrogates,
// NUL, 1e400, 400-digit numbers, nesting thousands deep, duplicate and __proto__ keys), plausible
// values per field name so requests get past the first check, and mutations of valid documents.
import fc from 'fast-check';

/** JSON text written verbatim (1e400, duplicate keys, deep nesting): what JSON.stringify cannot produce. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON text of a value that may hold RawJson parts. */
export function jsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}:${jsonText(item)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What a fuzzed request may name: the stack's real credentials and records, so checks past auth run. */
export interface FuzzWorld {
  readonly adminToken: string;
  readonly ownerToken: string;
  readonly consumerToken: string;
  readonly ownerAddress: string;
  readonly policyId: string;
  readonly policyHash: string;
  /** A valid intent against the policy (deadline hours ahead). */
  readonly intent: Record<string, unknown>;
  /** A valid policy document of the owner. */
  readonly policyDocument: Record<string, unknown>;
  readonly intentHash: string | null;
  readonly receiptId: string | null;
  readonly pollRef: string | null;
  /** The inbound channel secrets the stack verifies (Telegram's secret token, Slack's signing secret). */
  readonly telegramSecret: string;
  readonly slackSigningSecret: string;
}

export const hexBytes = (bytes: number): fc.Arbitrary<string> =>
  fc
    .uint8Array({ minLength: bytes, maxLength: bytes })
    .map((value) => Buffer.from(value).toString('hex'));

const SPECIAL_STRINGS = [
  '\ud800',
  'a\udfffb',
  '\udc00\ud800',
  '\u0000',
  'x\u0000y',
  '',
  ' ',
  '\u202e',
  '\ufeff',
  '\uffff',
  '%zz',
  '%00',
  '../../etc/passwd',
  "'; DROP TABLE policy.policies; --",
  '${7*7}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  'null',
  'undefined',
  'NaN',
  '0x',
  `0x${'f'.repeat(64)}`,
  'é'.repeat(20),
  '🙂',
  '\r\n',
  '\\',
  '"',
  '__proto__',
  'constructor',
  '9'.repeat(100),
  'x'.repeat(5000),
];

export const junkString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 30 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 10 }), fc.constantFrom('\ud800', '\udfff', '\u0000'))
      .map(([text, bad]) => `${text}${bad}${text}`),
  },
);

const HUGE_NUMBERS = [
  '1e400',
  '-1e400',
  '1e-400',
  '1E+9999',
  '-0',
  '0.1e-999',
  '9007199254740993',
  `1${'0'.repeat(400)}`,
  `-${'9'.repeat(80)}`,
];
export const hugeNumber: fc.Arbitrary<RawJson> = fc
  .constantFrom(...HUGE_NUMBERS)
  .map((text) => new RawJson(text));

function nested(depth: number, shape: 'array' | 'object'): RawJson {
  return new RawJson(
    shape === 'array'
      ? `${'['.repeat(depth)}${']'.repeat(depth)}`
      : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
  );
}

export const deepNesting: fc.Arbitrary<RawJson> = fc
  .tuple(
    fc.oneof(fc.integer({ min: 50, max: 200 }), fc.integer({ min: 1000, max: 12_000 })),
    fc.constantFrom('array' as const, 'object' as const),
  )
  .map(([depth, shape]) => nested(depth, shape));

const trickyObject: fc.Arbitrary<RawJson> = fc.constantFrom(
  new RawJson('{"__proto__":{"kind":"admin","isAdmin":true}}'),
  new RawJson('{"constructor":{"prototype":{"polluted":true}}}'),
  new RawJson('{"a":1,"a":{"b":2}}'),
  new RawJson('{"":""}'),
);

const junkLeaf: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: junkString },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: hugeNumber },
);

/** Any value, of any type, hostile at every level. */
export const junkValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: junkLeaf },
  { weight: 2, arbitrary: fc.array(junkLeaf, { maxLength: 5 }) },
  { weight: 2, arbitrary: fc.dictionary(junkString, junkLeaf, { maxKeys: 5 }) },
  { weight: 1, arbitrary: deepNesting },
  { weight: 1, arbitrary: trickyObject },
);

/** A valid document with one field replaced by junk, dropped, or a stranger added; or one string field poisoned. */
export function mutated(base: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(base);
  const stringKeys = keys.filter((key) => typeof base[key] === 'string');
  const variants: Array<fc.Arbitrary<unknown>> = [
    fc.constant(base),
    fc
      .tuple(fc.constantFrom(...keys), junkValue)
      .map(([key, value]) => ({ ...base, [key]: value })),
    fc
      .constantFrom(...keys)
      .map((key) => Object.fromEntries(Object.entries(base).filter(([name]) => name !== key))),
    fc.tuple(junkString, junkValue).map(([key, value]) => ({ ...base, [key]: value })),
  ];
  if (stringKeys.length > 0) {
    variants.push(
      fc
        .tuple(
          fc.constantFrom(...stringKeys),
          fc.constantFrom('\ud800', '\u0000', '\udfff\ud800', '%zz'),
        )
        .map(([key, poison]) => ({ ...base, [key]: `${String(base[key])}${poison}` })),
    );
  }
  return fc.oneof(...variants);
}

const METADATA_SAMPLES = [
  'ada@example.com',
  '+44 20 7946 0958',
  '4111 1111 1111 1111',
  'DE89370400440532013000',
  'Bearer abc.def.ghi',
  'sk_live_51Habc',
];

const GRAPHQL_DOCUMENTS = [
  '{ catalog { maturityOrder } }',
  'query A { catalog { maturityOrder } } query B { __typename }',
  'subscription { catalogChanged { kind id } }',
  'mutation { issueSignInNonce { nonce } }',
  '{ __schema { types { name } } }',
  '{ polcy(id: "1") { id } }',
  '{',
  'query ($p: ID!) { policy(id: $p) { id name owner } }',
  'mutation ($p: ID, $i: JSONObject) { preflightPayment(policyId: $p, intent: $i) }',
  'query ($p: ID) { policyLedgerWindow(policyId: $p) }',
  'fragment F on Query { catalog { maturityOrder } } { ...F ...F }',
  '{ a: __typename b: __typename c: __typename }',
];

/** Plausible values for a field, by its name: the real ones first, so the deeper checks run too. */
export function plausibleValue(name: string, world: FuzzWorld): fc.Arbitrary<unknown> {
  const hex32 = hexBytes(32).map((hex) => `0x${hex}`);
  const known = (value: string | null, fallback: fc.Arbitrary<string>) =>
    value === null ? fallback : fc.oneof(fc.constant(value), fallback);
  switch (name) {
    case 'policyId':
      return fc.constantFrom(
        world.policyId,
        '1',
        '0',
        '01',
        '-1',
        '1.5',
        ' 1',
        '9'.repeat(79),
        `${world.policyId}0`,
      );
    case 'intent':
      return mutated(world.intent);
    case 'intentHash':
      return known(world.intentHash, hex32);
    case 'policy':
      return mutated(world.policyDocument);
    case 'receiptId':
      return known(world.receiptId, hex32);
    case 'txHash':
      return hex32;
    case 'signature':
      return hexBytes(65).map((hex) => `0x${hex}`);
    case 'message':
      return fc.constantFrom(
        `127.0.0.1 wants you to sign in with your Ethereum account:\n${world.ownerAddress}\n\nURI: http://127.0.0.1\nVersion: 1\nChain ID: 196\nNonce: ${'0'.repeat(32)}\nIssued At: 2026-01-01T00:00:00Z`,
        'hello',
      );
    case 'metadata':
      return fc.dictionary(
        fc.string({ maxLength: 8 }),
        fc.oneof(
          fc.constantFrom(...METADATA_SAMPLES),
          junkString,
          hugeNumber,
          deepNesting,
          fc.dictionary(junkString, junkValue, { maxKeys: 3 }),
        ),
        { maxKeys: 6 },
      );
    case 'groupId':
      return hexBytes(12).map((hex) => `lg_${hex}`);
    case 'sourceAsset':
    case 'destinationAsset':
      return fc.constantFrom(
        `eip155:196|${String(world.intent.token)}`,
        'eip155:1|0x0',
        'solana:x|y',
      );
    case 'sourceAmountAtomic':
    case 'destinationAmountAtomic':
      return fc.constantFrom('1', '0', '-1', '1e3', '9'.repeat(90), '0x10');
    case 'query':
      return fc.constantFrom(...GRAPHQL_DOCUMENTS);
    case 'operationName':
      return fc.constantFrom('A', 'B', 'Nope', '');
    case 'variables':
      return fc.constantFrom({ p: world.policyId, i: world.intent }, { p: world.policyId });
    default:
      return fc.string({ maxLength: 40 });
  }
}
