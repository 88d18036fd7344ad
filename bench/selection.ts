// Which benchmarks `npm run bench` runs, and the arguments it hands them (bench/run.ts).
export const BENCHMARKS: ReadonlyArray<{ name: string; script: string; needsDatabase: boolean }> = [
  { name: 'engine', script: 'engine.js', needsDatabase: false },
  { name: 'ledger', script: 'ledger.js', needsDatabase: true },
  { name: 'preflight', script: 'preflight.js', needsDatabase: true },
  { name: 'x402', script: 'x402.js', needsDatabase: true },
  { name: 'mcp', script: 'mcp.js', needsDatabase: true },
  { name: 'consumer', script: 'consumer.js', needsDatabase: true },
  { name: 'anchor', script: 'anchor.js', needsDatabase: true },
  { name: 'abuse', script: 'abuse.js', needsDatabase: true },
  { name: 'events', script: 'events.js', needsDatabase: true },
  { name: 'whatif', script: 'whatif.js', needsDatabase: false },
  { name: 'growth', script: 'growth.js', needsDatabase: true },
];

/**
 * `run.js [name…] [argument…]`: the leading words that name benchmarks select them (none: all);
 * what follows goes to the one benchmark named, so `npm run bench:consumer -- 20 8` reaches
 * consumer.js as `20 8`. A problem when the words cannot be read that way.
 */
export function readSelection(
  words: readonly string[],
): { selected: typeof BENCHMARKS; args: string[] } | { problem: string } {
  const known = new Set(BENCHMARKS.map((bench) => bench.name));
  let split = 0;
  while (split < words.length && known.has(words[split]!)) split += 1;
  const names = words.slice(0, split);
  const args = words.slice(split);
  const choose = `choose from ${BENCHMARKS.map((bench) => bench.name).join(', ')}`;
  if (names.length === 0 && args.length > 0)
    return { problem: `unknown benchmark ${JSON.stringify(args[0])}; ${choose}` };
  if (names.length > 1 && args.length > 0)
    return {
      problem: `arguments ${JSON.stringify(args.join(' '))} go to one benchmark, not to ${names.join(', ')}`,
    };
  const selected = BENCHMARKS.filter((bench) => names.length === 0 || names.includes(bench.name));
  return { selected, args };
}
