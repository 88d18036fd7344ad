// Names reach a registry only as lowercase A-labels with the trailing dot stripped; anything a URL
// parser would reinterpret (paths, percent escapes, ports, userinfo) or DNS would refuse is refused.
import { domainToUnicode } from 'node:url';
import fc from 'fast-check';
import { InvalidDomainNameError, normaliseDomainName, suffixesOf } from './names';

describe('normaliseDomainName', () => {
  it.each([
    ['Taken.TEST', 'taken.test'],
    ['taken.test.', 'taken.test'],
    ['münchen.test', 'xn--mnchen-3ya.test'],
    ['MÜNCHEN.test.', 'xn--mnchen-3ya.test'],
    ['xn--mnchen-3ya.test', 'xn--mnchen-3ya.test'],
    ['faß.example', 'xn--fa-hia.example'],
    ['☃.test', 'xn--n3h.test'],
    ['ｅｘａｍｐｌｅ．test', 'example.test'],
    ['a-1.b2.co.uk', 'a-1.b2.co.uk'],
  ])('%s → %s', (input, expected) => {
    expect(normaliseDomainName(input)).toBe(expected);
  });

  it.each([
    ['', 'characters'],
    ['test', 'a name and a top-level domain'],
    ['a.test/x', 'only letters'],
    ['a%41.test', 'only letters'],
    ['a.test:80', 'only letters'],
    ['user@a.test', 'only letters'],
    ['a b.test', 'only letters'],
    ['a_b.test', 'only letters'],
    ['a..test', 'empty label'],
    ['.test', 'empty label'],
    ['a.test..', 'empty label'],
    ['-a.test', 'inner hyphens'],
    ['a-.test', 'inner hyphens'],
    ['ab--cd.test', 'xn--'],
    ['xn--zz.test', 'internationalised'],
    ['1.2.3.4', 'numeric'],
    [`${'a'.repeat(64)}.test`, 'longer than 63'],
    [`${'a.'.repeat(127)}test`, 'longer than 253'],
    ['x'.repeat(1025), 'characters'],
  ])('refuses %j (%s)', (input, reason) => {
    expect(() => normaliseDomainName(input)).toThrow(InvalidDomainNameError);
    expect(() => normaliseDomainName(input)).toThrow(reason);
  });

  it('refuses what is not a string', () => {
    expect(() => normaliseDomainName(42)).toThrow('not a string');
  });

  const label = fc
    .stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,20}[a-z0-9])?$/)
    .filter((text) => text.slice(2, 4) !== '--');
  const unicodeLabel = fc.string({
    unit: fc.constantFrom(...'abcdeéüßøλжあ漢0123456789'),
    minLength: 1,
    maxLength: 12,
  });
  const tld = fc.stringMatching(/^[a-z]{2,10}$/);
  const name = fc
    .tuple(fc.array(fc.oneof(label, unicodeLabel), { minLength: 1, maxLength: 4 }), tld)
    .map(([labels, top]) => [...labels, top].join('.'));

  it('is idempotent, yields lowercase LDH A-labels, and ignores case and one trailing dot', () => {
    fc.assert(
      fc.property(name, (input) => {
        let normal: string;
        try {
          normal = normaliseDomainName(input);
        } catch (error) {
          // Unicode labels IDNA refuses (e.g. mixed scripts) are refused; nothing else may be.
          expect(error).toBeInstanceOf(InvalidDomainNameError);
          return;
        }
        expect(normal).toMatch(/^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]+$/);
        expect(normal.length).toBeLessThanOrEqual(253);
        expect(normaliseDomainName(normal)).toBe(normal);
        // ASCII letters only: JavaScript upper-cases ß to SS, which IDNA rightly treats as another name.
        expect(
          normaliseDomainName(`${input.replace(/[a-z]/g, (letter) => letter.toUpperCase())}.`),
        ).toBe(normal);
        expect(normaliseDomainName(domainToUnicode(normal))).toBe(normal);
      }),
      { numRuns: 500 },
    );
  });

  it('always answers an A-label or an InvalidDomainNameError, for any input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (input) => {
        try {
          expect(normaliseDomainName(input)).toMatch(/^[a-z0-9.-]+$/);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidDomainNameError);
        }
      }),
      { numRuns: 1_000 },
    );
  });
});

describe('suffixesOf', () => {
  it('lists every suffix, longest first', () => {
    expect(suffixesOf('a.b.co.uk')).toEqual(['a.b.co.uk', 'b.co.uk', 'co.uk', 'uk']);
  });
});
