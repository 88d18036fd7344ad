// The fallback generator: same idea words, style and seed give the same names; every answer is
// exactly `count` distinct valid names within the style's length bounds, for any idea at all.
import fc from 'fast-check';
import {
  DEFAULT_NAME_COUNT,
  fallbackNames,
  genericCandidates,
  NAME_COUNT_MAX,
  NAME_SEED_MAX,
  NAME_STYLES,
  STYLE_LENGTHS,
  type NameStyle,
} from './fallbackNames';
import { isBuilderName } from './names';

const IDEA = 'An app that helps dog owners find trusted walkers nearby';
const styleArb = fc.constantFrom(...NAME_STYLES);
const ideaArb = fc.oneof(
  fc.string({ minLength: 1, maxLength: 500 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 120 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 200 }),
  fc
    .array(
      fc.constantFrom(
        'coffee',
        'roaster',
        'dog',
        'walkers',
        'the',
        'app',
        'cloud',
        'café',
        'ai',
        '42',
        'x',
      ),
      { minLength: 1, maxLength: 30 },
    )
    .map((words) => words.join(' ')),
);
const optionsArb = fc.record({
  count: fc.integer({ min: 1, max: NAME_COUNT_MAX }),
  style: styleArb,
  seed: fc.integer({ min: 0, max: NAME_SEED_MAX }),
});

describe('fallbackNames', () => {
  it('answers ten brandable names by default, built from the idea’s words', () => {
    const names = fallbackNames(IDEA);
    expect(names).toHaveLength(DEFAULT_NAME_COUNT);
    expect(names).toEqual(fallbackNames(IDEA, { count: 10, style: 'brandable', seed: 0 }));
    const stems = ['dog', 'own', 'find', 'trust', 'walk', 'nearby'];
    expect(names.every((name) => stems.some((stem) => name.includes(stem.slice(0, 3))))).toBe(true);
  });

  it('is deterministic: the same idea, style and seed give the same names, in the same order', () => {
    fc.assert(
      fc.property(ideaArb, optionsArb, (idea, options) => {
        expect(fallbackNames(idea, options)).toEqual(fallbackNames(idea, options));
      }),
      { numRuns: 200 },
    );
  });

  it('answers exactly count distinct valid names within the style’s length bounds, for any idea', () => {
    fc.assert(
      fc.property(ideaArb, optionsArb, (idea, options) => {
        const names = fallbackNames(idea, options);
        expect(names).toHaveLength(options.count);
        expect(new Set(names).size).toBe(names.length);
        const { min, max } = STYLE_LENGTHS[options.style];
        for (const name of names) {
          expect(isBuilderName(name)).toBe(true);
          expect(name.length).toBeGreaterThanOrEqual(min);
          expect(name.length).toBeLessThanOrEqual(max);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('varies its picks with the seed', () => {
    const bySeed = new Set([0, 1, 2, 3, 4].map((seed) => fallbackNames(IDEA, { seed }).join(',')));
    expect(bySeed.size).toBeGreaterThan(1);
  });

  it('keeps each style’s shape: short ones at most 8 characters, descriptive ones with the idea’s whole words', () => {
    expect(
      fallbackNames(IDEA, { style: 'short', count: 20 }).every((name) => name.length <= 8),
    ).toBe(true);
    const descriptive = fallbackNames('coffee roaster', { style: 'descriptive', count: 20 });
    expect(descriptive.every((name) => name.includes('coffee') || name.includes('roaster'))).toBe(
      true,
    );
  });

  it('reads only the idea’s words: case, punctuation and filler do not change the answer', () => {
    expect(fallbackNames('Coffee, ROASTER!')).toEqual(fallbackNames('the coffee roaster'));
    expect(fallbackNames('Café crème')).toEqual(fallbackNames('cafe creme'));
  });

  it('still answers from neutral roots when the idea has no usable word', () => {
    for (const idea of ['日本のカフェ', '!!!', 'the app for you', '1234']) {
      const names = fallbackNames(idea, { count: 5 });
      expect(names).toHaveLength(5);
      expect(names.every(isBuilderName)).toBe(true);
    }
  });

  it('holds enough neutral names for the largest count in every style', () => {
    for (const style of NAME_STYLES) {
      const { min, max } = STYLE_LENGTHS[style];
      const fitting = new Set(
        genericCandidates(style).filter(
          (name) => isBuilderName(name) && name.length >= min && name.length <= max,
        ),
      );
      expect(fitting.size).toBeGreaterThanOrEqual(NAME_COUNT_MAX);
    }
  });

  it('refuses options outside their bounds', () => {
    expect(() => fallbackNames(IDEA, { count: 0 })).toThrow(RangeError);
    expect(() => fallbackNames(IDEA, { count: 21 })).toThrow(RangeError);
    expect(() => fallbackNames(IDEA, { count: 2.5 })).toThrow(RangeError);
    expect(() => fallbackNames(IDEA, { style: 'fancy' as NameStyle })).toThrow(RangeError);
    expect(() => fallbackNames(IDEA, { seed: -1 })).toThrow(RangeError);
    expect(() => fallbackNames(IDEA, { seed: NAME_SEED_MAX + 1 })).toThrow(RangeError);
  });
});
