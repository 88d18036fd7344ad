// Canonical JSON against the RFC 8785 vectors (Appendix B numbers, the 3.2.2 sample, the 3.2.3
// sort order) and the hash built on it.
import fc from 'fast-check';
import { keccak256, stringToBytes } from 'viem';
import { canonicalJson, CanonicalJsonError, hashJson } from './jcs';

function doubleFromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

// RFC 8785 Appendix B: IEEE-754 bit patterns and their required serialisation.
const APPENDIX_B: ReadonlyArray<readonly [string, string]> = [
  ['0000000000000000', '0'],
  ['8000000000000000', '0'],
  ['0000000000000001', '5e-324'],
  ['8000000000000001', '-5e-324'],
  ['7fefffffffffffff', '1.7976931348623157e+308'],
  ['ffefffffffffffff', '-1.7976931348623157e+308'],
  ['4340000000000000', '9007199254740992'],
  ['c340000000000000', '-9007199254740992'],
  ['4430000000000000', '295147905179352830000'],
  ['44b52d02c7e14af5', '9.999999999999997e+22'],
  ['44b52d02c7e14af6', '1e+23'],
  ['44b52d02c7e14af7', '1.0000000000000001e+23'],
  ['444b1ae4d6e2ef4e', '999999999999999700000'],
  ['444b1ae4d6e2ef4f', '999999999999999900000'],
  ['444b1ae4d6e2ef50', '1e+21'],
  ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
  ['3eb0c6f7a0b5ed8d', '0.000001'],
  ['41b3de4355555553', '333333333.3333332'],
  ['41b3de4355555554', '333333333.33333325'],
  ['41b3de4355555555', '333333333.3333333'],
  ['41b3de4355555556', '333333333.3333334'],
  ['41b3de4355555557', '333333333.33333343'],
  ['becbf647612f3696', '-0.0000033333333333333333'],
  ['43143ff3c1cb0959', '1424953923781206.2'],
];

describe('canonicalJson (RFC 8785)', () => {
  it.each(APPENDIX_B)('serialises the number with bits %s as %s', (bits, expected) => {
    expect(canonicalJson(doubleFromBits(bits))).toBe(expected);
    expect(canonicalJson([doubleFromBits(bits)])).toBe(`[${expected}]`);
  });

  it.each([
    ['7fffffffffffffff', 'NaN'],
    ['7ff0000000000000', 'Infinity'],
    ['fff0000000000000', '-Infinity'],
  ])('refuses the non-finite number with bits %s (%s)', (bits) => {
    expect(() => canonicalJson(doubleFromBits(bits))).toThrow(CanonicalJsonError);
    expect(() => canonicalJson({ nested: [doubleFromBits(bits)] })).toThrow(CanonicalJsonError);
  });

  it('serialises the RFC 3.2.2 sample object exactly', () => {
    // The input as the RFC writes it, parsed from JSON text (escapes and all).
    const input = JSON.parse(String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`);
    const expected = String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`;
    expect(canonicalJson(input)).toBe(expected);
    // RFC 3.2.4: the UTF-8 bytes that get hashed (the euro sign is e2 82 ac).
    const bytes = Buffer.from(stringToBytes(canonicalJson(input)));
    expect(bytes.subarray(0, 20).toString('hex')).toBe('7b226c69746572616c73223a5b6e756c6c2c7472');
    expect(bytes.includes(Buffer.from('e282ac', 'hex'))).toBe(true);
    expect(bytes.length).toBe(Buffer.byteLength(expected, 'utf8'));
  });

  it('sorts properties by UTF-16 code units as in RFC 3.2.3', () => {
    const input = JSON.parse(String.raw`{
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }`);
    // Escapes, not literals, so that no editor can normalise the characters under test.
    const expected =
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
      '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}';
    expect(canonicalJson(input)).toBe(expected);
  });

  it('refuses values that are not JSON rather than dropping them', () => {
    expect(() => canonicalJson(undefined)).toThrow(CanonicalJsonError);
    expect(() => canonicalJson({ a: undefined })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson({ a: 1n })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson({ a: () => 1 })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson({ when: new Date(0) })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson('\ud800')).toThrow(CanonicalJsonError);
    expect(() => canonicalJson({ '\udc00': 1 })).toThrow(CanonicalJsonError);
  });

  it('names the path of the offending value', () => {
    expect(() => canonicalJson({ a: [1, { b: Number.NaN }] })).toThrow(
      'a[1].b is not a finite number',
    );
  });

  it('ignores key order and whitespace of the source text', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value, null, 2);
        const reordered = JSON.parse(text, function reverseKeys(_key, v) {
          if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
          return Object.fromEntries(Object.entries(v).reverse());
        });
        expect(canonicalJson(reordered)).toBe(canonicalJson(value));
        expect(canonicalJson(JSON.parse(canonicalJson(value)))).toBe(canonicalJson(value));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('hashJson', () => {
  it('is keccak256 over the UTF-8 of the canonical form', () => {
    expect(hashJson({ b: 1, a: 'x' })).toBe(keccak256(stringToBytes('{"a":"x","b":1}')));
    expect(hashJson({ a: 'x', b: 1 })).toBe(hashJson({ b: 1, a: 'x' }));
  });
});
