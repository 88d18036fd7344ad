// The decision thread (DECISION_THREAD=1): preflights validated and decided (window reads, the
// engine, the writes, COMMIT) on a worker thread of their own, with connections of their own. On
// the server's event loop, a batch's round trips wait behind the HTTP, GraphQL and JSON work of
// every other request before their answers are read, so a policy's lock is held, and its next
// preflights wait, longer than PostgreSQL needs (docs/engine.md, Performance). The thread runs
// exactly the in-thread code (`preflightPaymentHere` of preflight.ts: validation, lookup, the
// queue and its batches); only arguments, answers and errors cross. A thread that dies leaves its
// pending preflights with an unknown outcome (they may have committed), which is their answer; the
// next preflight starts a new thread.
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Pool } from 'pg';
import { AppError, isErrorCode } from '../../core/errors';
import { systemClock } from '../../platform/clock';
import type { Json } from './preflight';

/** A preflight's arguments as the resolver got them (the thread validates, hashes and looks up, so the server's thread does not). */
export interface PreflightArguments {
  readonly policyId: unknown;
  readonly intent: unknown;
  readonly intentHash: unknown;
}

/**
 * A preflight as it crosses to the thread: its arguments as JSON text (they came as JSON, and a
 * string crosses as one copy where a cloned object costs the server's thread far more), the
 * caller's clock, and the sealing key as hex (a Buffer would drag its whole slab along). A clock
 * function cannot cross threads: when the caller runs on the system clock (the service always
 * does), the thread reads its own system clock once the policy's lock is held, as the in-thread
 * path reads the caller's; any other (injected) clock crosses as the reading taken at hand-over.
 */
export interface WirePreflight {
  readonly argumentsJson: string;
  readonly systemClock: boolean;
  /** The caller's clock read at hand-over: the decision's time when systemClock is false. */
  readonly nowMs: number;
  readonly sealingKeyHex: string | null;
}

/** An error as it crosses back: enough to rebuild an AppError, or a pg error with its SQLSTATE. */
export interface WireError {
  readonly app: boolean;
  readonly name: string;
  readonly message: string;
  readonly code?: string;
  readonly severity?: string;
  readonly details?: unknown;
  readonly stack?: string;
}

/**
 * What crosses, in batches: every preflight submitted in one turn of the event loop goes in one
 * message, and every answer a batch settles comes back in one (each message wakes the other thread,
 * which costs far more than cloning a few objects).
 */
export type ThreadMessage =
  | {
      readonly preflights: ReadonlyArray<{
        readonly id: number;
        readonly preflight: WirePreflight;
      }>;
    }
  | { readonly stop: true };
/** An answer: the preflight response as JSON text, or the error. */
export type ThreadAnswer =
  | { readonly id: number; readonly ok: true; readonly valueJson: string }
  | { readonly id: number; readonly ok: false; readonly error: WireError };
export type ThreadAnswers = { readonly answers: readonly ThreadAnswer[] };

/** Collects items and hands them over together once the current turn of the event loop is done. */
export function coalescing<T>(deliver: (items: T[]) => void): (item: T) => void {
  let items: T[] = [];
  return (item) => {
    if (items.length === 0) {
      setImmediate(() => {
        const due = items;
        items = [];
        deliver(due);
      });
    }
    items.push(item);
  };
}

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

export function toWireError(error: unknown): WireError {
  if (error instanceof AppError)
    return {
      app: true,
      name: error.name,
      message: error.message,
      code: error.code,
      details: error.details,
      stack: error.stack,
    };
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return {
    app: false,
    name: error instanceof Error ? error.name : 'Error',
    message: error instanceof Error ? error.message : String(error),
    ...(typeof code === 'string' ? { code } : {}),
    ...(typeof severity === 'string' ? { severity } : {}),
    ...(error instanceof Error && error.stack !== undefined ? { stack: error.stack } : {}),
  };
}

export function fromWireError(wire: WireError): Error {
  if (wire.app && wire.code !== undefined && isErrorCode(wire.code)) {
    const error = new AppError(wire.code, wire.message, wire.details);
    if (wire.stack !== undefined) error.stack = wire.stack;
    return error;
  }
  const error = new Error(wire.message);
  error.name = wire.name;
  if (wire.stack !== undefined) error.stack = wire.stack;
  return Object.assign(
    error,
    wire.code === undefined ? {} : { code: wire.code },
    wire.severity === undefined ? {} : { severity: wire.severity },
  );
}

/** The worker's entry beside this file: compiled JavaScript, or TypeScript through ts-node under jest. */
function workerEntry(): { file: string; execArgv: string[] } {
  const typescript = path.extname(__filename) === '.ts';
  return {
    file: path.join(__dirname, `decisionWorker${typescript ? '.ts' : '.js'}`),
    execArgv: typescript ? ['--require', 'ts-node/register/transpile-only'] : [],
  };
}

export function startDecisionThread(options: DecisionThreadOptions): DecisionThread {
  const pending = new Map<
    number,
    { resolve: (value: Json) => void; reject: (error: Error) => void }
  >();
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
    const entry = workerEntry();
    const spawned = new Worker(entry.file, {
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
    spawned.on('message', ({ answers }: ThreadAnswers) => {
      for (const answer of answers) {
        const waiter = pending.get(answer.id);
        if (waiter === undefined) continue;
        pending.delete(answer.id);
        if (answer.ok) waiter.resolve(JSON.parse(answer.valueJson) as Json);
        else waiter.reject(fromWireError(answer.error));
      }
    });
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
        preflight = {
          argumentsJson: JSON.stringify(args),
          systemClock: clock === systemClock,
          nowMs: clock().getTime(),
          sealingKeyHex: sealingKey?.toString('hex') ?? null,
        };
      } catch (error) {
        return Promise.reject(
          new AppError('REQUEST_INVALID', 'The arguments are not JSON.', undefined, {
            cause: error,
          }),
        );
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
const threads = new WeakMap<Pool, DecisionThread>();

export function attachDecisionThread(pool: Pool, thread: DecisionThread): void {
  threads.set(pool, thread);
}

export function detachDecisionThread(pool: Pool, thread: DecisionThread): void {
  if (threads.get(pool) === thread) threads.delete(pool);
}

export function decisionThreadOf(pool: Pool): DecisionThread | undefined {
  return threads.get(pool);
}
