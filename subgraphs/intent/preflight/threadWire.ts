// What crosses between the server's thread and the decision thread (decisionThread.ts,
// decisionWorker.ts): a preflight's arguments as JSON text, its answer as JSON text, an error as
// enough to rebuild it; each direction batched per turn of the event loop. Nothing else crosses.
import { AppError, isErrorCode } from '../../../core/errors';

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
