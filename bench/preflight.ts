// Preflight benchmark: POST /preflight_payment through the gateway's REST layer in the split
// deployment (gateway here, subgraphs in a child process: gateway → intent subgraph over HTTP →
// PostgreSQL), the same over HTTP inside one process, and the same operation sent straight to the
// intent subgraph, with CLIENTS concurrent clients spread over POLICIES policies and, separately,
// all on one hot policy; so the gateway's share is visible. The all-in-one process's default
// transport (the gateway calling subgraphs in-process) is measured too, interleaved with the
// split deployment, which is judged against it. Creates and drops its own database on the server
// named by DATABASE_URL (bench/run.ts starts an embedded one when it is unset).
// The clients run in a worker thread, so their own HTTP and JSON work does not share the event loop
// of the server being measured. Each line also shows what the rate was bound by: the server
// thread's event-loop utilisation and, on Linux, how busy the machine's cores were and the CPU per
// request of this process without the client thread (gateway, subgraphs, GC) and of PostgreSQL.
// The client side is in preflightClients.ts, the /proc readings in cpuTime.ts.
// Run: npm run bench:preflight   (args: [seconds per scenario] [scenario names, comma-separated])
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import 'reflect-metadata';
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { Pool } from 'pg';
import { createPool } from '../platform/db/pool';
import { startAllInOne, startGatewayRole } from '../cli/stack';
import type { SubgraphEndpoint } from '../gateway/graphql/supergraph';
import type { SubgraphName } from '../platform/db/migrate';
import type { SubgraphHostReady, SubgraphHostStart } from './subgraphHost';
import { loadPersistedDocuments } from '../gateway/rest/documents';
import { createScratchDatabase } from './service';
import { benchStackOptions, createPolicies } from './preflightStack';
import { machineTicks, postgresCpuBetween, postgresCpuMs, processCpuMs } from './cpuTime';
import {
  CLIENTS,
  type ClientJob,
  type ClientReport,
  type PolicyRef,
  runClients,
  type Target,
  WARMUP_SECONDS,
} from './preflightClients';
import { ms, type Result, type Slice, splitVerdict, summarize } from './preflightRounds';
import { benchFailed } from './entry';

const POLICIES = 100;
const DEFAULT_SECONDS = 8;
/** Each scenario's time is cut into this many slices, run in turn with the other scenarios'. */
const ROUNDS = 2;
const TARGET_PER_SECOND = 1_000;
const TARGET_P99_MS = 50;

async function run(clients: Worker, job: ClientJob, otherPid?: number): Promise<Slice> {
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
  const otherBefore = otherPid === undefined ? 0 : processCpuMs(otherPid);
  const report = await reported;
  const loop = performance.eventLoopUtilization(loopBefore);
  const ticksAfter = machineTicks();
  const cpu = process.cpuUsage(cpuBefore);
  const postgresAfter = postgresCpuMs();
  const otherAfter = otherPid === undefined ? 0 : processCpuMs(otherPid);
  return {
    latenciesMs: report.latenciesMs,
    elapsedSeconds: report.elapsedSeconds,
    statuses: report.statuses,
    loopActiveSeconds: loop.active / 1000,
    loopWallSeconds: (loop.active + loop.idle) / 1000,
    machineTicks:
      ticksBefore === null || ticksAfter === null
        ? null
        : { busy: ticksAfter.busy - ticksBefore.busy, total: ticksAfter.total - ticksBefore.total },
    serverCpuMs:
      report.clientCpuMs === null || otherBefore === null || otherAfter === null
        ? null
        : (cpu.user + cpu.system) / 1000 - report.clientCpuMs + (otherAfter - otherBefore),
    postgresCpuMs:
      postgresBefore === null || postgresAfter === null
        ? null
        : postgresCpuBetween(postgresBefore, postgresAfter),
  };
}

type Database = Awaited<ReturnType<typeof createScratchDatabase>>;
/** A stack under test; `otherPid` is a process of its own whose CPU counts as the server's. */
type Scenario = { name: string; target: Target; url: string; otherPid?: number };

/** The subgraph host of the split deployment, started and answering with its subgraphs' URLs. */
async function startSubgraphHost(
  database: Database,
  actorSecret: Buffer,
  stops: Array<() => Promise<void>>,
): Promise<{ pid: number; urls: Record<SubgraphName, string> }> {
  const child = fork(path.join(__dirname, 'subgraphHost.js'), [], { stdio: 'inherit' });
  stops.push(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.send('stop');
      }),
  );
  const ready = await new Promise<SubgraphHostReady>((resolve, reject) => {
    child.once('message', (message) => resolve(message as SubgraphHostReady));
    child.once('exit', (code) => reject(new Error(`subgraph host exited with ${code}`)));
    child.send({
      databaseUrl: database.url,
      actorSecretHex: actorSecret.toString('hex'),
    } satisfies SubgraphHostStart);
  });
  return { pid: child.pid!, urls: ready.urls as Record<SubgraphName, string> };
}

/**
 * The stacks under test, each stop pushed onto `stops` as it starts: the split deployment (this
 * process's gateway, the subgraphs in a child process), over HTTP in one process, in-process, and
 * in-process with a decision thread (on a pool of its own). Returns the scenarios they serve.
 */
async function startStacks(
  database: Database,
  secrets: { actorSecret: Buffer; adminToken: string },
  stops: Array<() => Promise<void>>,
): Promise<{ gatewayUrl: string; scenarios: Scenario[] }> {
  const options = (transport: 'http' | 'in-process', decisionThread: boolean, db: Pool) =>
    benchStackOptions(database.url, secrets, { transport, decisionThread, db });
  const start = (transport: 'http' | 'in-process', decisionThread: boolean, db: Pool) =>
    startAllInOne(options(transport, decisionThread, db));
  const host = await startSubgraphHost(database, secrets.actorSecret, stops);
  const split = await startGatewayRole({
    ...options('http', false, database.pool),
    subgraphs: Object.fromEntries(
      Object.entries(host.urls).map(([name, url]) => [name, { url }]),
    ) as Record<SubgraphName, SubgraphEndpoint>,
  });
  stops.push(() => split.stop());
  const stack = await start('http', false, database.pool);
  stops.push(() => stack.stop());
  const inProcess = await start('in-process', false, database.pool);
  stops.push(() => inProcess.stop());
  // A decision thread serves the pool it is attached to: that stack gets a pool of its own.
  const threadPool = createPool(database.url, { max: 20, applicationName: 'bench-thread-stack' });
  stops.push(() => threadPool.end());
  const threaded = await start('in-process', true, threadPool);
  stops.push(() => threaded.stop());
  const gatewayUrl = stack.gateway.url;
  const intentUrl = stack.subgraphs.find((subgraph) => subgraph.name === 'intent')?.http?.url;
  if (!intentUrl) throw new Error('the intent subgraph has no HTTP endpoint');
  const scenarios: Scenario[] = [
    {
      name: 'split deploy',
      target: 'gateway',
      url: `${split.url}/preflight_payment`,
      otherPid: host.pid,
    },
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
  return { gatewayUrl, scenarios };
}

function printHeader(seconds: number): void {
  process.stdout.write(
    `preflight: ${CLIENTS} concurrent clients (in a worker thread), ${seconds} s per scenario in ${ROUNDS} interleaved slices ` +
      `(each after ${WARMUP_SECONDS} s warm-up, every stack warmed first), ` +
      `${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)}\n` +
      'split deploy: the gateway here, the subgraphs in a child process, over keep-alive HTTP (server CPU counts both processes);\n' +
      'gateway REST: gateway → intent subgraph over HTTP, both in this process (the whole CPU of the hop on one thread);\n' +
      'gateway in-proc: the all-in-one default (subgraphs called in-process);\n' +
      'in-proc + thread: the same with DECISION_THREAD=true (preflights decided on a thread of their own)\n' +
      `fairness: every scenario gets the same client thread, ${CLIENTS} clients, database and ${os.cpus().length} unpinned cores, ` +
      'in interleaved slices; in-process serves on one thread, the split deployment on two processes that may use a second core, ' +
      'so each split verdict also shows both modes’ CPU per preflight (every process of the stack): their difference is the hop’s own cost\n',
  );
  process.stdout.write(
    'scenario          policies  requests  req/s   p50 ms  p99 ms  server loop  machine CPU  server CPU/req  postgres CPU/req  statuses\n',
  );
}

function printRow(result: Result): void {
  const statuses = [...result.statuses].map(([status, count]) => `${status}×${count}`).join(' ');
  const machine = result.machineBusy === null ? '-' : `${Math.round(result.machineBusy * 100)} %`;
  process.stdout.write(
    `${result.name.padEnd(17)} ${String(result.policies).padStart(8)}  ${String(result.requests).padStart(8)}  ` +
      `${String(result.perSecond).padStart(5)}  ${result.p50Ms.toFixed(1).padStart(6)}  ${result.p99Ms.toFixed(1).padStart(6)}  ` +
      `${`${Math.round(result.serverBusy * 100)} %`.padStart(11)}  ${machine.padStart(11)}  ` +
      `${ms(result.serverCpuMsPerRequest).padStart(14)}  ${ms(result.postgresCpuMsPerRequest).padStart(16)}  ${statuses}\n`,
  );
}

/** The target is judged on each gateway scenario with the load spread over every policy. */
function printVerdicts(results: readonly Result[]): void {
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
  for (const policies of [POLICIES, 1]) {
    const pick = (name: string) =>
      results.find((candidate) => candidate.name === name && candidate.policies === policies);
    const split = pick('split deploy');
    const inProcess = pick('gateway in-proc');
    if (split !== undefined && inProcess !== undefined)
      process.stdout.write(splitVerdict(split, inProcess));
  }
}

/**
 * Every scenario once, unmeasured (JIT, pools and caches of each stack warm before any is timed),
 * then each spread's scenarios in ROUNDS interleaved slices, summed into one row per scenario.
 */
async function measure(
  clients: Worker,
  scenarios: readonly Scenario[],
  policies: PolicyRef[],
  seconds: number,
  job: Pick<ClientJob, 'actorSecretHex' | 'document'>,
): Promise<Result[]> {
  let nonceStart = 0n;
  const slice = (scenario: Scenario, spread: PolicyRef[], sliceSeconds: number) => {
    nonceStart += 1_000_000_000n;
    return run(
      clients,
      {
        ...job,
        target: scenario.target,
        url: scenario.url,
        policies: spread,
        seconds: sliceSeconds,
        nonceStart: nonceStart.toString(),
      },
      scenario.otherPid,
    );
  };
  for (const scenario of scenarios) await slice(scenario, policies, 1);
  const results: Result[] = [];
  for (const spread of [policies, policies.slice(0, 1)]) {
    const slices = new Map<string, Slice[]>(scenarios.map((scenario) => [scenario.name, []]));
    for (let round = 0; round < ROUNDS; round += 1)
      for (const scenario of scenarios)
        slices.get(scenario.name)!.push(await slice(scenario, spread, seconds / ROUNDS));
    for (const scenario of scenarios) {
      const result = summarize(scenario.name, spread.length, slices.get(scenario.name)!);
      results.push(result);
      printRow(result);
    }
  }
  return results;
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? DEFAULT_SECONDS);
  const only = process.argv[3]?.split(',').map((name) => name.trim()) ?? null;
  const database = await createScratchDatabase({ poolSize: 20 });
  const actorSecret = randomBytes(32);
  const adminToken = randomBytes(32).toString('base64url');
  const stops: Array<() => Promise<void>> = [];
  const clients = new Worker(__filename, { workerData: { clients: true } });
  try {
    const { gatewayUrl, scenarios } = await startStacks(
      database,
      { actorSecret, adminToken },
      stops,
    );
    const policies = await createPolicies(gatewayUrl, adminToken, POLICIES);
    const preflightDocument = loadPersistedDocuments().get('preflightPayment');
    if (!preflightDocument) throw new Error('no persisted preflightPayment document');

    printHeader(seconds);
    const results = await measure(
      clients,
      scenarios.filter((scenario) => only === null || only.includes(scenario.name)),
      policies,
      seconds,
      { actorSecretHex: actorSecret.toString('hex'), document: preflightDocument },
    );
    printVerdicts(results);
  } finally {
    await clients.terminate();
    for (const stop of stops.reverse()) await stop();
    await database.drop();
  }
}

if (isMainThread) {
  main().catch(benchFailed('bench'));
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
