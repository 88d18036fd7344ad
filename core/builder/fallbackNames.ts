// The structured fallback generator behind suggest_names: names built from the idea's words
// (stems, blends, suffixes and prefixes by style), picked in a seeded order. Same idea words, style
// and seed give the same names; always exactly `count` distinct valid builder names (1-20).
import { head, ideaWords, join, stem, tail } from './ideaWords';
import { isBuilderName } from './names';
import { seededRandom, shuffled } from './seededRandom';

export const NAME_STYLES = ['brandable', 'descriptive', 'short'] as const;
export type NameStyle = (typeof NAME_STYLES)[number];

export const NAME_COUNT_MIN = 1;
export const NAME_COUNT_MAX = 20;
export const DEFAULT_NAME_COUNT = 10;
export const DEFAULT_NAME_STYLE: NameStyle = 'brandable';
export const DEFAULT_NAME_SEED = 0;
export const NAME_SEED_MAX = 0xffff_ffff;

/** Length bounds per style, in characters; all within the 63 of a DNS label. */
export const STYLE_LENGTHS: Readonly<
  Record<NameStyle, { readonly min: number; readonly max: number }>
> = {
  brandable: { min: 4, max: 14 },
  descriptive: { min: 4, max: 24 },
  short: { min: 3, max: 8 },
};

const BRAND_SUFFIXES = [
  'ly',
  'ify',
  'io',
  'o',
  'a',
  'ora',
  'eo',
  'ia',
  'ix',
  'ster',
  'able',
  'era',
] as const;
const DESCRIPTIVE_SUFFIXES = [
  'hub',
  'lab',
  'works',
  'hq',
  'kit',
  'base',
  'spot',
  'now',
  'direct',
  'pro',
  'zone',
] as const;
const DESCRIPTIVE_PREFIXES = ['get', 'try', 'my', 'the', 'go', 'use', 'hey'] as const;
const SHORT_SUFFIXES = ['o', 'a', 'i', 'ly', 'io', 'ix'] as const;
/** Neutral roots for ideas with too few usable words (e.g. non-Latin script or only filler). */
const GENERIC_ROOTS = [
  'nova',
  'lumen',
  'vela',
  'orbit',
  'kite',
  'pico',
  'aria',
  'zest',
  'tidal',
  'ember',
  'quill',
  'sol',
  'haven',
  'ply',
  'mosa',
  'vivo',
  'kora',
  'lyra',
  'onyx',
  'pax',
  'rune',
  'sage',
  'tera',
  'brio',
] as const;

export interface FallbackNameOptions {
  /** 1-20; default 10. */
  readonly count?: number;
  readonly style?: NameStyle;
  /** 0..2^32-1; default 0. */
  readonly seed?: number;
}

/** `count` distinct names for `idea`; throws RangeError on options outside their bounds. */
export function fallbackNames(idea: string, options: FallbackNameOptions = {}): string[] {
  const {
    count = DEFAULT_NAME_COUNT,
    style = DEFAULT_NAME_STYLE,
    seed = DEFAULT_NAME_SEED,
  } = options;
  if (!Number.isInteger(count) || count < NAME_COUNT_MIN || count > NAME_COUNT_MAX) {
    throw new RangeError(`count must be an integer in ${NAME_COUNT_MIN}..${NAME_COUNT_MAX}`);
  }
  if (!(NAME_STYLES as readonly string[]).includes(style))
    throw new RangeError(`style must be one of ${NAME_STYLES.join(', ')}`);
  if (!Number.isInteger(seed) || seed < 0 || seed > NAME_SEED_MAX)
    throw new RangeError(`seed must be an integer in 0..${NAME_SEED_MAX}`);
  const words = ideaWords(idea);
  const random = seededRandom(`${style}|${seed}|${words.join(' ')}`);
  const picked = new Set<string>();
  const fits = (name: string): boolean =>
    isBuilderName(name) &&
    name.length >= STYLE_LENGTHS[style].min &&
    name.length <= STYLE_LENGTHS[style].max;
  // Tiers in order of how much they say about the idea; each tier is shuffled by the seed.
  const stems = [...new Set(words.map(stem))];
  const tiers = [
    ideaCandidates(words, stems, style),
    rootCandidates(stems, style),
    genericCandidates(style),
  ];
  for (const tier of tiers) {
    for (const name of shuffled(tier, random)) {
      if (fits(name)) picked.add(name);
      if (picked.size === count) return [...picked];
    }
  }
  // The generic tier alone holds more than NAME_COUNT_MAX names of every style (a test checks it).
  throw new Error(`the generic roots gave only ${picked.size} of ${count} ${style} names`);
}

function ideaCandidates(
  words: readonly string[],
  stems: readonly string[],
  style: NameStyle,
): string[] {
  if (style === 'brandable') return brandableCandidates(stems);
  if (style === 'descriptive') return descriptiveCandidates(words);
  return shortCandidates(words, stems);
}

function brandableCandidates(stems: readonly string[]): string[] {
  const names: string[] = [];
  for (const base of stems) {
    for (const suffix of BRAND_SUFFIXES) names.push(join(base, suffix));
    // The dropped-vowel form ("walker" → "walkr").
    if (/[^aeiou]er$/.test(base)) names.push(`${base.slice(0, -2)}r`);
  }
  for (const [left, right] of orderedPairs(stems)) {
    names.push(join(head(left), tail(right)), join(left, tail(right)), join(head(left), right));
  }
  return names;
}

function descriptiveCandidates(words: readonly string[]): string[] {
  const names: string[] = [];
  for (const word of words) {
    for (const suffix of DESCRIPTIVE_SUFFIXES) names.push(word + suffix);
    for (const prefix of DESCRIPTIVE_PREFIXES) names.push(prefix + word);
  }
  for (const [left, right] of orderedPairs(words)) names.push(left + right, `${left}-${right}`);
  return names;
}

function shortCandidates(words: readonly string[], stems: readonly string[]): string[] {
  const names: string[] = [...stems];
  for (const base of stems)
    for (const suffix of SHORT_SUFFIXES) names.push(join(head(base), suffix));
  for (const [left, right] of orderedPairs(stems))
    names.push(head(left) + head(right).slice(0, 2), head(left) + right[0]);
  if (words.length >= 2) {
    const initials = words
      .map((word) => word[0])
      .join('')
      .slice(0, 4);
    for (const suffix of SHORT_SUFFIXES) names.push(initials + suffix);
  }
  return names;
}

/** The idea's stems with neutral roots, for ideas that gave too few names of their own. */
function rootCandidates(stems: readonly string[], style: NameStyle): string[] {
  return stems.flatMap((base) =>
    GENERIC_ROOTS.flatMap((root) =>
      style === 'short' ? [head(base) + root.slice(0, 2)] : [join(base, root), join(root, base)],
    ),
  );
}

export function genericCandidates(style: NameStyle): string[] {
  const suffixes =
    style === 'descriptive'
      ? DESCRIPTIVE_SUFFIXES
      : style === 'short'
        ? SHORT_SUFFIXES
        : BRAND_SUFFIXES;
  return GENERIC_ROOTS.flatMap((root) => [root, ...suffixes.map((suffix) => join(root, suffix))]);
}

function orderedPairs(items: readonly string[]): (readonly [string, string])[] {
  return items.flatMap((left) =>
    items.filter((right) => right !== left).map((right) => [left, right] as const),
  );
}
