// The process's metrics registry as a role serves it at /metrics: the HTTP and Node figures, the
// business counters the gateway and workers increment, and the series each subgraph reads from its
// schema at scrape time (subgraphs/*/metrics.ts). One per process; docs/operations.md lists them.
// The gateway (and the all-in-one process) carries every series; a subgraph role the ones of its
// own schema; the worker role the queues it works off (job lag, webhook and anchoring backlogs).
import type { Pool } from 'pg';
import { createHttpMetrics, type HttpMetrics } from '../platform/metrics';
import type { SubgraphName } from '../platform/db/migrate';
import { registerSqlCollectors, type SqlCollectors } from '../platform/sqlCollectors';
import { INTENT_METRICS } from '../subgraphs/intent';
import { LEDGER_METRICS } from '../subgraphs/ledger';
import { POLICY_METRICS } from '../subgraphs/policy';
import type { Role } from './startup';

const SCHEMA_METRICS: Readonly<Record<SubgraphName, SqlCollectors>> = {
  catalog: { tails: [], gauges: [] },
  ledger: LEDGER_METRICS,
  policy: POLICY_METRICS,
  intent: INTENT_METRICS,
  builder: { tails: [], gauges: [] },
};

/** The series of the queues the worker role works off, whichever schema holds them. */
const WORKER_SERIES: ReadonlySet<string> = new Set([
  'spend_worker_job_lag_seconds',
  'spend_webhook_deliveries_pending',
  'spend_anchoring_lag_seconds',
  'spend_anchoring_pending',
]);

function collectorsWhere(keep: (name: string) => boolean): SqlCollectors {
  const all = Object.values(SCHEMA_METRICS);
  return {
    tails: all.flatMap((set) => set.tails.filter((spec) => keep(spec.name))),
    gauges: all.flatMap((set) => set.gauges.filter((spec) => keep(spec.name))),
  };
}

function registryWith(pool: Pool, collectors: SqlCollectors): HttpMetrics {
  const metrics = createHttpMetrics();
  registerSqlCollectors(metrics.registry, pool, collectors);
  return metrics;
}

/** A registry with every business series, the SQL ones read through `pool`. */
export function serviceMetrics(pool: Pool): HttpMetrics {
  return registryWith(
    pool,
    collectorsWhere(() => true),
  );
}

/** The registry of one role's process: the series that role owns. */
export function roleMetrics(role: Role, pool: Pool): HttpMetrics {
  if (role === 'all' || role === 'gateway') return serviceMetrics(pool);
  if (role === 'worker')
    return registryWith(
      pool,
      collectorsWhere((n) => WORKER_SERIES.has(n)),
    );
  const own = SCHEMA_METRICS[role];
  return registryWith(pool, {
    tails: own.tails.filter((spec) => !WORKER_SERIES.has(spec.name)),
    gauges: own.gauges.filter((spec) => !WORKER_SERIES.has(spec.name)),
  });
}
