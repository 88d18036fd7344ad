// The soak's counts for one minute (and for the whole run): operations, answers by class, 5xx by
// code, 4xx kinds, and the latencies of operations and HTTP steps; and the minute's printed lines.
import os from 'node:os';
import { Latencies } from './soakLatency';
import { ClientErrors } from './soakProbe';

export interface Tally {
  ops: number;
  failedOps: number;
  answers: Record<'2xx' | '402' | '4xx' | '5xx', number>;
  serverErrors: Record<string, number>;
  clientErrors: ClientErrors;
  /** Whole operations by kind, ms. */
  operations: Latencies;
  /** HTTP steps by route (ids folded) and whether paid, body read included; x402 signing, ms. */
  steps: Latencies;
}

export const newTally = (): Tally => ({
  ops: 0,
  failedOps: 0,
  answers: { '2xx': 0, '402': 0, '4xx': 0, '5xx': 0 },
  serverErrors: {},
  clientErrors: new ClientErrors(),
  operations: new Latencies(),
  steps: new Latencies(),
});

export function minuteLine(
  minute: number,
  tally: Tally,
  seconds: number,
  memory: string,
  backlog: string | null,
): string {
  const errors = Object.entries(tally.serverErrors)
    .map(([code, n]) => `${code} ${n}`)
    .join(', ');
  return (
    `minute ${minute}: ${(tally.ops / seconds).toFixed(1)} ops/s (${tally.ops} ops, ${tally.failedOps} failed) · ` +
    `answers 2xx ${tally.answers['2xx']}, 402 ${tally.answers['402']}, 4xx ${tally.answers['4xx']}, 5xx ${tally.answers['5xx']}` +
    `${errors ? ` [${errors}]` : ''} · ${memory} · load ${os.loadavg()[0]!.toFixed(2)}` +
    [
      ...tally.clientErrors.lines(),
      ...tally.operations.lines('op'),
      ...tally.steps.lines('step'),
      ...(backlog === null ? [] : [`  ${backlog}`]),
    ]
      .map((line) => `\n${line}`)
      .join('')
  );
}

/** Adds one minute's counts into the run's. */
export function addTally(total: Tally, tally: Tally): void {
  total.ops += tally.ops;
  total.failedOps += tally.failedOps;
  for (const key of Object.keys(total.answers) as Array<keyof Tally['answers']>)
    total.answers[key] += tally.answers[key];
  for (const [code, n] of Object.entries(tally.serverErrors))
    total.serverErrors[code] = (total.serverErrors[code] ?? 0) + n;
  tally.clientErrors.addInto(total.clientErrors);
}
