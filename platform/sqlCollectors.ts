// Business series read from SQL at scrape time, so that they are right whichever process made the
// change: a tail counter follows an append-only table past the highest key it has counted (one
// indexed range read of the rows added since the last scrape), a state gauge is one bounded,
// indexed aggregate. The queries of one scrape run one after another, so a scrape holds at most one
// connection of the pool. The subgraphs own the SQL (each one's metrics.ts); this file only knows
// prom-client and a pool. A failing query leaves the last values and counts the failure.
import type { Pool } from 'pg';
import { Counter, Gauge, type Registry } from 'prom-client';

/** Rows of a tail query: label columns, `n` (rows counted) and `last` (highest key among them). */
export interface TailSpec {
  readonly name: string;
  readonly help: string;
  readonly labels: readonly string[];
  /** Takes the last key counted as $1; returns one row per label set with `n` and `last`. */
  readonly sql: string;
  /** The highest key now (the counter starts there, as a counter starts at process start). */
  readonly startSql: string;
}

/** Rows of a gauge query: label columns and `value`. */
export interface GaugeSpec {
  readonly name: string;
  readonly help: string;
  readonly labels: readonly string[];
  readonly sql: string;
  /** Label sets reported as 0 when the query returns no row for them. */
  readonly zeroes?: ReadonlyArray<Record<string, string>>;
}

export interface SqlCollectors {
  readonly tails: readonly TailSpec[];
  readonly gauges: readonly GaugeSpec[];
}

type Row = Record<string, unknown>;
type Query = <T extends Row>(sql: string, params?: unknown[]) => Promise<T[]>;

/** The pool's query, one at a time: prom-client collects every series at once. */
function serialQuery(pool: Pool): Query {
  let queue: Promise<unknown> = Promise.resolve();
  return <T extends Row>(sql: string, params: unknown[] = []) => {
    const run = queue.then(() => pool.query<T>(sql, params)).then((result) => result.rows);
    queue = run.catch(() => undefined);
    return run;
  };
}

function labelsOf(row: Row, labels: readonly string[]): Record<string, string> {
  return Object.fromEntries(labels.map((label) => [label, String(row[label] ?? 'none')]));
}

/** Registers every tail counter and gauge on `registry`, reading `pool` at each scrape. */
export function registerSqlCollectors(
  registry: Registry,
  pool: Pool,
  collectors: SqlCollectors,
): void {
  const failures = new Counter({
    name: 'spend_metrics_query_failures_total',
    help: 'Scrape-time metric queries that failed (the series keep their last values)',
    labelNames: ['series'] as const,
    registers: [registry],
  });
  const query = serialQuery(pool);
  for (const spec of collectors.tails) registerTail(registry, query, spec, failures);
  for (const spec of collectors.gauges) registerGauge(registry, query, spec, failures);
  new Gauge({
    name: 'spend_pool_waiters',
    help: 'Requests waiting for a connection of the process pool',
    registers: [registry],
    collect() {
      this.set(pool.waitingCount);
    },
  });
}

function registerTail(
  registry: Registry,
  query: Query,
  spec: TailSpec,
  failures: Counter<'series'>,
): void {
  // The counter starts at the highest key at registration (process start), as a counter starts at 0.
  let last: string | null = null;
  const started = query<{ last: string | null }>(spec.startSql)
    .then((rows) => {
      last = rows[0]?.last ?? '0';
    })
    .catch(() => undefined);
  new Counter({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labels,
    registers: [registry],
    async collect() {
      try {
        await started;
        if (last === null) {
          const start = await query<{ last: string | null }>(spec.startSql);
          last = start[0]?.last ?? '0';
          return;
        }
        const rows = await query(spec.sql, [last]);
        for (const row of rows) {
          this.inc(labelsOf(row, spec.labels), Number(row.n));
          if (BigInt(String(row.last)) > BigInt(last)) last = String(row.last);
        }
      } catch {
        failures.inc({ series: spec.name });
      }
    },
  });
}

function registerGauge(
  registry: Registry,
  query: Query,
  spec: GaugeSpec,
  failures: Counter<'series'>,
): void {
  new Gauge({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labels,
    registers: [registry],
    async collect() {
      try {
        const rows = await query(spec.sql);
        this.reset();
        for (const zero of spec.zeroes ?? []) this.set(zero, 0);
        for (const row of rows) this.set(labelsOf(row, spec.labels), Number(row.value));
      } catch {
        failures.inc({ series: spec.name });
      }
    },
  });
}
