// Preflight benchmark: POST /preflight_payment through the gateway's REST layer (gateway → intent
// subgraph over HTTP → PostgreSQL) against the same operation sent straight to the intent
// subgraph, with CLIENTS concurrent clients spread over POLICIES policies and, separately, all on
// one hot policy; so the gateway's share is visible. Creates and drops its own database on the
// server named by DATABASE_URL (bench/run.ts starts an embedded one when it is unset).
// Run: npm run bench:preflight   (args: [seconds per scenario])
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import 'reflect-metadata';
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import { Pool } from 'pg';
import { policyDocument } from '../core/test-support/spend-fixtures';
import { formatIsoSeconds } from '../core/validation/timestamp';
import { ACTOR_HEADER, ANONYMOUS, signActor } from '../platform/actor';
import { silentLogger } from '../platform/log';
import { migrate } from '../platform/db/migrate';
import { serverUrl, withDatabase } from '../platform/db/testDb';
import { startAllInOne } from '../cli/stack';
import { loadPersistedDocuments } from '../gateway/rest/documents';
import { percentile } from './stats';

const CLIENTS = 32;
const POLICIES = 100;
const DEFAULT_SECONDS = 8;
const WARMUP_SECONDS = 2;
const TARGET_PER_SECOND = 1_000;
const TARGET_P99_MS = 50;
const TOKEN = '0x779ded0c9e1022225f8e0630b35a9b54be713736';

interface Scenario {
  name: string;
  send(policy: { policyId: string; policyHash: string }, nonce: bigint): Promise<number>;
}

interface Result {
  name: string;
  policies: number;
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Map<number, number>;
}

/** A fresh intent per call (nonce), small enough that the budget never runs out during the run. */
function intentFor(policy: { policyId: string; policyHash: string }, nonce: bigint) {
  return {
    policyId: policy.policyId,
    policyHash: policy.policyHash,
    agentId: 'bench-agent',
    category: 'market-data',
    provider: 'api.vendor.example',
    capability: 'quotes.read',
    item: { description: 'EURUSD 1m candles', params: { pair: 'EURUSD' } },
    recipient: '0x2a2b2c2d2e2f2a2b2c2d2e2f2a2b2c2d2e2f2a2b',
    network: 'eip155:196',
    token: TOKEN,
    amount: '1000',
    deadline: formatIsoSeconds(Math.floor(Date.now() / 1000) + 3600),
    nonce: nonce.toString(),
    endpoint: 'https://api.vendor.example/candles',
  };
}

async function run(
  scenario: Scenario,
  policies: ReadonlyArray<{ policyId: string; policyHash: string }>,
  seconds: number,
  nonceBase: { next: bigint },
): Promise<Result> {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const warmupUntil = Date.now() + WARMUP_SECONDS * 1000;
  const until = warmupUntil + seconds * 1000;
  let measuredStart = 0;
  const client = async (index: number) => {
    let turn = index;
    while (Date.now() < until) {
      const policy = policies[turn % policies.length];
      turn += CLIENTS;
      const nonce = nonceBase.next;
      nonceBase.next += 1n;
      const started = process.hrtime.bigint();
      const status = await scenario.send(policy, nonce);
      const now = Date.now();
      if (now < warmupUntil) continue;
      if (measuredStart === 0) measuredStart = now;
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_value, index) => client(index)));
  const elapsedSeconds = (Date.now() - measuredStart) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    name: scenario.name,
    policies: policies.length,
    requests: latencies.length,
    perSecond: Math.round(latencies.length / elapsedSeconds),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    statuses,
  };
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? DEFAULT_SECONDS);
  const server = serverUrl();
  const name = `bench_preflight_${randomBytes(4).toString('hex')}`;
  const admin = new Pool({ connectionString: server, max: 1 });
  await admin.query(`CREATE DATABASE ${name}`);
  const pool = new Pool({ connectionString: withDatabase(server, name), max: 20 });
  pool.on('error', () => undefined);
  const actorSecret = randomBytes(32);
  const adminToken = randomBytes(32).toString('base64url');
  let stop: (() => Promise<void>) | null = null;
  try {
    await migrate(pool);
    const stack = await startAllInOne({
      host: '127.0.0.1',
      port: 0,
      db: pool,
      transport: 'http',
      subgraphPortBase: 0,
      actorSecret,
      adminTokenHashes: [createHash('sha256').update(adminToken).digest()],
      sessionSecret: randomBytes(32),
      listenDatabaseUrl: null,
      graphql: { maxDepth: 10, maxCost: 5000, introspection: false },
      bodyLimitBytes: 65_536,
      service: {
        publicUrl: 'http://127.0.0.1',
        docsBaseUrl: null,
        serviceName: 'bench',
        serviceDescription: 'bench',
        serviceImageUrl: 'http://127.0.0.1/logo.svg',
        version: 'bench',
        payment: { network: 'eip155:196', asset: null, assetSymbol: 'USDT0', assetDecimals: 6, assetName: 'USD\u20AE0', assetVersion: '1', payTo: null },
        agentRegistrations: [],
      },
      log: silentLogger,
    });
    stop = () => stack.stop();
    const gatewayUrl = stack.gateway.url;
    const intentUrl = stack.subgraphs.find((subgraph) => subgraph.name === 'intent')?.http?.url;
    if (!intentUrl) throw new Error('the intent subgraph has no HTTP endpoint');

    const policies: Array<{ policyId: string; policyHash: string }> = [];
    for (let index = 0; index < POLICIES; index += 1) {
      const owner = `0x${randomBytes(20).toString('hex')}`;
      const document = policyDocument({
        owner,
        dailyBudget: '1000000.00',
        hardCap: '10.00',
        duplicates: { windowMinutes: 0, keys: ['capability'] },
        rateLimit: { callsPerHour: 1_000_000 },
      });
      const response = await fetch(`${gatewayUrl}/create_spend_policy`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
        body: JSON.stringify({ policy: document }),
      });
      const body = (await response.json()) as { policyId: string; policyHash: string };
      if (response.status !== 201) throw new Error(`policy setup answered ${response.status}: ${JSON.stringify(body)}`);
      policies.push({ policyId: body.policyId, policyHash: body.policyHash });
    }

    const preflightDocument = loadPersistedDocuments().get('preflightPayment');
    if (!preflightDocument) throw new Error('no persisted preflightPayment document');
    const throughGateway: Scenario = {
      name: 'gateway REST',
      async send(policy, nonce) {
        const response = await fetch(`${gatewayUrl}/preflight_payment`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ policyId: policy.policyId, intent: intentFor(policy, nonce) }),
        });
        await response.arrayBuffer();
        return response.status;
      },
    };
    const straightToSubgraph: Scenario = {
      name: 'intent subgraph',
      async send(policy, nonce) {
        const response = await fetch(intentUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [ACTOR_HEADER]: signActor(ANONYMOUS, actorSecret) },
          body: JSON.stringify({
            query: preflightDocument,
            operationName: 'PreflightPayment',
            variables: { policyId: policy.policyId, intent: intentFor(policy, nonce) },
          }),
        });
        await response.arrayBuffer();
        return response.status;
      },
    };

    process.stdout.write(
      `preflight: ${CLIENTS} concurrent clients, ${seconds} s per scenario after ${WARMUP_SECONDS} s warm-up, ` +
        `${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)}\n`,
    );
    process.stdout.write('scenario          policies  requests  req/s   p50 ms  p99 ms  statuses\n');
    const nonces = { next: 1n };
    const results: Result[] = [];
    for (const spread of [policies, policies.slice(0, 1)]) {
      for (const scenario of [throughGateway, straightToSubgraph]) {
        const result = await run(scenario, spread, seconds, nonces);
        results.push(result);
        const statuses = [...result.statuses].map(([status, count]) => `${status}×${count}`).join(' ');
        process.stdout.write(
          `${result.name.padEnd(17)} ${String(result.policies).padStart(8)}  ${String(result.requests).padStart(8)}  ` +
            `${String(result.perSecond).padStart(5)}  ${result.p50Ms.toFixed(1).padStart(6)}  ${result.p99Ms.toFixed(1).padStart(6)}  ${statuses}\n`,
        );
      }
    }
    const spreadGateway = results[0];
    const met = spreadGateway.perSecond >= TARGET_PER_SECOND && spreadGateway.p99Ms < TARGET_P99_MS;
    process.stdout.write(
      `target ${TARGET_PER_SECOND} preflights/s with p99 < ${TARGET_P99_MS} ms through the gateway (spread): ` +
        `${spreadGateway.perSecond}/s, p99 ${spreadGateway.p99Ms.toFixed(1)} ms — ${met ? 'met' : 'NOT met'}\n`,
    );
  } finally {
    await stop?.();
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
