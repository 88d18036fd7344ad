// A small seeded pseudo-random sequence (mulberry32 over a 32-bit FNV-1a hash of a text key) so
// the fallback generator varies its picks by seed yet answers the same for the same input, on
// every machine. Not for anything secret: 32 bits of state, fully predictable from the key.

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a over the UTF-16 code units of `text`, as an unsigned 32-bit integer. */
export function hash32(text: string): number {
  let hash = FNV_OFFSET_BASIS;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}

export interface SeededRandom {
  /** The next unsigned 32-bit value of the sequence. */
  nextUint32(): number;
  /** An integer in 0..bound-1 (bound 1..2^32); the modulo bias is irrelevant at these sizes. */
  below(bound: number): number;
}

export function seededRandom(key: string): SeededRandom {
  let state = hash32(key);
  const nextUint32 = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  return {
    nextUint32,
    below(bound) {
      if (!Number.isInteger(bound) || bound < 1 || bound > 2 ** 32)
        throw new RangeError('bound must be an integer in 1..2^32');
      return nextUint32() % bound;
    },
  };
}

/** A Fisher-Yates shuffle of a copy of `items`, driven by `random`. */
export function shuffled<T>(items: readonly T[], random: SeededRandom): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index -= 1) {
    const other = random.below(index + 1);
    [copy[index], copy[other]] = [copy[other], copy[index]];
  }
  return copy;
}
