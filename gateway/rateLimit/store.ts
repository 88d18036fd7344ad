// Where bucket levels live. PostgreSQL (the default): one table every gateway replica shares, on a
// small pool of its own so a busy service pool never delays a check. Checks go as group commits
// do: one call (gateway.take_rate_tokens_each) in flight at a time, and every check that arrives
// meanwhile, whatever its buckets, goes in the next one, each decided exactly as if alone in
// arrival order; so a busy gateway pays one round trip per batch of requests, not one per request.
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
  'SELECT check_no, granted, wait_ms FROM gateway.take_rate_tokens_each($1::integer[], $2::text[], $3::bigint[], $4::bigint[])';
/** Most checks sent in one call. */
export const MAX_CHECKS_PER_CALL = 1_000;

interface PendingCheck {
  readonly charges: readonly BucketCharge[];
  readonly resolve: (waitMs: number) => void;
  readonly reject: (error: unknown) => void;
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
  private waiting: PendingCheck[] = [];
  private inFlight = false;
  /** Calls made and checks they carried (for tests and benches). */
  readonly stats = { calls: 0, checks: 0 };

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
    const settled = new Promise<number>((resolve, reject) =>
      this.waiting.push({ charges, resolve, reject }),
    );
    this.flush();
    return settled;
  }

  /** Sends the waiting checks as one call, unless one is in flight already (it sends them when done). */
  private flush(): void {
    if (this.inFlight || this.waiting.length === 0) return;
    const batch = this.waiting.splice(0, MAX_CHECKS_PER_CALL);
    this.inFlight = true;
    this.call(batch)
      .then(
        (waits) => batch.forEach((check, index) => check.resolve(waits[index]!)),
        (error: unknown) => batch.forEach((check) => check.reject(error)),
      )
      .finally(() => {
        this.inFlight = false;
        this.flush();
      });
  }

  /** One call for every check of the batch: each one's wait (0 when admitted), in order. */
  private async call(batch: readonly PendingCheck[]): Promise<number[]> {
    const checks: number[] = [];
    const buckets: string[] = [];
    const capacities: number[] = [];
    const refills: number[] = [];
    batch.forEach((check, index) => {
      for (const charge of check.charges) {
        checks.push(index + 1);
        buckets.push(charge.key);
        capacities.push(capacityUnits(charge.limit));
        refills.push(charge.limit.perMinute);
      }
    });
    this.stats.calls += 1;
    this.stats.checks += batch.length;
    const result = await this.pool.query<{ check_no: number; granted: boolean; wait_ms: string }>({
      text: TAKE_STATEMENT,
      values: [checks, buckets, capacities, refills],
    });
    const waits = new Array<number>(batch.length);
    for (const row of result.rows) waits[row.check_no - 1] = row.granted ? 0 : Number(row.wait_ms);
    if (result.rows.length !== batch.length || waits.some((wait) => wait === undefined))
      throw new Error(
        `take_rate_tokens_each answered ${result.rows.length} of ${batch.length} checks`,
      );
    return waits;
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
