// The decision thread (DECISION_THREAD=1): preflights validated and decided (window reads, the
// engine, the writes, COMMIT) on a worker thread of their own, with connections of their own. On
// the server's event loop, a batch's round trips wait behind the HTTP, GraphQL and JSON work of
// every other request before their answers are read, so a policy's lock is held, and its next
// preflights wait, longer than PostgreSQL needs (docs/engine.md, Performance). The thread runs
// exactly the in-thread code (`preflightPaymentHere` of dispatch.ts: validation, lookup, the
// queue and its batches); only arguments, answers and errors cross (threadWire.ts). A thread that dies leaves its
// pending preflights with an unknown outcome (they may have committed), which is their answer; the
// next preflight starts a new thread.
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { AppError } from '../../../core/errors';
import { systemClock } from '../../../platform/clock';
import type { DbPool } from '../../../platform/db';
import type { Json } from '../views';
import {
  coalescing,
  fromWireError,
  type PreflightArguments,
  type ThreadAnswer,
  type ThreadAnswers,
  type ThreadMessage,
  type WirePreflight,
} from './threadWire';

export interface DecisionThreadOptions {
  /** The database the thread opens its own pool on (the subgraph's own DATABASE_URL). */
  readonly connectionString: string;
  /** Connections of the thread's pool; the batch queue uses at most its maxInFlight. */
  readonly poolSize?: number;
  readonly applicationName?: string;
  /** Told when the thread dies unexpectedly (it is started again on the next preflight). */
  readonly onError?: (error: unknown) => void;
}

export interface DecisionThread {
  submit(
    args: PreflightArguments,
    clock: () => Date,
    sealingKey: Buffer | undefined,
  ): Promise<Json>;
  stop(): Promise<void>;
}

/** The worker's entry beside this file: compiled JavaScript, or TypeScript through ts-node under jest. */
function workerEntry(): { file: string; execArgv: string[] } {
  const typescript = path.extname(__filename) === '.ts';
  return {
    file: path.join(__dirname, `decisionWorker${typescript ? '.ts' : '.js'}`),
    execArgv: typescript ? ['--require', 'ts-node/register/transpile-only'] : [],
  };
}

/** The preflights handed to the thread and not answered yet, by id. */
type Pending = Map<number, { resolve: (value: Json) => void; reject: (error: Error) => void }>;

/** A worker thread running decisionWorker on a pool of its own. */
function newWorker(options: DecisionThreadOptions): Worker {
  const entry = workerEntry();
  return new Worker(entry.file, {
    execArgv: [
      ...process.execArgv.filter((arg) => !arg.startsWith('--cpu-prof')),
      ...entry.execArgv,
    ],
    workerData: {
      connectionString: options.connectionString,
      poolSize: options.poolSize ?? 4,
      applicationName: options.applicationName ?? 'spend-control-decisions',
    },
  });
}

/** Settles each waiter the thread answered (an answer without a waiter is one already told). */
function settle(pending: Pending, answers: readonly ThreadAnswer[]): void {
  for (const answer of answers) {
    const waiter = pending.get(answer.id);
    if (waiter === undefined) continue;
    pending.delete(answer.id);
    if (answer.ok) waiter.resolve(JSON.parse(answer.valueJson) as Json);
    else waiter.reject(fromWireError(answer.error));
  }
}

/** A preflight as it crosses (see WirePreflight); arguments that are not JSON are REQUEST_INVALID. */
function wirePreflight(
  args: PreflightArguments,
  clock: () => Date,
  sealingKey: Buffer | undefined,
): WirePreflight {
  try {
    return {
      argumentsJson: JSON.stringify(args),
      systemClock: clock === systemClock,
      nowMs: clock().getTime(),
      sealingKeyHex: sealingKey?.toString('hex') ?? null,
    };
  } catch (error) {
    throw new AppError('REQUEST_INVALID', 'The arguments are not JSON.', undefined, {
      cause: error,
    });
  }
}

export function startDecisionThread(options: DecisionThreadOptions): DecisionThread {
  const pending: Pending = new Map();
  let nextId = 1;
  let worker: Worker | null = null;
  let stopping: Promise<void> | null = null;

  const failPending = (error: Error) => {
    for (const [id, waiter] of pending) {
      pending.delete(id);
      waiter.reject(error);
    }
  };

  const spawn = (): Worker => {
    const spawned = newWorker(options);
    spawned.on('message', ({ answers }: ThreadAnswers) => settle(pending, answers));
    const died = (cause: unknown) => {
      if (worker !== spawned) return;
      worker = null;
      if (stopping === null) options.onError?.(cause);
      // Sent, maybe committed: an unknown outcome is the answer, never a retry.
      failPending(
        new AppError(
          'INTERNAL_ERROR',
          'The decision thread stopped; the outcome of this preflight is unknown.',
          undefined,
          { cause },
        ),
      );
    };
    spawned.on('error', died);
    spawned.on('exit', (code) => died(new Error(`decision thread exited with code ${code}`)));
    return spawned;
  };

  const send = coalescing<{ id: number; preflight: WirePreflight }>((preflights) => {
    if (worker === null) return; // died since: those waiters were already told
    worker.postMessage({ preflights } satisfies ThreadMessage);
  });

  return {
    submit(args, clock, sealingKey) {
      if (stopping !== null)
        return Promise.reject(new AppError('SERVICE_UNAVAILABLE', 'The service is shutting down.'));
      let preflight: WirePreflight;
      try {
        preflight = wirePreflight(args, clock, sealingKey);
      } catch (error) {
        return Promise.reject(error);
      }
      worker ??= spawn();
      const id = nextId++;
      const answer = new Promise<Json>((resolve, reject) => pending.set(id, { resolve, reject }));
      send({ id, preflight });
      return answer;
    },
    stop() {
      stopping ??= (async () => {
        const running = worker;
        if (running === null) return;
        const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
        await new Promise((resolve) => setImmediate(resolve)); // preflights submitted this turn go first
        running.postMessage({ stop: true } satisfies ThreadMessage); // answers what it holds, then ends its pool
        await exited;
      })();
      return stopping;
    },
  };
}

/** The decision thread serving a pool's preflights, if one was attached (else they run in-thread). */
const threads = new WeakMap<DbPool, DecisionThread>();

export function attachDecisionThread(pool: DbPool, thread: DecisionThread): void {
  threads.set(pool, thread);
}

export function detachDecisionThread(pool: DbPool, thread: DecisionThread): void {
  if (threads.get(pool) === thread) threads.delete(pool);
}

export function decisionThreadOf(pool: DbPool): DecisionThread | undefined {
  return threads.get(pool);
}
