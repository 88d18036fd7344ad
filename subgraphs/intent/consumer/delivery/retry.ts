// How long a delivery check that found no usable answer (registry down, 5xx, malformed, timeout)
// waits before the next one, and when the job stops asking and hands the intent to a human. Pure.

export interface DeliveryRetryPolicy {
  /** Checks without a usable answer before MANUAL_REVIEW (DELIVERY_UNVERIFIED); 1–100. */
  readonly maxAttempts: number;
  /** The wait after the n-th failed check (the last one is reused), milliseconds ≥ 0. */
  readonly backoffMs: readonly number[];
}

export const DEFAULT_DELIVERY_RETRY: DeliveryRetryPolicy = Object.freeze({
  maxAttempts: 5,
  backoffMs: Object.freeze([2_000, 10_000, 30_000, 120_000]),
});

export function assertDeliveryRetryPolicy(policy: DeliveryRetryPolicy): void {
  const { maxAttempts, backoffMs } = policy;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 100)
    throw new RangeError('delivery maxAttempts must be an integer in 1..100');
  if (backoffMs.length === 0 || backoffMs.some((ms) => !Number.isInteger(ms) || ms < 0))
    throw new RangeError('delivery backoffMs must be one or more whole milliseconds ≥ 0');
}

export type AfterUnverified =
  | { readonly giveUp: true; readonly attempts: number }
  | { readonly giveUp: false; readonly attempts: number; readonly retryAt: Date };

/** After a check without a usable answer: the attempt count, and either give up or when to retry. */
export function afterUnverified(
  previousAttempts: number,
  policy: DeliveryRetryPolicy,
  now: Date,
): AfterUnverified {
  const attempts = previousAttempts + 1;
  if (attempts >= policy.maxAttempts) return { giveUp: true, attempts };
  const wait = policy.backoffMs[Math.min(attempts - 1, policy.backoffMs.length - 1)]!;
  return { giveUp: false, attempts, retryAt: new Date(now.getTime() + wait) };
}
