// A test seam for crash tests, and nothing else: with SPEND_CONTROL_CRASH_AT naming a step of
// consumer execution, the process kills itself with SIGKILL (no cleanup, no flush, as kill -9)
// when it reaches that step, so a test can restart it and check recovery. Ignored when
// NODE_ENV is production.
export const CRASH_POINTS = [
  'after-redeem',
  'after-signing',
  'after-request-left',
  'after-answer',
  'after-paid-recorded',
  'after-delivery-check',
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

export const CRASH_ENV = 'SPEND_CONTROL_CRASH_AT';

export function crashPoint(point: CrashPoint, env: NodeJS.ProcessEnv = process.env): void {
  if (env.NODE_ENV === 'production') return;
  if (env[CRASH_ENV] === point) process.kill(process.pid, 'SIGKILL');
}

/**
 * The same, `afterMs` from now and without waiting: for a step whose end no code observes, such
 * as a request that is on the wire while its answer is not back (a test makes the peer slow
 * enough that the request has certainly arrived).
 */
export function crashPointSoon(
  point: CrashPoint,
  afterMs: number,
  env: NodeJS.ProcessEnv = process.env,
): void {
  if (env.NODE_ENV === 'production' || env[CRASH_ENV] !== point) return;
  setTimeout(() => process.kill(process.pid, 'SIGKILL'), afterMs).unref();
}
