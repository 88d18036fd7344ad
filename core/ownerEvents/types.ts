// The owner's outbound events (DECISIONS "Outbound events"): the five types, the wire body every
// endpoint receives, and the retry schedule of a delivery. Pure: names and numbers only; the
// outbox, the signing and the sending live in the policy subgraph and channels/.

export const OWNER_EVENT_TYPES = [
  'escalation.created',
  'escalation.resolved',
  'consumer_intent.state_changed',
  'receipt.anchored',
  'policy.changed',
] as const;
export type OwnerEventType = (typeof OWNER_EVENT_TYPES)[number];

export function isOwnerEventType(value: unknown): value is OwnerEventType {
  return (OWNER_EVENT_TYPES as readonly unknown[]).includes(value);
}

/** The body POSTed to an endpoint; receivers deduplicate by `id`. */
export interface OwnerEventBody {
  readonly id: string;
  readonly type: OwnerEventType;
  /** ISO-8601 UTC. */
  readonly occurredAt: string;
  readonly data: Record<string, unknown>;
}

/**
 * The wait before each retry after a failed attempt: 1 s, 5 s, 30 s, 2 min, 10 min, 30 min, 1 h,
 * 2 h. After the last one fails, the delivery is FAILED (nine attempts in all).
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000,
];
/** A schedule longer than this, or a wait longer than a day, is a configuration mistake. */
export const MAX_RETRIES = 20;
export const MAX_RETRY_WAIT_MS = 86_400_000;

/** The schedule, checked: 1..MAX_RETRIES whole, positive waits of at most a day. */
export function checkedRetrySchedule(schedule: readonly number[]): readonly number[] {
  if (schedule.length < 1 || schedule.length > MAX_RETRIES)
    throw new RangeError(`a webhook retry schedule has 1..${MAX_RETRIES} waits`);
  for (const waitMs of schedule) {
    if (!Number.isInteger(waitMs) || waitMs < 1 || waitMs > MAX_RETRY_WAIT_MS)
      throw new RangeError(
        `a webhook retry wait is a whole number of ms in 1..${MAX_RETRY_WAIT_MS}`,
      );
  }
  return schedule;
}

/**
 * After attempt `attempts` (1-based) failed: the wait before the next one, or null when the
 * schedule is spent and the delivery is FAILED.
 */
export function retryWaitMs(schedule: readonly number[], attempts: number): number | null {
  if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError('attempts start at 1');
  return schedule[attempts - 1] ?? null;
}
