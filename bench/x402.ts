// x402 benchmark: what payment costs. GET /ping_service through the gateway on the devnet (anvil
// eip155:196 with the EIP-3009 USD₮0 token, automine), once on a gateway that serves it free and
// once on one that takes payment: decode and check the header, claim the authorization in
// PostgreSQL, verify (signature, simulation) and settle on chain through the official in-process
// facilitator, wait for the receipt, book SERVICE_FEE, run the call, record the answer. The
// clients run on a worker thread over node:http (x402Clients.ts) and sign their authorizations
// before the clock starts, as a real agent's wallet would on its own machine (with the same
// signer as the end-to-end tests, devnet/agents/x402Payer.ts). Reports, with 1, 8 and 32 clients:
// calls/s, p50/p99, CPU per call of the service process, anvil and the PostgreSQL backends, and
// for paid calls paid/free, the relayer's transactions and gas per paid call (from the chain) and
// the JSON-RPC requests per paid call; then the verdict on issue #33's target.
// Run: npm run bench:x402   (args: [seconds per scenario]; BENCH_CPU_PROFILE=<folder> writes a
// .cpuprofile of the service process for the measured part of each phase)
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import 'reflect-metadata';
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import type { Address, Hex } from 'viem';
import { startAllInOne, type RunningStack } from '../cli/stack';
import { DEVNET_POLLING_INTERVAL_MS, startDevnetChains } from '../devnet/chains';
import { uniformLimits } from '../gateway/rateLimit/limiter';
import { createChainPublicClient, type ChainPublicClient } from '../platform/chain/clients';
import { silentLogger } from '../platform/log';
import { profiled } from './cpuProfile';
import { postgresCpuBetween, processCpuMs } from './cpuTime';
import { devnetX402, fundedPayerKeys } from './paidStack';
import { benchServiceInfo, createScratchDatabase } from './service';
import { percentile } from './stats';
import {
  chainMark,
  countRpcRequests,
  databaseBackendsCpuMs,
  HTTP_REQUESTS,
  relayerSpend,
  rpcBetween,
} from './x402Chain';
import { type ClientJob, type ClientMessage, runClients } from './x402Clients';
import { runBenchMain } from './entry';

const DEFAULT_SECONDS = 6;
const WARMUP_SECONDS = 1;
const CLIENT_COUNTS = [1, 8, 32] as const;
/** Authorizations signed before a paid phase: enough for the free rate, at most this many. */
const MAX_PRESIGNED = 6000;
const TARGET = { clients: 32, perSecond: 500, p99Ms: 150, paidOverFree: 0.2 } as const;

interface Result {
  name: 'free' | 'paid';
  clients: number;
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Map<number, number>;
  /** CPU per measured call: this process less the client thread, anvil, the database's backends. */
  serverCpuMs: number | null;
  anvilCpuMs: number | null;
  postgresCpuMs: number;
  signedInClock: number;
  presigned: number;
  /** Paid only, over the whole phase (warm-up included): 200 answers, relayer txs, gas, RPC. */
  chain: {
    okCalls: number;
    transactions: number;
    gasUsed: bigint;
    rpc: Map<string, number>;
  } | null;
}

type Database = Awaited<ReturnType<typeof createScratchDatabase>>;
type Devnet = Awaited<ReturnType<typeof startDevnetChains>>;

interface Bench {
  database: Database;
  devnet: Devnet;
  clients: Worker;
  chain: ChainPublicClient;
  relayer: Address;
  rpcCounts: () => Map<string, number>;
}
/**
 * The two gateways under test, pushed onto `stacks` as each starts so the caller stops what did
 * start: one serving /ping_service free, one taking x402 payment settled on the devnet.
 */
async function startStacks(
  database: Database,
  devnet: Devnet,
  stacks: RunningStack[],
): Promise<{ free: RunningStack; paid: RunningStack; relayer: Address }> {
  const funding = devnet.info.chains.funding;
  const common = {
    host: '127.0.0.1',
    port: 0,
    db: database.pool,
    transport: 'in-process' as const,
    subgraphPortBase: 0,
    actorSecret: randomBytes(32),
    adminTokenHashes: [createHash('sha256').update(randomBytes(32)).digest()],
    sessionSecret: randomBytes(32),
    listenDatabaseUrl: null,
    graphql: { maxDepth: 10, maxCost: 5000, introspection: false },
    bodyLimitBytes: 65_536,
    // The shared store, as deployed, with limits no bench reaches.
    rateLimit: { limits: uniformLimits(), store: 'postgres' as const, databaseUrl: database.url },
    log: silentLogger,
  };
  const free = await startAllInOne({ ...common, service: benchServiceInfo(), x402: null });
  stacks.push(free);
  const x402 = devnetX402(database, devnet);
  const paid = await startAllInOne({
    ...common,
    service: benchServiceInfo(funding.token.address, devnet.info.addresses.feeReceiver),
    x402,
  });
  stacks.push(paid);
  return { free, paid, relayer: x402.rail.relayer };
}

/** Sends `job` to the client thread; resolves once it signed (the warm-up starts) and with its report. */
function startJob(clients: Worker, job: ClientJob) {
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const report = new Promise<Extract<ClientMessage, { type: 'report' }>['report']>(
    (resolve, reject) => {
      const onMessage = (message: ClientMessage) => {
        if (message.type === 'ready') return onReady();
        clients.off('message', onMessage);
        clients.off('error', reject);
        resolve(message.report);
      };
      clients.on('message', onMessage);
      clients.once('error', reject);
    },
  );
  clients.postMessage(job);
  return { ready, report };
}

/** One phase: the clients' run, with CPU read over the measured part and the chain over all of it. */
async function runPhase(bench: Bench, name: Result['name'], job: ClientJob): Promise<Result> {
  const anvilPid = bench.devnet.info.pids.funding;
  const markBefore = await chainMark(bench.chain, bench.relayer);
  const rpcBefore = bench.rpcCounts();
  const { ready, report: reported } = startJob(bench.clients, job);
  await ready;
  await new Promise((resolve) => setTimeout(resolve, job.warmupSeconds * 1000));
  const cpuBefore = process.cpuUsage();
  const anvilBefore = processCpuMs(anvilPid);
  const pgBefore = await databaseBackendsCpuMs(bench.database.pool, bench.database.name);
  const report = await profiled(`x402-${name}-${job.clients}`, () => reported);
  const cpu = process.cpuUsage(cpuBefore);
  const anvilAfter = processCpuMs(anvilPid);
  const pgAfter = await databaseBackendsCpuMs(bench.database.pool, bench.database.name);
  const rpc = rpcBetween(rpcBefore, bench.rpcCounts());
  const latencies = Array.from(report.latenciesMs).sort((a, b) => a - b);
  const requests = latencies.length;
  const perCall = (ms: number | null) => (ms === null || requests === 0 ? null : ms / requests);
  let chain: Result['chain'] = null;
  if (name === 'paid') {
    const spend = await relayerSpend(
      bench.chain,
      bench.relayer,
      markBefore,
      await chainMark(bench.chain, bench.relayer),
    );
    chain = { okCalls: report.okIncludingWarmup, ...spend, rpc };
  }
  return {
    name,
    clients: job.clients,
    requests,
    perSecond: requests / report.elapsedSeconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    statuses: new Map(report.statuses),
    serverCpuMs: perCall(
      report.clientCpuMs === null ? null : (cpu.user + cpu.system) / 1000 - report.clientCpuMs,
    ),
    anvilCpuMs: perCall(
      anvilBefore === null || anvilAfter === null ? null : anvilAfter - anvilBefore,
    ),
    postgresCpuMs: perCall(postgresCpuBetween(pgBefore, pgAfter)) ?? 0,
    signedInClock: report.signedInClock,
    presigned: report.presigned,
    chain,
  };
}

/** Free then paid at each client count; the paid phase signs enough for the free rate it follows. */
async function runScenarios(
  bench: Bench,
  urls: { free: string; paid: string },
  payerKeys: Hex[],
  seconds: number,
): Promise<Result[]> {
  const challenge = await fetch(urls.paid);
  const required: PaymentRequired = decodePaymentRequiredHeader(
    challenge.headers.get('payment-required')!,
  );
  const results: Result[] = [];
  for (const clients of CLIENT_COUNTS) {
    process.stdout.write(
      `x402: ${clients} client(s), ${seconds}s each (after ${WARMUP_SECONDS}s warm-up) …\n`,
    );
    const common = { clients, seconds, warmupSeconds: WARMUP_SECONDS };
    const free = await runPhase(bench, 'free', { ...common, url: urls.free, paid: null });
    results.push(free);
    const total = Math.min(
      MAX_PRESIGNED,
      Math.ceil(free.perSecond * (seconds + WARMUP_SECONDS) * 1.2),
    );
    const paid = {
      privateKeys: payerKeys.slice(0, clients),
      required,
      presignedPerClient: Math.ceil(total / clients),
    };
    results.push(await runPhase(bench, 'paid', { ...common, url: urls.paid, paid }));
  }
  return results;
}

const ms = (value: number | null, digits = 2) => (value === null ? '-' : value.toFixed(digits));

/** The table: one row per phase. */
function printTable(results: readonly Result[]): void {
  process.stdout.write(
    `\nGET /ping_service on ${os.cpus().length} cores, devnet anvil (automine), in-process subgraphs, ` +
      `clients on a worker thread over node:http; CPU ms per call: service process (less the client ` +
      `thread), anvil, this database's PostgreSQL backends\n`,
  );
  process.stdout.write(
    'scenario  clients  requests   calls/s   p50 ms   p99 ms  cpu svc  cpu anvil  cpu pg  statuses\n',
  );
  for (const r of results) {
    const statuses = [...r.statuses.entries()].map(([s, n]) => `${s}×${n}`).join(' ');
    process.stdout.write(
      `${r.name.padEnd(9)} ${String(r.clients).padStart(7)} ${String(r.requests).padStart(9)} ` +
        `${r.perSecond.toFixed(0).padStart(9)} ${r.p50Ms.toFixed(1).padStart(8)} ${r.p99Ms.toFixed(1).padStart(8)} ` +
        `${ms(r.serverCpuMs).padStart(8)} ${ms(r.anvilCpuMs).padStart(10)} ${ms(r.postgresCpuMs).padStart(7)}  ${statuses}\n`,
    );
  }
}

/** Per client count: paid/free, the chain's side of each paid call, and how the clients signed. */
function printPaidLines(results: readonly Result[]): void {
  for (const clients of CLIENT_COUNTS) {
    const free = results.find((r) => r.clients === clients && r.name === 'free')!;
    const paid = results.find((r) => r.clients === clients && r.name === 'paid')!;
    const chain = paid.chain!;
    const calls = Math.max(chain.okCalls, 1);
    const httpRequests = chain.rpc.get(HTTP_REQUESTS) ?? 0;
    const rpcTotal = [...chain.rpc.entries()]
      .filter(([method]) => method !== HTTP_REQUESTS)
      .reduce((sum, [, n]) => sum + n, 0);
    const methods = [...chain.rpc.entries()]
      .filter(([method]) => method !== HTTP_REQUESTS)
      .sort((a, b) => b[1] - a[1])
      .map(([method, n]) => `${method} ${(n / calls).toFixed(2)}`)
      .join(', ');
    process.stdout.write(
      `paid ${clients} client(s): ${paid.perSecond.toFixed(0)} calls/s, p50 ${paid.p50Ms.toFixed(1)} ms, ` +
        `p99 ${paid.p99Ms.toFixed(1)} ms, paid/free ${(paid.perSecond / free.perSecond).toFixed(3)}; ` +
        `${chain.okCalls} paid calls (warm-up included): ${chain.transactions} relayer transactions ` +
        `(${(chain.transactions / calls).toFixed(2)} per call), gas per paid call ${chain.gasUsed / BigInt(calls)}, ` +
        `${(rpcTotal / calls).toFixed(1)} JSON-RPC requests per paid call (${methods}) ` +
        `in ${(httpRequests / calls).toFixed(1)} HTTP requests; ` +
        `${paid.presigned} authorizations signed before the clock, ${paid.signedInClock} inside it\n`,
    );
  }
}

/** The verdict on the issue's target, and a failure on any non-200 answer. */
function printVerdict(results: readonly Result[]): void {
  const free = results.find((r) => r.clients === TARGET.clients && r.name === 'free')!;
  const paid = results.find((r) => r.clients === TARGET.clients && r.name === 'paid')!;
  const misses: string[] = [];
  if (paid.perSecond < TARGET.perSecond) misses.push(`${paid.perSecond.toFixed(0)} calls/s`);
  if (paid.p99Ms > TARGET.p99Ms) misses.push(`p99 ${paid.p99Ms.toFixed(0)} ms`);
  const ratio = paid.perSecond / free.perSecond;
  if (ratio < TARGET.paidOverFree) misses.push(`paid/free ${ratio.toFixed(3)}`);
  process.stdout.write(
    `verdict: ${misses.length === 0 ? 'target met' : `target missed (${misses.join(', ')})`} ` +
      `(paid ping ≥ ${TARGET.perSecond} calls/s with ${TARGET.clients} clients, p99 ≤ ${TARGET.p99Ms} ms, ` +
      `paid/free ≥ ${TARGET.paidOverFree} in the same run; load average ${os.loadavg()[0].toFixed(1)})\n`,
  );
  const failures = results.filter((r) => [...r.statuses.keys()].some((s) => s !== 200));
  if (failures.length > 0)
    throw new Error(
      `non-200 answers in ${failures.map((r) => `${r.name}/${r.clients}`).join(', ')}`,
    );
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? DEFAULT_SECONDS);
  process.stdout.write(
    `x402: load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`,
  );
  const database = await createScratchDatabase({ poolSize: 20 });
  process.stdout.write('x402: starting the devnet chains …\n');
  const devnet = await startDevnetChains({ dataDir: null });
  const funding = devnet.info.chains.funding;
  const rpcCounts = countRpcRequests(funding.rpcUrl);
  const stacks: RunningStack[] = [];
  const clients = new Worker(__filename, { workerData: { x402Clients: true } });
  try {
    const { free, paid, relayer } = await startStacks(database, devnet, stacks);
    const payerKeys = await fundedPayerKeys(devnet, Math.max(...CLIENT_COUNTS));
    const chain = createChainPublicClient(funding, {
      pollingIntervalMs: DEVNET_POLLING_INTERVAL_MS,
    });
    const bench: Bench = { database, devnet, clients, chain, relayer, rpcCounts };
    const urls = {
      free: `${free.gateway.url}/ping_service`,
      paid: `${paid.gateway.url}/ping_service`,
    };
    const results = await runScenarios(bench, urls, payerKeys, seconds);
    printTable(results);
    printPaidLines(results);
    printVerdict(results);
  } finally {
    await clients.terminate();
    for (const stack of stacks.reverse()) await stack.stop().catch(() => undefined);
    await devnet.stop();
    await database.drop();
  }
}

if (isMainThread) {
  runBenchMain('bench x402', main);
} else if ((workerData as { x402Clients?: boolean } | null)?.x402Clients === true) {
  parentPort!.on('message', (job: ClientJob) => {
    runClients(job, () => parentPort!.postMessage({ type: 'ready' } satisfies ClientMessage)).then(
      (report) =>
        parentPort!.postMessage({ type: 'report', report } satisfies ClientMessage, [
          report.latenciesMs.buffer as ArrayBuffer,
        ]),
      (error: unknown) => {
        throw error;
      },
    );
  });
}
