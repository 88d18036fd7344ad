// Preflight benchmark: POST /preflight_payment through the gateway's REST layer (gateway → intent
// subgraph over HTTP → PostgreSQL) against the same operation sent straight to the intent
// subgraph, with CLIENTS concurrent clients spread over POLICIES policies and, separately, all on
// one hot policy; so the gateway's share is visible. The all-in-one process's default transport
// (the gateway calling subgraphs in-process) is measured too. Creates and drops its own database
// on the server named by DATABASE_URL (bench/run.ts starts an embedded one when it is unset).
// The clients run in a worker thread, so their own HTTP and JSON work does not share the event loop
// of the server being measured. Each line also shows what the rate was bound by: the server
// thread's event-loop utilisation and, on Linux, how busy the machine's cores were and the CPU per
// request of this process without the client thread (gateway, subgraphs, GC) and of PostgreSQL.
// Run: npm run bench:preflight   (args: [seconds per scenario] [scenario names, comma-separated])
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import 'reflect-metadata';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { Pool } from 'pg';
import { createPool } from '../platform/db/pool';
import { policyDocument } from '../core/test-support/spend-fixtures';
import { formatIsoSeconds } from '../core/validation/timestamp';
import { ACTOR_HEADER, ANONYMOUS, signActor } from '../platform/actor';
import { silentLogger } from '../platform/log';
import { startAllInOne } from '../cli/stack';
import { uniformLimits } from '../gateway/rateLimit/limiter';
import { loadPersistedDocuments } from '../gateway/rest/documents';
import { benchServiceInfo, createScratchDatabase } from './service';
import { percentile } from './stats';

const CLIENTS = 32;
const POLICIES = 100;
const DEFAULT_SECONDS = 8;
const WARMUP_SECONDS = 2;
const TARGET_PER_SECOND = 1_000;
const TARGET_P99_MS = 50;
const TOKEN = '0x779ded0c9e1022225f8e0630b35a9b54be713736';

type Target = 'gateway' | 'subgraph';

interface PolicyRef {
  policyId: string;
  policyHash: string;
}

/** One scenario's load, run by the client thread. */
interface ClientJob {
  target: Target;
  url: string;
  policies: PolicyRef[];
  seconds: number;
  nonceStart: string;
  /** For the subgraph target: the actor secret (hex) and the persisted document. */
  actorSecretHex: string;
  document: string;
}

interface ClientReport {
  latenciesMs: Float64Array;
  elapsedSeconds: number;
  statuses: Array<[number, number]>;
  /** CPU time of the client thread while measuring, or null off Linux. */
  clientCpuMs: number | null;
}

interface Result {
  name: string;
  policies: number;
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Map<number, number>;
  /** The server thread's event-loop utilisation while measuring (1 = never idle). */
  serverBusy: number;
  /** Share of the machine's CPU time that was busy while measuring, or null off Linux. */
  machineBusy: number | null;
  /** CPU per request of this process without the client thread (gateway and subgraphs, GC included). */
  serverCpuMsPerRequest: number | null;
  /** CPU per request of every PostgreSQL process on the machine (backends, WAL writer, …). */
  postgresCpuMsPerRequest: number | null;
}

/** A fresh intent per call (nonce), small enough that the budget never runs out during the run. */
function intentFor(policy: PolicyRef, nonce: bigint) {
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

/** The client thread: CLIENTS loops, each sending its next request as soon as the last answered. */
async function runClients(job: ClientJob): Promise<ClientReport> {
  const secret = Buffer.from(job.actorSecretHex, 'hex');
  // node:http with a keep-alive agent: the client shares the machine with the server, and fetch
  // (undici, web streams) costs several times its CPU per request.
  const target = new URL(job.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const post = (body: string, headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const request = http.request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: {
            ...headers,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (response) => {
          response.on('data', () => undefined);
          response.on('end', () => resolve(response.statusCode ?? 0));
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  const send = (policy: PolicyRef, nonce: bigint): Promise<number> =>
    job.target === 'gateway'
      ? post(JSON.stringify({ policyId: policy.policyId, intent: intentFor(policy, nonce) }), {})
      : post(
          JSON.stringify({
            query: job.document,
            operationName: 'PreflightPayment',
            variables: { policyId: policy.policyId, intent: intentFor(policy, nonce) },
          }),
          // The field admits only the REST layer's paid call, exactly what the gateway signs after its paywall.
          { [ACTOR_HEADER]: signActor(ANONYMOUS, secret, Date.now(), 'POST /preflight_payment') },
        );
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const warmupUntil = Date.now() + WARMUP_SECONDS * 1000;
  const until = warmupUntil + job.seconds * 1000;
  let measuredStart = 0;
  let cpuStart: number | null = null;
  let nonce = BigInt(job.nonceStart);
  const client = async (index: number) => {
    let turn = index;
    while (Date.now() < until) {
      const policy = job.policies[turn % job.policies.length];
      turn += CLIENTS;
      nonce += 1n;
      const started = process.hrtime.bigint();
      const status = await send(policy, nonce);
      const now = Date.now();
      if (now < warmupUntil) continue;
      if (measuredStart === 0) {
        measuredStart = now;
        cpuStart = threadCpuMs();
      }
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_value, index) => client(index)));
  const cpuEnd = threadCpuMs();
  agent.destroy();
  return {
    latenciesMs: Float64Array.from(latencies),
    elapsedSeconds: (Date.now() - measuredStart) / 1000,
    statuses: [...statuses],
    clientCpuMs: cpuStart === null || cpuEnd === null ? null : cpuEnd - cpuStart,
  };
}

/** utime + stime in ms of a /proc stat line (clock ticks of 10 ms on Linux). */
function statCpuMs(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU time of the calling thread, or null where there is no /proc. */
function threadCpuMs(): number | null {
  try {
    return statCpuMs(readFileSync('/proc/thread-self/stat', 'utf8'));
  } catch {
    return null;
  }
}

/** CPU time of each process named postgres, by pid, or null where there is no /proc. */
function postgresCpuMs(): Map<string, number> | null {
  try {
    const byPid = new Map<string, number>();
    for (const entry of readdirSync('/proc')) {
      if (!/^[0-9]+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      } catch {
        continue; // gone since the listing
      }
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === 'postgres')
        byPid.set(entry, statCpuMs(stat));
    }
    return byPid;
  } catch {
    return null;
  }
}

/**
 * CPU PostgreSQL spent between two readings: processes alive at the end, less what they had at the
 * start (a backend that exited in between is missed, never counted negative).
 */
function postgresCpuBetween(before: Map<string, number>, after: Map<string, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** Busy and total jiffies of all cores (/proc/stat), or null where there is no /proc. */
function machineTicks(): { busy: number; total: number } | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const total = fields.reduce((sum, value) => sum + value, 0);
    const idle = fields[3] + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

async function run(clients: Worker, name: string, job: ClientJob): Promise<Result> {
  // Measured from the warm-up's end: the client thread starts its clock when it starts sending.
  const reported = new Promise<ClientReport>((resolve, reject) => {
    const onMessage = (report: ClientReport) => {
      clients.off('error', onError);
      resolve(report);
    };
    const onError = (error: Error) => {
      clients.off('message', onMessage);
      reject(error);
    };
    clients.once('message', onMessage);
    clients.once('error', onError);
  });
  clients.postMessage(job);
  await new Promise((resolve) => setTimeout(resolve, WARMUP_SECONDS * 1000));
  const loopBefore = performance.eventLoopUtilization();
  const ticksBefore = machineTicks();
  const cpuBefore = process.cpuUsage();
  const postgresBefore = postgresCpuMs();
  const report = await reported;
  const loop = performance.eventLoopUtilization(loopBefore);
  const ticksAfter = machineTicks();
  const cpu = process.cpuUsage(cpuBefore);
  const postgresAfter = postgresCpuMs();
  const latencies = [...report.latenciesMs].sort((a, b) => a - b);
  const statuses = new Map(report.statuses);
  return {
    name,
    policies: job.policies.length,
    requests: latencies.length,
    perSecond: Math.round(latencies.length / report.elapsedSeconds),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    statuses,
    serverBusy: loop.utilization,
    machineBusy:
      ticksBefore === null || ticksAfter === null || ticksAfter.total === ticksBefore.total
        ? null
        : (ticksAfter.busy - ticksBefore.busy) / (ticksAfter.total - ticksBefore.total),
    serverCpuMsPerRequest:
      report.clientCpuMs === null || latencies.length === 0
        ? null
        : ((cpu.user + cpu.system) / 1000 - report.clientCpuMs) / latencies.length,
    postgresCpuMsPerRequest:
      postgresBefore === null || postgresAfter === null || latencies.length === 0
        ? null
        : postgresCpuBetween(postgresBefore, postgresAfter) / latencies.length,
  };
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? DEFAULT_SECONDS);
  const only = process.argv[3]?.split(',').map((name) => name.trim()) ?? null;
  const database = await createScratchDatabase({ poolSize: 20 });
  const pool = database.pool;
  const actorSecret = randomBytes(32);
  const adminToken = randomBytes(32).toString('base64url');
  const stops: Array<() => Promise<void>> = [];
  const clients = new Worker(__filename, { workerData: { clients: true } });
  try {
    const start = (transport: 'http' | 'in-process', decisionThread: boolean, db: Pool) =>
      startAllInOne({
        host: '127.0.0.1',
        port: 0,
        db,
        databaseUrl: database.url,
        decisionThread,
        transport,
        subgraphPortBase: 0,
        actorSecret,
        adminTokenHashes: [createHash('sha256').update(adminToken).digest()],
        sessionSecret: randomBytes(32),
        listenDatabaseUrl: null,
        graphql: { maxDepth: 10, maxCost: 5000, introspection: false },
        bodyLimitBytes: 65_536,
        // The shared store, as deployed, with limits no bench reaches.
        rateLimit: { limits: uniformLimits(), store: 'postgres', databaseUrl: database.url },
        service: benchServiceInfo(),
        log: silentLogger,
      });
    const stack = await start('http', false, pool);
    stops.push(() => stack.stop());
    const inProcess = await start('in-process', false, pool);
    stops.push(() => inProcess.stop());
    // A decision thread serves the pool it is attached to: that stack gets a pool of its own.
    const threadPool = createPool(database.url, { max: 20, applicationName: 'bench-thread-stack' });
    stops.push(() => threadPool.end());
    const threaded = await start('in-process', true, threadPool);
    stops.push(() => threaded.stop());
    const gatewayUrl = stack.gateway.url;
    const intentUrl = stack.subgraphs.find((subgraph) => subgraph.name === 'intent')?.http?.url;
    if (!intentUrl) throw new Error('the intent subgraph has no HTTP endpoint');

    const policies: PolicyRef[] = [];
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
      const body = (await response.json()) as PolicyRef;
      if (response.status !== 201)
        throw new Error(`policy setup answered ${response.status}: ${JSON.stringify(body)}`);
      policies.push({ policyId: body.policyId, policyHash: body.policyHash });
    }

    const preflightDocument = loadPersistedDocuments().get('preflightPayment');
    if (!preflightDocument) throw new Error('no persisted preflightPayment document');
    const scenarios: Array<{ name: string; target: Target; url: string }> = [
      { name: 'gateway REST', target: 'gateway', url: `${gatewayUrl}/preflight_payment` },
      { name: 'intent subgraph', target: 'subgraph', url: intentUrl },
      {
        name: 'gateway in-proc',
        target: 'gateway',
        url: `${inProcess.gateway.url}/preflight_payment`,
      },
      {
        name: 'in-proc + thread',
        target: 'gateway',
        url: `${threaded.gateway.url}/preflight_payment`,
      },
    ];

    process.stdout.write(
      `preflight: ${CLIENTS} concurrent clients (in a worker thread), ${seconds} s per scenario after ${WARMUP_SECONDS} s warm-up, ` +
        `${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)}\n` +
        'gateway REST: gateway → intent subgraph over HTTP; gateway in-proc: the all-in-one default (subgraphs called in-process);\n' +
        'in-proc + thread: the same with DECISION_THREAD=true (preflights decided on a thread of their own)\n',
    );
    process.stdout.write(
      'scenario          policies  requests  req/s   p50 ms  p99 ms  server loop  machine CPU  server CPU/req  postgres CPU/req  statuses\n',
    );
    const results: Result[] = [];
    let nonceStart = 0n;
    for (const spread of [policies, policies.slice(0, 1)]) {
      for (const scenario of scenarios) {
        if (only !== null && !only.includes(scenario.name)) continue;
        nonceStart += 1_000_000_000n;
        const result = await run(clients, scenario.name, {
          target: scenario.target,
          url: scenario.url,
          policies: spread,
          seconds,
          nonceStart: nonceStart.toString(),
          actorSecretHex: actorSecret.toString('hex'),
          document: preflightDocument,
        });
        results.push(result);
        const statuses = [...result.statuses]
          .map(([status, count]) => `${status}×${count}`)
          .join(' ');
        const machine =
          result.machineBusy === null ? '-' : `${Math.round(result.machineBusy * 100)} %`;
        const ms = (value: number | null) => (value === null ? '-' : `${value.toFixed(2)} ms`);
        process.stdout.write(
          `${result.name.padEnd(17)} ${String(result.policies).padStart(8)}  ${String(result.requests).padStart(8)}  ` +
            `${String(result.perSecond).padStart(5)}  ${result.p50Ms.toFixed(1).padStart(6)}  ${result.p99Ms.toFixed(1).padStart(6)}  ` +
            `${`${Math.round(result.serverBusy * 100)} %`.padStart(11)}  ${machine.padStart(11)}  ` +
            `${ms(result.serverCpuMsPerRequest).padStart(14)}  ${ms(result.postgresCpuMsPerRequest).padStart(16)}  ${statuses}\n`,
        );
      }
    }
    process.stdout.write(`load average after the run ${os.loadavg()[0].toFixed(1)}\n`);
    for (const label of ['gateway REST', 'gateway in-proc', 'in-proc + thread']) {
      const result = results.find(
        (candidate) => candidate.name === label && candidate.policies === POLICIES,
      );
      if (result === undefined) continue;
      const met = result.perSecond >= TARGET_PER_SECOND && result.p99Ms < TARGET_P99_MS;
      process.stdout.write(
        `target ${TARGET_PER_SECOND} preflights/s with p99 < ${TARGET_P99_MS} ms through the gateway (${label}, spread): ` +
          `${result.perSecond}/s, p99 ${result.p99Ms.toFixed(1)} ms — ${met ? 'met' : 'NOT met'}\n`,
      );
    }
  } finally {
    await clients.terminate();
    for (const stop of stops.reverse()) await stop();
    await database.drop();
  }
}

if (isMainThread) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
} else if ((workerData as { clients?: boolean } | null)?.clients === true) {
  parentPort!.on('message', (job: ClientJob) => {
    runClients(job).then(
      (report) => parentPort!.postMessage(report, [report.latenciesMs.buffer as ArrayBuffer]),
      (error: unknown) => {
        throw error;
      },
    );
  });
}
