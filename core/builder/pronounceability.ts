// The vowel/consonant model behind a name's pronounceability points (0-30), in integer arithmetic.
// Digits and hyphens break a name into segments judged on their own (runs never span a break). A
// segment is read as sounds: the digraphs ch ck gh ng ph qu sh th wh are one consonant each, read
// left to right; any other letter is one sound, a vowel (a e i o u, and y when no vowel follows it)
// or a consonant.
//
//   points = clamp(20 + alternation - 8 × excessConsonants - 6 × excessVowels, 0, 30), where
//   alternation      = floor(10 × switches / pairs): of the neighbouring sounds within a segment,
//                      the share that switch between vowel and consonant; 0 when there is no pair,
//   excessConsonants = Σ over consonant runs of max(0, run - 2)  ("strength": s-t-r 1 extra, ng-th none),
//   excessVowels     = Σ over vowel runs of max(0, run - 2)      ("aeiou" has 3 extra),
//   and a name without any vowel scores 0 (nothing to say it with).

export const PRONOUNCEABILITY_MAX_POINTS = 30;
const BASE_POINTS = 20;
const ALTERNATION_MAX_POINTS = 10;
const CONSONANT_EXCESS_PENALTY = 8;
const VOWEL_EXCESS_PENALTY = 6;
const RUN_ALLOWANCE = 2;

export interface PronounceabilityCounts {
  readonly vowels: number;
  readonly switches: number;
  readonly pairs: number;
  readonly excessConsonants: number;
  readonly excessVowels: number;
}

const CONSONANT_DIGRAPHS: ReadonlySet<string> = new Set([
  'ch',
  'ck',
  'gh',
  'ng',
  'ph',
  'qu',
  'sh',
  'th',
  'wh',
]);

/** 'v' / 'c' per sound of a segment of a-z letters. */
export function soundKinds(segment: string): string {
  let kinds = '';
  for (let index = 0; index < segment.length; index += 1) {
    if (CONSONANT_DIGRAPHS.has(segment.slice(index, index + 2))) {
      kinds += 'c';
      index += 1;
      continue;
    }
    const letter = segment[index];
    const nextIsVowel = index + 1 < segment.length && 'aeiou'.includes(segment[index + 1]);
    const vowel = 'aeiou'.includes(letter) || (letter === 'y' && !nextIsVowel);
    kinds += vowel ? 'v' : 'c';
  }
  return kinds;
}

export function pronounceabilityCounts(name: string): PronounceabilityCounts {
  let vowels = 0;
  let switches = 0;
  let pairs = 0;
  let excessConsonants = 0;
  let excessVowels = 0;
  for (const segment of name.split(/[^a-z]+/).filter((part) => part.length > 0)) {
    const kinds = soundKinds(segment);
    pairs += kinds.length - 1;
    for (let index = 0; index < kinds.length; index += 1) {
      if (kinds[index] === 'v') vowels += 1;
      if (index > 0 && kinds[index] !== kinds[index - 1]) switches += 1;
    }
    for (const run of kinds.match(/c+|v+/g) ?? []) {
      const excess = Math.max(0, run.length - RUN_ALLOWANCE);
      if (run[0] === 'c') excessConsonants += excess;
      else excessVowels += excess;
    }
  }
  return { vowels, switches, pairs, excessConsonants, excessVowels };
}

export function pronounceabilityPoints(name: string): number {
  const counts = pronounceabilityCounts(name);
  if (counts.vowels === 0) return 0;
  const alternation =
    counts.pairs === 0 ? 0 : Math.floor((ALTERNATION_MAX_POINTS * counts.switches) / counts.pairs);
  const points =
    BASE_POINTS +
    alternation -
    CONSONANT_EXCESS_PENALTY * counts.excessConsonants -
    VOWEL_EXCESS_PENALTY * counts.excessVowels;
  return Math.min(PRONOUNCEABILITY_MAX_POINTS, Math.max(0, points));
}
