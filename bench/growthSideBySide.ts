// bench:growth's rates side by side: windows on the loaded tables, each paired with one on empty
// tables in the same minutes, so the host's drift over the minutes the load takes is not read as
// the history's cost. The verdict compares the medians.
import { percentile } from './stats';

/** Pairs of windows per rate (odd, so each side has a middle). */
export const SIDE_BY_SIDE_PAIRS = 3;

export interface SideBySide {
  /** The rate of each window on the loaded tables, and of the empty-table window paired with it. */
  readonly grown: number[];
  readonly empty: number[];
}

/**
 * SIDE_BY_SIDE_PAIRS pairs of windows, one on the loaded tables and one on empty tables; the
 * loaded one goes first in even pairs and second in odd ones, so a steady drift of the host's speed
 * within a pair favours neither.
 */
export async function sideBySide(
  grownRate: (pair: number) => Promise<number>,
  emptyRate: (pair: number) => Promise<number>,
): Promise<SideBySide> {
  const grown: number[] = [];
  const empty: number[] = [];
  for (let pair = 0; pair < SIDE_BY_SIDE_PAIRS; pair += 1) {
    if (pair % 2 === 0) {
      grown.push(await grownRate(pair));
      empty.push(await emptyRate(pair));
    } else {
      empty.push(await emptyRate(pair));
      grown.push(await grownRate(pair));
    }
  }
  return { grown, empty };
}

/** The middle of an odd number of rates. */
export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** The loaded tables' median rate over the empty tables'. */
export function ratioOf(pairs: SideBySide): number {
  return median(pairs.grown) / median(pairs.empty);
}

export function printSideBySide(rate: string, pairs: SideBySide): void {
  const each = pairs.grown.map((grown, i) => `${grown}/${pairs.empty[i]}`).join(', ');
  process.stdout.write(
    `${rate} side by side, with history/empty: ${each}; medians ${median(pairs.grown)}/${median(pairs.empty)}\n`,
  );
}
