// The builder-name rule (one DNS label) and the filter model answers go through.
import fc from 'fast-check';
import { distinctBuilderNames, isBuilderName, toBuilderName } from './names';

describe('builder names', () => {
  it('accepts 1-63 of a-z, 0-9 and inner hyphens', () => {
    for (const name of ['a', '7', 'brightly', 'dog-walkr', 'web3', 'a'.repeat(63), 'a-b-c'])
      expect(isBuilderName(name)).toBe(true);
  });

  it('refuses what is not one DNS label, and encoded (xn--) labels', () => {
    for (const name of [
      '',
      'A',
      'Brightly',
      '-lead',
      'trail-',
      'a'.repeat(64),
      'dog walkr',
      'dog.com',
      'café',
      'snake_case',
      'xn--mnchen-3ya',
      'ab--cd',
      42,
      null,
    ]) {
      expect(isBuilderName(name)).toBe(false);
    }
  });

  it('lowercases and trims a candidate but rewrites nothing else', () => {
    expect(toBuilderName('  Brightly ')).toBe('brightly');
    expect(toBuilderName('bright ly')).toBeNull();
    expect(toBuilderName('brightly.com')).toBeNull();
    expect(toBuilderName(7)).toBeNull();
  });

  it('keeps the first occurrence of each valid name, in order, up to the cap', () => {
    expect(
      distinctBuilderNames(['Nova', 'nova', 'bad name', 'lumen', 3, 'vela', 'orbit'], 3),
    ).toEqual(['nova', 'lumen', 'vela']);
  });

  it('never lets an invalid or repeated name through, whatever the input', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.stringMatching(/^[A-Za-z0-9-]{1,70}$/), fc.integer())),
        fc.integer({ min: 0, max: 30 }),
        (values, max) => {
          const names = distinctBuilderNames(values, max);
          expect(names.length).toBeLessThanOrEqual(max);
          expect(new Set(names).size).toBe(names.length);
          expect(names.every(isBuilderName)).toBe(true);
        },
      ),
    );
  });
});
