// Every role as its own process, as docker-compose.yml runs them: the five subgraph roles, the
// worker and the gateway (`spend-control start --role <role>`), on one test database and the
// devnet chains of a shared DATA_DIR. Each answers /healthz, /readyz and /metrics (the subgraphs
// beside /graphql, the worker on METRICS_PORT, the gateway on PORT) with the business series it
// owns; on SIGTERM each answers /readyz 503 while still serving /healthz, then exits 0.
import { randomBytes, createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDevnetChains, type DevnetChains } from '../../devnet/chains';
import { createTestDatabase, type TestDatabase } from '../../platform/db/testDb';
import { SUBGRAPH_NAMES, type SubgraphName } from '../../platform/db/migrate';
import { CLI, freePort } from '../support/cliProcess';
import { spawnUntil, type FleetProcess } from '../support/fleet';

jest.setTimeout(300_000);

const DRAIN_DELAY_MS = 3_000;
const secrets = {
  SESSION_SECRET: randomBytes(32).toString('hex'),
  INTERNAL_ACTOR_SECRET: randomBytes(32).toString('hex'),
  ADMIN_TOKEN_HASHES: createHash('sha256').update(randomBytes(32)).digest('hex'),
};

/** The series each role must show (a name in its exposition) and must not (another role's). */
const OWNED: Record<string, { has: string[]; lacks: string[] }> = {
  catalog: { has: ['spend_pool_waiters'], lacks: ['spend_decisions_total'] },
  ledger: { has: ['spend_ledger_groups_total'], lacks: ['spend_decisions_total'] },
  policy: {
    has: ['spend_escalations_pending'],
    lacks: ['spend_worker_job_lag_seconds', 'spend_ledger_groups_total'],
  },
  intent: {
    has: ['spend_decisions_total', 'spend_consumer_intents_open'],
    lacks: ['spend_anchoring_lag_seconds'],
  },
  builder: { has: ['spend_pool_waiters'], lacks: ['spend_escalations_pending'] },
  worker: {
    has: [
      'spend_worker_job_lag_seconds{job="owner_webhook"}',
      'spend_webhook_deliveries_total',
      'spend_anchoring_lag_seconds',
    ],
    lacks: ['spend_decisions_total', 'http_requests_total{'],
  },
  gateway: {
    has: ['spend_paid_calls_total', 'spend_decisions_total', 'spend_worker_job_lag_seconds'],
    lacks: [],
  },
};

interface RoleProcess {
  readonly role: string;
  /** Where its probes answer. */
  readonly url: string;
  readonly process: FleetProcess;
}

let db: TestDatabase;
let devnet: DevnetChains;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'spend-control-roles-'));
chmodSync(dataDir, 0o755);
const roles: RoleProcess[] = [];

function roleEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...secrets,
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    DATABASE_URL: db.url,
    MIGRATION_DATABASE_URL: db.ownerUrl,
    LOG_LEVEL: 'warn',
    DRAIN_DELAY_MS: String(DRAIN_DELAY_MS),
    ...extra,
  };
  for (const name of ['FUNDING_RPC_URL', 'SETTLEMENT_RPC_URL', 'OTEL_EXPORTER_OTLP_ENDPOINT'])
    delete env[name];
  return env;
}

function startRole(role: string, env: Record<string, string>): Promise<FleetProcess> {
  return spawnUntil(process.execPath, [CLI, 'start', '--role', role], {
    env: roleEnv(env),
    ready: (output) => output.includes(`ready           role ${role}`),
    timeoutMs: 240_000,
  });
}

/** A subgraph role on a free port of its own: SUBGRAPH_PORT_BASE is set so that base + index is it. */
async function startSubgraphRole(name: SubgraphName): Promise<RoleProcess> {
  const port = await freePort();
  const base = port - SUBGRAPH_NAMES.indexOf(name);
  const started = await startRole(name, {
    SUBGRAPH_PORT_BASE: String(base),
    PORT: String(await freePort()),
    METRICS_PORT: String(await freePort()),
  });
  return { role: name, url: `http://127.0.0.1:${port}`, process: started };
}

async function get(url: string): Promise<{ status: number; type: string; text: string }> {
  const response = await fetch(url, { headers: { connection: 'close' } });
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    text: await response.text(),
  };
}

beforeAll(async () => {
  db = await createTestDatabase();
  devnet = await startDevnetChains({ dataDir });
  const subgraphs = await Promise.all(SUBGRAPH_NAMES.map((name) => startSubgraphRole(name)));
  roles.push(...subgraphs);
  const metricsPort = await freePort();
  const worker = await startRole('worker', { METRICS_PORT: String(metricsPort) });
  roles.push({ role: 'worker', url: `http://127.0.0.1:${metricsPort}`, process: worker });
  const gatewayPort = await freePort();
  const urls = Object.fromEntries(
    subgraphs.map((s) => [`SUBGRAPH_URL_${s.role.toUpperCase()}`, `${s.url}/graphql`]),
  );
  const gateway = await startRole('gateway', {
    ...urls,
    PORT: String(gatewayPort),
    SUBGRAPH_PORT_BASE: String(await freePort()),
    METRICS_PORT: String(await freePort()),
  });
  roles.push({ role: 'gateway', url: `http://127.0.0.1:${gatewayPort}`, process: gateway });
}, 300_000);

afterAll(async () => {
  for (const running of roles) await running.process.stop();
  await devnet?.stop();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('every role answers /healthz, /readyz and /metrics in Prometheus format with the series it owns', async () => {
  expect(roles.map((r) => r.role).sort()).toEqual([...SUBGRAPH_NAMES, 'gateway', 'worker'].sort());
  for (const { role, url } of roles) {
    expect({ role, ...(await get(`${url}/healthz`)) }).toMatchObject({
      role,
      status: 200,
      text: '{"ok":true}',
    });
    const ready = await get(`${url}/readyz`);
    expect({ role, status: ready.status, body: JSON.parse(ready.text) }).toMatchObject({
      role,
      status: 200,
      body: { ready: true, checks: { database: 'ok' } },
    });
    const metrics = await get(`${url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(metrics.text).toMatch(/^process_cpu_user_seconds_total \d/m);
    for (const series of OWNED[role]!.has)
      expect({ role, has: metrics.text.includes(series) }).toEqual({ role, has: true });
    for (const series of OWNED[role]!.lacks)
      expect({ role, lacks: !metrics.text.includes(series) }).toEqual({ role, lacks: true });
  }
});

/** Polls /readyz on fresh connections until it stops answering 200. */
async function untilNotReady(url: string): Promise<{ status: number; text: string }> {
  let readiness = await get(`${url}/readyz`);
  for (let attempt = 0; attempt < 200 && readiness.status === 200; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    readiness = await get(`${url}/readyz`);
  }
  return readiness;
}

test('SIGTERM: every role answers /readyz 503 (draining) while /healthz still answers, then exits 0', async () => {
  const drained = await Promise.all(
    roles.map(async ({ role, url, process: running }) => {
      running.child.kill('SIGTERM');
      const readiness = await untilNotReady(url);
      const health = await get(`${url}/healthz`);
      const aliveWhileDraining = running.child.exitCode === null;
      return {
        role,
        readiness: { status: readiness.status, body: JSON.parse(readiness.text) },
        health: health.status,
        aliveWhileDraining,
        exit: await running.exited,
      };
    }),
  );
  for (const result of drained)
    expect(result).toEqual({
      role: result.role,
      readiness: { status: 503, body: { ready: false, checks: { draining: 'stopping' } } },
      health: 200,
      aliveWhileDraining: true,
      exit: 0,
    });
});
