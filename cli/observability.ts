// The process's metrics registry as a role serves it at /metrics: the HTTP and Node figures, the
// business counters the gateway and workers increment, and the series each subgraph reads from its
// schema at scrape time (subgraphs/*/metrics.ts). One per process; docs/operations.md lists them.
import type { Pool } from 'pg';
import { createHttpMetrics, type HttpMetrics } from '../platform/metrics';
import { registerSqlCollectors } from '../platform/sqlCollectors';
import { INTENT_METRICS } from '../subgraphs/intent';
import { LEDGER_METRICS } from '../subgraphs/ledger';
import { POLICY_METRICS } from '../subgraphs/policy';

/** A registry with every business series, the SQL ones read through `pool`. */
export function serviceMetrics(pool: Pool): HttpMetrics {
  const metrics = createHttpMetrics();
  registerSqlCollectors(metrics.registry, pool, {
    tails: [...INTENT_METRICS.tails, ...LEDGER_METRICS.tails, ...POLICY_METRICS.tails],
    gauges: [...INTENT_METRICS.gauges, ...LEDGER_METRICS.gauges, ...POLICY_METRICS.gauges],
  });
  return metrics;
}
