// The words of an idea as the generators use them: ASCII-folded (é → e), lowercase, split on
// anything that is not a-z or 0-9, common filler words and pure numbers dropped, first occurrence
// kept, at most MAX_IDEA_WORDS. Also a light suffix-stripping stemmer and the syllable-ish pieces
// (head, tail) that blends are made of. Latin script only: other scripts yield no words.

export const MAX_IDEA_WORDS = 8;
const MIN_WORD_CHARS = 2;
const MAX_WORD_CHARS = 20;
const MIN_STEM_CHARS = 3;

/** Filler that says nothing about the business ("an app that helps people…"). */
const STOP_WORDS: ReadonlySet<string> = new Set([
  'a',
  'about',
  'all',
  'an',
  'and',
  'any',
  'app',
  'apps',
  'are',
  'as',
  'at',
  'based',
  'be',
  'best',
  'by',
  'can',
  'for',
  'from',
  'get',
  'gets',
  'has',
  'have',
  'help',
  'helps',
  'how',
  'i',
  'in',
  'into',
  'is',
  'it',
  'its',
  'lets',
  'like',
  'make',
  'makes',
  'me',
  'more',
  'my',
  'new',
  'of',
  'on',
  'online',
  'or',
  'our',
  'out',
  'people',
  'platform',
  'service',
  'so',
  'than',
  'that',
  'the',
  'their',
  'them',
  'they',
  'this',
  'to',
  'tool',
  'up',
  'use',
  'using',
  'via',
  'want',
  'we',
  'what',
  'when',
  'where',
  'which',
  'who',
  'will',
  'with',
  'without',
  'you',
  'your',
]);

/** Longest first; each strips only when at least MIN_STEM_CHARS remain. */
const SUFFIX_RULES: readonly (readonly [string, string])[] = [
  ['ations', 'ate'],
  ['ation', 'ate'],
  ['ings', ''],
  ['ing', ''],
  ['ies', 'y'],
  ['ers', ''],
  ['er', ''],
  ['ness', ''],
  ['ment', ''],
  ['ed', ''],
  ['es', ''],
  ['ly', ''],
  ['s', ''],
];

const VOWELS = /[aeiouy]/;

/** Folds accents away and lowercases: "Café Crème" → "cafe creme". */
export function asciiFold(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** The distinct content words of an idea, in order of first appearance. */
export function ideaWords(idea: string, max = MAX_IDEA_WORDS): string[] {
  const words = new Set<string>();
  for (const token of asciiFold(idea).split(/[^a-z0-9]+/)) {
    if (words.size >= max) break;
    if (token.length < MIN_WORD_CHARS || token.length > MAX_WORD_CHARS) continue;
    if (/^[0-9]+$/.test(token) || STOP_WORDS.has(token)) continue;
    words.add(token);
  }
  return [...words];
}

/** "walkers" → "walk", "stories" → "story", "glass" stays (a double-s is not a plural). */
export function stem(word: string): string {
  if (word.endsWith('ss')) return word;
  for (const [suffix, replacement] of SUFFIX_RULES) {
    if (!word.endsWith(suffix)) continue;
    const base = word.slice(0, word.length - suffix.length);
    if (base.length >= MIN_STEM_CHARS && VOWELS.test(base)) return base + replacement;
  }
  return word;
}

export function isVowel(letter: string): boolean {
  return letter === 'a' || letter === 'e' || letter === 'i' || letter === 'o' || letter === 'u';
}

/** The opening through the first vowel group and one consonant after it, at least 3 letters: "coffee" → "cof". */
export function head(word: string): string {
  let index = 0;
  while (index < word.length && !isVowel(word[index])) index += 1;
  while (index < word.length && isVowel(word[index])) index += 1;
  return word.slice(0, Math.max(MIN_STEM_CHARS, Math.min(word.length, index + 1)));
}

/** The closing from the consonant before the last vowel group: "walker" → "ker", "roast" → "roast". */
export function tail(word: string): string {
  let index = word.length - 1;
  while (index >= 0 && !isVowel(word[index])) index -= 1;
  while (index > 0 && isVowel(word[index - 1])) index -= 1;
  return word.slice(Math.max(0, index - 1));
}

/** Joins two pieces, dropping a vowel where two would meet ("coffee" + "io" → "coffio"). */
export function join(left: string, right: string): string {
  if (left.length > 1 && right.length > 0 && isVowel(left[left.length - 1]) && isVowel(right[0])) {
    return left.slice(0, -1) + right;
  }
  return left + right;
}
