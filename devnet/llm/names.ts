// The stand-in model's names for an idea: each content word of the idea with a fixed suffix, in
// order, then numbered. Deterministic and unlike the fallback generator's, so a test can tell
// which source answered. Words are lowercase a-z runs of 3-20 letters; an idea without any uses "idea".

export const STAND_IN_SUFFIXES = [
  'verse',
  'mind',
  'forge',
  'spark',
  'pilot',
  'nest',
  'wave',
  'loop',
] as const;
const FILLER: ReadonlySet<string> = new Set([
  'and',
  'app',
  'for',
  'that',
  'the',
  'with',
  'helps',
  'who',
  'your',
  'our',
  'from',
]);

export function standInNames(idea: string, count: number): string[] {
  const words = [...new Set(idea.toLowerCase().match(/[a-z]{3,20}/g) ?? [])].filter(
    (word) => !FILLER.has(word),
  );
  const roots = words.length > 0 ? words : ['idea'];
  const names: string[] = [];
  for (let index = 0; names.length < count; index += 1) {
    const root = roots[index % roots.length];
    const suffix = STAND_IN_SUFFIXES[Math.floor(index / roots.length) % STAND_IN_SUFFIXES.length];
    const round = Math.floor(index / (roots.length * STAND_IN_SUFFIXES.length));
    names.push(round === 0 ? `${root}${suffix}` : `${root}${suffix}${round + 1}`);
  }
  return names;
}
