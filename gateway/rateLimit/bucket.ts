// Token-bucket maths, pure and exact: integers only. A bucket holds up to `burst` tokens and
// refills `perMinute` tokens a minute; in scaled units (one token = TOKEN_UNITS) it refills exactly
// `perMinute` units per millisecond, so no rounding ever admits an extra request. A request takes
// one token from every bucket it is charged to, or from none; several requests on the same buckets
// at one instant are taken in order. gateway.take_rate_tokens (SQL) is the same maths; the
// rateLimit tests hold the two to the same answers.

/** One token in scaled units: a minute in milliseconds, so `perMinute` is the refill per millisecond. */
export const TOKEN_UNITS = 60_000;
/** Upper bound of perMinute and burst: keeps every level below 2^53 (and inside a bigint). */
export const MAX_BUCKET_SETTING = 1_000_000;

export interface BucketLimit {
  /** Tokens added per minute (1..MAX_BUCKET_SETTING). */
  readonly perMinute: number;
  /** Most tokens the bucket holds, i.e. the most requests admitted at once (1..MAX_BUCKET_SETTING). */
  readonly burst: number;
}

/** A stored bucket: its level in scaled units at a time in ms. An absent bucket is full. */
export interface BucketLevel {
  readonly units: number;
  readonly atMs: number;
}

export interface TakeOutcome {
  readonly admitted: boolean;
  /** 0 when admitted; else how long until every refused bucket holds a token again. */
  readonly retryAfterMs: number;
  /** The buckets' levels after this request, in the order given. */
  readonly levels: readonly BucketLevel[];
}

export function capacityUnits(limit: BucketLimit): number {
  return limit.burst * TOKEN_UNITS;
}

/** The level at `nowMs`: refilled since it was stored, never above capacity, never refilled backwards in time. */
export function levelAt(level: BucketLevel | undefined, limit: BucketLimit, nowMs: number): number {
  const capacity = capacityUnits(limit);
  if (level === undefined) return capacity;
  // Past the time it takes to refill from empty, more elapsed time changes nothing (and stays exact).
  const elapsedMs = Math.min(
    Math.max(0, nowMs - level.atMs),
    Math.ceil(capacity / limit.perMinute),
  );
  return Math.min(capacity, level.units + elapsedMs * limit.perMinute);
}

/** Takes one token from every bucket, or from none when any of them holds less than one. */
export function takeToken(
  buckets: ReadonlyArray<{ limit: BucketLimit; level: BucketLevel | undefined }>,
  nowMs: number,
): TakeOutcome {
  const { granted, retryAfterMs, levels } = takeTokens(buckets, 1, nowMs);
  return { admitted: granted === 1, retryAfterMs, levels };
}

export interface BatchOutcome {
  /** How many of the `count` requests were admitted (the first ones, in order). */
  readonly granted: number;
  /** 0 when all were; else how long the first refused one would wait. */
  readonly retryAfterMs: number;
  readonly levels: readonly BucketLevel[];
}

/**
 * `count` requests charged to the same buckets at the same instant, one after the other: each
 * takes one token from every bucket while every bucket holds one. Exactly takeToken `count` times.
 */
export function takeTokens(
  buckets: ReadonlyArray<{ limit: BucketLimit; level: BucketLevel | undefined }>,
  count: number,
  nowMs: number,
): BatchOutcome {
  const current = buckets.map(({ limit, level }) => levelAt(level, limit, nowMs));
  const granted = Math.min(count, ...current.map((units) => Math.floor(units / TOKEN_UNITS)));
  let retryAfterMs = 0;
  if (granted < count) {
    current.forEach((units, index) => {
      const left = units - granted * TOKEN_UNITS;
      if (left < TOKEN_UNITS)
        retryAfterMs = Math.max(
          retryAfterMs,
          Math.ceil((TOKEN_UNITS - left) / buckets[index]!.limit.perMinute),
        );
    });
  }
  const levels = current.map((units, index) => ({
    units: units - granted * TOKEN_UNITS,
    atMs: Math.max(nowMs, buckets[index]!.level?.atMs ?? nowMs),
  }));
  return { granted, retryAfterMs, levels };
}

/** Retry-After in whole seconds, at least 1 (a 429 never says "retry now"). */
export function retryAfterSeconds(retryAfterMs: number): number {
  return Math.max(1, Math.ceil(retryAfterMs / 1000));
}
