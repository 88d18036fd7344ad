// docs/grafana-dashboard.json stays built from the metrics the service serves: every series a panel
// queries is registered by the service's registry (cli/observability.ts, without a scrape), and
// every alert the dashboard defines has its runbook entry in docs/operations.md.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Pool } from 'pg';
import { serviceMetrics } from '../../cli/observability';
import { projectRoot } from '../../platform/paths';

const dashboard = JSON.parse(
  readFileSync(path.join(projectRoot(), 'docs', 'grafana-dashboard.json'), 'utf8'),
) as {
  panels: Array<{ title: string; targets: Array<{ expr: string }>; alert?: { name: string } }>;
};
const operations = readFileSync(path.join(projectRoot(), 'docs', 'operations.md'), 'utf8');

test('every series a panel queries is one the service registers', async () => {
  // The pool is never connected: only the registry's names are read.
  const pool = new Pool({ connectionString: 'postgres://unused@127.0.0.1:1/none', max: 1 });
  pool.on('error', () => undefined);
  const registered = new Set(
    serviceMetrics(pool)
      .registry.getMetricsAsArray()
      .map((metric) => metric.name),
  );
  const queried = dashboard.panels.flatMap((panel) =>
    panel.targets.flatMap((target) => target.expr.match(/\b(spend|http)_[a-z_]+/g) ?? []),
  );
  expect(queried.length).toBeGreaterThan(15);
  const base = (name: string) => name.replace(/_(bucket|count|sum)$/, '');
  expect(queried.map(base).filter((name) => !registered.has(name))).toEqual([]);
  await pool.end();
});

test('every alert has a runbook entry in docs/operations.md', () => {
  const alerts = dashboard.panels.flatMap((panel) => (panel.alert ? [panel.alert.name] : []));
  expect(alerts.length).toBeGreaterThanOrEqual(8);
  expect(alerts.filter((name) => !operations.includes(`- **${name}** (`))).toEqual([]);
});
