// Where bucket levels live. PostgreSQL (the default): one table every gateway replica shares, one
// function call per check (gateway.take_rate_tokens), on a small pool of its own so a busy service
// pool never delays the check; checks on the same buckets that arrive while one is in flight go
// together in the next call, so a hot bucket costs one round trip per batch, not one per request.
// Memory (RATE_LIMIT_STORE=memory): per-process buckets, for a single replica and for tests of the
// maths; each replica then admits its own full rate.
import type { Pool } from 'pg';
import { createPool } from '../../platform/db/pool';
import { type BucketLevel, type BucketLimit, capacityUnits, levelAt, takeToken } from './bucket';

/** One bucket a request is charged to: its key (`ip:…`, `payer:…`) and limits. */
export interface BucketCharge {
  readonly key: string;
  readonly limit: BucketLimit;
}

export interface RateLimitStore {
  /** Takes one token from every bucket or from none; 0 when admitted, else ms until it would be. */
  take(charges: readonly BucketCharge[]): Promise<number>;
  close(): Promise<void>;
}

/** Full buckets are forgotten this often (an absent bucket is full, so nothing changes by it). */
export const SWEEP_INTERVAL_MS = 60_000;
/** Connections of the PostgreSQL store's own pool: each check is one short function call. */
export const STORE_POOL_SIZE = 4;

const TAKE_STATEMENT =
  'SELECT granted, wait_ms FROM gateway.take_rate_tokens($1::text[], $2::bigint[], $3::bigint[], $4::integer)';
/** Most checks sent in one call. */
export const MAX_CHECKS_PER_CALL = 1_000;

interface PendingCheck {
  readonly resolve: (waitMs: number) => void;
  readonly reject: (error: unknown) => void;
}

/** The checks of one set of buckets: at most one call in flight, the rest waiting for the next. */
interface BucketSetQueue {
  readonly charges: readonly BucketCharge[];
  readonly waiting: PendingCheck[];
  inFlight: boolean;
}

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly buckets = new Map<string, { level: BucketLevel; limit: BucketLimit }>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly nowMs: () => number = Date.now) {
    this.timer = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async take(charges: readonly BucketCharge[]): Promise<number> {
    const now = this.nowMs();
    const outcome = takeToken(
      charges.map((charge) => ({
        limit: charge.limit,
        level: this.buckets.get(charge.key)?.level,
      })),
      now,
    );
    if (!outcome.admitted) return outcome.retryAfterMs;
    charges.forEach((charge, index) =>
      this.buckets.set(charge.key, { level: outcome.levels[index]!, limit: charge.limit }),
    );
    return 0;
  }

  /** Forgets buckets that are full again; returns how many are kept. */
  sweep(): number {
    const now = this.nowMs();
    for (const [key, { level, limit }] of this.buckets) {
      if (levelAt(level, limit, now) >= capacityUnits(limit)) this.buckets.delete(key);
    }
    return this.buckets.size;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
  }
}

export class PostgresRateLimitStore implements RateLimitStore {
  private readonly timer: NodeJS.Timeout;
  private readonly queues = new Map<string, BucketSetQueue>();

  constructor(
    private readonly pool: Pool,
    private readonly ownsPool: boolean,
    onSweepError: (error: unknown) => void,
  ) {
    this.timer = setInterval(() => {
      this.pool.query('SELECT gateway.sweep_rate_buckets()').catch(onSweepError);
    }, SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  take(charges: readonly BucketCharge[]): Promise<number> {
    const key = JSON.stringify(charges);
    let queue = this.queues.get(key);
    if (queue === undefined) {
      queue = { charges, waiting: [], inFlight: false };
      this.queues.set(key, queue);
    }
    const settled = new Promise<number>((resolve, reject) =>
      queue.waiting.push({ resolve, reject }),
    );
    this.flush(key, queue);
    return settled;
  }

  /** Sends the waiting checks of one bucket set as one call, unless one is in flight already. */
  private flush(key: string, queue: BucketSetQueue): void {
    if (queue.inFlight) return;
    if (queue.waiting.length === 0) {
      this.queues.delete(key);
      return;
    }
    const batch = queue.waiting.splice(0, MAX_CHECKS_PER_CALL);
    queue.inFlight = true;
    this.call(queue.charges, batch.length)
      .then(
        ({ granted, waitMs }) =>
          batch.forEach((check, index) => check.resolve(index < granted ? 0 : waitMs)),
        (error: unknown) => batch.forEach((check) => check.reject(error)),
      )
      .finally(() => {
        queue.inFlight = false;
        this.flush(key, queue);
      });
  }

  private async call(
    charges: readonly BucketCharge[],
    count: number,
  ): Promise<{ granted: number; waitMs: number }> {
    const result = await this.pool.query<{ granted: number; wait_ms: string }>({
      text: TAKE_STATEMENT,
      values: [
        charges.map((charge) => charge.key),
        charges.map((charge) => capacityUnits(charge.limit)),
        charges.map((charge) => charge.limit.perMinute),
        count,
      ],
    });
    return { granted: result.rows[0]!.granted, waitMs: Number(result.rows[0]!.wait_ms) };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    if (this.ownsPool) await this.pool.end();
  }
}

export type RateLimitStoreKind = 'postgres' | 'memory';

/** The store a gateway runs with; the PostgreSQL one opens (and closes) its own small pool. */
export function openRateLimitStore(
  kind: RateLimitStoreKind,
  databaseUrl: string | null,
  onError: (error: unknown) => void,
): RateLimitStore {
  if (kind === 'memory') return new MemoryRateLimitStore();
  if (databaseUrl === null) throw new Error('RATE_LIMIT_STORE=postgres needs the database URL');
  return new PostgresRateLimitStore(
    createPool(databaseUrl, {
      max: STORE_POOL_SIZE,
      applicationName: 'spend-control-rate-limit',
      onIdleError: onError,
    }),
    true,
    onError,
  );
}
