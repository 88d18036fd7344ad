// rank_options: each part follows its documented formula, the score is their sum (or the first
// three scaled to 100), and the ranking is a permutation of the input sorted by score with the
// documented tie-break.
import fc from 'fast-check';
import { isBuilderName } from './names';
import { pronounceabilityCounts, pronounceabilityPoints, soundKinds } from './pronounceability';
import {
  availabilityPoints,
  charsetPoints,
  compareRanked,
  lengthPoints,
  rankOptions,
  scoreOf,
  type AvailabilityByName,
  type DomainStatus,
} from './rankOptions';

const nameArb = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,20}[a-z0-9])?$/).filter(isBuilderName);
const statusArb = fc.constantFrom('AVAILABLE' as const, 'TAKEN' as const, 'UNKNOWN' as const);

describe('rank_options parts', () => {
  it('length: 30 for 5-8 characters, 6 fewer per character below, 3 fewer per character above', () => {
    expect([1, 2, 3, 4, 5, 8, 9, 12, 18, 30].map((n) => lengthPoints('a'.repeat(n)))).toEqual([
      6, 12, 18, 24, 30, 30, 27, 18, 0, 0,
    ]);
  });

  it('charset: letters only > digits > hyphens > both', () => {
    expect([
      charsetPoints('brightly'),
      charsetPoints('web3'),
      charsetPoints('dog-walkr'),
      charsetPoints('web-3'),
    ]).toEqual([20, 12, 6, 0]);
  });

  it('pronounceability: reads digraphs as one sound and y as a vowel when no vowel follows', () => {
    expect(soundKinds('strength')).toBe('cccvcc');
    expect(soundKinds('yes')).toBe('cvc');
    expect(soundKinds('sky')).toBe('ccv');
    expect(pronounceabilityCounts('aeiou-strnk')).toEqual({
      vowels: 5,
      switches: 0,
      pairs: 8,
      excessConsonants: 3,
      excessVowels: 3,
    });
  });

  it('pronounceability: rewards alternation, penalises long runs, scores a vowelless name 0', () => {
    expect(pronounceabilityPoints('banana')).toBe(30); // 20 + 10
    expect(pronounceabilityPoints('google')).toBe(26); // 20 + floor(10 × 3/5)
    expect(pronounceabilityPoints('strength')).toBe(16); // 20 + floor(10 × 2/5) - 8
    expect(pronounceabilityPoints('aeiou')).toBe(2); // 20 + 0 - 6 × 3
    expect(pronounceabilityPoints('schmidt')).toBe(16); // s-ch-m (1 extra), i, d-t: 20 + floor(10 × 2/5) - 8
    expect(pronounceabilityPoints('strngth')).toBe(0);
    expect(pronounceabilityPoints('a')).toBe(20);
    expect(pronounceabilityPoints('x')).toBe(0);
  });

  it('availability: 14 for one AVAILABLE domain, 2 more per extra up to 20, 5 when unknown, 0 when all TAKEN', () => {
    const status = (domain: string, value: DomainStatus['status']): DomainStatus => ({
      domain,
      status: value,
    });
    expect(availabilityPoints([status('a.test', 'AVAILABLE'), status('a.dev', 'TAKEN')])).toBe(14);
    expect(
      availabilityPoints(
        ['a.test', 'a.dev', 'a.app', 'a.io', 'a.co'].map((domain) => status(domain, 'AVAILABLE')),
      ),
    ).toBe(20);
    expect(availabilityPoints([status('a.test', 'AVAILABLE'), status('a.test', 'AVAILABLE')])).toBe(
      14,
    );
    expect(availabilityPoints([status('a.test', 'UNKNOWN'), status('a.dev', 'TAKEN')])).toBe(5);
    expect(availabilityPoints([])).toBe(5);
    expect(availabilityPoints([status('a.test', 'TAKEN'), status('a.dev', 'TAKEN')])).toBe(0);
  });

  it('score: the four parts summed with domain results, else the first three scaled to 100', () => {
    expect(scoreOf({ length: 30, charset: 20, pronounceability: 30, availability: 20 })).toBe(100);
    expect(scoreOf({ length: 30, charset: 20, pronounceability: 30, availability: null })).toBe(
      100,
    );
    expect(scoreOf({ length: 27, charset: 6, pronounceability: 18, availability: null })).toBe(63); // floor(51 × 100 / 80)
    expect(scoreOf({ length: 27, charset: 6, pronounceability: 18, availability: 0 })).toBe(51);
  });
});

describe('rankOptions', () => {
  it('ranks with the parts, and lists only AVAILABLE domains when given results', () => {
    const availability: AvailabilityByName = new Map([
      [
        'banana',
        [
          { domain: 'banana.test', status: 'TAKEN' },
          { domain: 'banana.dev', status: 'TAKEN' },
        ],
      ],
      [
        'dog-walkr',
        [
          { domain: 'dog-walkr.test', status: 'AVAILABLE' },
          { domain: 'dog-walkr.dev', status: 'UNKNOWN' },
        ],
      ],
    ]);
    const ranked = rankOptions(['banana', 'dog-walkr', 'google'], availability);
    expect(ranked).toEqual([
      {
        rank: 1,
        name: 'google',
        score: 81,
        parts: { length: 30, charset: 20, pronounceability: 26, availability: 5 },
        availableDomains: [],
      },
      {
        rank: 2,
        name: 'banana',
        score: 80,
        parts: { length: 30, charset: 20, pronounceability: 30, availability: 0 },
        availableDomains: [],
      },
      {
        rank: 3,
        name: 'dog-walkr',
        score: 65,
        parts: { length: 27, charset: 6, pronounceability: 18, availability: 14 },
        availableDomains: ['dog-walkr.test'],
      },
    ]);
    expect(rankOptions(['banana'])[0]).toEqual({
      rank: 1,
      name: 'banana',
      score: 100,
      parts: { length: 30, charset: 20, pronounceability: 30, availability: null },
      availableDomains: null,
    });
  });

  it('breaks ties on the shorter name, then code-unit order', () => {
    expect(
      rankOptions(['bana', 'bona', 'banana']).map((option) => [option.name, option.score]),
    ).toEqual([
      ['banana', 100],
      ['bana', 92],
      ['bona', 92],
    ]);
    expect(rankOptions(['bona', 'bana']).map((option) => option.name)).toEqual(['bana', 'bona']);
  });

  it('answers a permutation of the names, sorted by score then the tie-break, ranks 1..n, whatever the input order', () => {
    const availabilityArb = (names: string[]) =>
      fc.array(fc.tuple(fc.constantFrom(...names), fc.constantFrom('test', 'dev'), statusArb), {
        maxLength: 40,
      });
    fc.assert(
      fc.property(
        fc
          .uniqueArray(nameArb, { minLength: 1, maxLength: 50 })
          .chain((names) =>
            fc.tuple(
              fc.constant(names),
              fc.option(availabilityArb(names), { nil: undefined }),
              fc.shuffledSubarray(names, { minLength: names.length }),
            ),
          ),
        ([names, checks, reordered]) => {
          let availability: AvailabilityByName | undefined;
          if (checks !== undefined) {
            const map = new Map<string, DomainStatus[]>();
            for (const [name, tld, status] of checks)
              map.set(name, [...(map.get(name) ?? []), { domain: `${name}.${tld}`, status }]);
            availability = map;
          }
          const ranked = rankOptions(names, availability);
          expect(ranked.map((option) => option.name).sort()).toEqual([...names].sort());
          expect(ranked.map((option) => option.rank)).toEqual(
            names.map((_name, index) => index + 1),
          );
          for (let index = 1; index < ranked.length; index += 1) {
            expect(ranked[index - 1].score).toBeGreaterThanOrEqual(ranked[index].score);
            expect(compareRanked(ranked[index - 1], ranked[index])).toBeLessThan(0);
          }
          for (const option of ranked) {
            expect(option.score).toBeGreaterThanOrEqual(0);
            expect(option.score).toBeLessThanOrEqual(100);
            expect(option.score).toBe(scoreOf(option.parts));
          }
          expect(rankOptions(reordered, availability)).toEqual(ranked);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses invalid or repeated names: the route validates first', () => {
    expect(() => rankOptions(['Bad Name'])).toThrow(RangeError);
    expect(() => rankOptions(['nova', 'nova'])).toThrow(RangeError);
  });
});
