// One fault case, as every file in test/faults runs it: agents under load, a short calm phase, the
// fault for a few seconds, the fault healed, and the load kept up until every operation kind has
// succeeded again; then the load stops, every pending job drains, and the books are checked.
import { BRIDGE_RECONNECT_MAX_MS } from '../../gateway/subscriptions/pgBridge';
import { expectBooksBalanced, readBooks, untilDrained } from './books';
import {
  type Agent,
  type Answer,
  type LoadRun,
  newAgent,
  OPERATIONS,
  refusedPayments,
  startLoad,
  unretryableServerErrors,
} from './load';
import { type FaultWorld, startFaultWorld } from './world';

export const AGENTS = 5;
const CALM_OPERATIONS = 6;
const RECOVERY_TIMEOUT_MS = 45_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A progress line on stderr while the case runs (jest prints console output only at the end). */
export function progress(line: string): void {
  if (process.env.FAULT_PROGRESS === '1') process.stderr.write(`[fault] ${line}\n`);
}

/**
 * The world and agents of a fault test file on the shared test server: started before its tests,
 * stopped after them. Read them through the getters inside a test.
 */
export function faultWorldOfFile(): { world(): FaultWorld; agents(): Agent[] } {
  let world: FaultWorld | undefined;
  let agents: Agent[] = [];
  beforeAll(async () => {
    world = await startFaultWorld();
    agents = await newAgents(world);
    progress('agents ready');
  }, 120_000);
  afterAll(async () => {
    await world?.stop();
  });
  return { world: () => world!, agents: () => agents };
}

export async function newAgents(world: FaultWorld): Promise<Agent[]> {
  const agents: Agent[] = [];
  // One after the other: the deployer mints for each, and its nonces must not race.
  for (let index = 0; index < AGENTS; index += 1) agents.push(await newAgent(world, index));
  return agents;
}

async function until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

export interface FaultCase {
  /** Breaks the dependency; resolves once it is broken. */
  readonly inject: () => Promise<void>;
  /** Heals it; resolves once it answers again. */
  readonly heal: () => Promise<void>;
  /** How long the fault lasts under load (at least). */
  readonly faultMs: number;
  /** The fault lasts until this holds too (it met the load); default: at once. */
  readonly felt?: (run: LoadRun) => boolean;
  /** Payment refusals (402) this fault is known to cause; default none. */
  readonly knownRefusal?: (answer: Answer) => boolean;
}

/** Runs the load through the fault and back; returns the run after every check of the books. */
export async function runThroughFault(
  world: FaultWorld,
  agents: readonly Agent[],
  fault: FaultCase,
): Promise<LoadRun> {
  const before = await readBooks(world, agents);
  const run = startLoad(world, agents);
  const ticker = setInterval(
    () =>
      progress(
        `${run.completed.length} done, ${run.answers.length} answers, last ${JSON.stringify(run.answers.at(-1))}, errors ${run.clientErrors.length}`,
      ),
    2_000,
  );
  try {
    await until('the calm phase', () => run.completed.length >= CALM_OPERATIONS, 30_000);
    progress('fault injected');
    run.faultStarted();
    await fault.inject();
    await sleep(fault.faultMs);
    await until('the fault to meet the load', () => fault.felt?.(run) ?? true, 30_000);
    await fault.heal();
    progress('fault healed');
    run.faultEnded();
    await until(
      'every operation to succeed again after the fault',
      () => OPERATIONS.every((op) => run.completed.some((c) => c.op === op && c.phase === 'after')),
      RECOVERY_TIMEOUT_MS,
    );
  } finally {
    progress('stopping the load');
    await run.stop();
    clearInterval(ticker);
    progress(`load stopped; client errors: ${JSON.stringify(run.clientErrors.slice(0, 5))}`);
  }
  expect(run.clientErrors).toEqual([]);
  expect(unretryableServerErrors(run)).toEqual([]);
  expect(refusedPayments(run).filter((a) => !(fault.knownRefusal?.(a) ?? false))).toEqual([]);
  expect(await untilDrained(world, run)).toEqual({
    purchasesNotEnded: [],
    noticesPending: 0,
    webhooksPending: 0,
    paymentsUnsettled: 0,
  });
  await expectBooksBalanced(world, agents, run, before);
  for (const probe of ['/healthz', '/readyz'])
    expect(await probeStatusWithin(`${world.stack.url}${probe}`, PROBE_RECOVERY_MS)).toBe(200);
  return run;
}

/**
 * How long the probes get to answer 200 once the load has drained: /readyz stays 503 while the
 * LISTEN connection is down, and the bridge retries it with a backoff of up to
 * BRIDGE_RECONNECT_MAX_MS, so a database restart can leave it one backoff away. No restart helps.
 */
const PROBE_RECOVERY_MS = 2 * BRIDGE_RECONNECT_MAX_MS;

/** The probe's status once it answers 200, or its last status when the time is up. */
async function probeStatusWithin(url: string, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status } = await fetch(url);
    if (status === 200 || Date.now() > deadline) return status;
    await sleep(100);
  }
}

/** Answers during the fault, by status and code, for the test's own assertions and its log. */
export function faultAnswers(run: LoadRun): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const answer of run.answers.filter((a) => a.phase === 'fault')) {
    const key = `${answer.op}/${answer.step} ${answer.status}${answer.code ? ` ${answer.code}` : ''}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
