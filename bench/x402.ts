// x402 benchmark: what payment costs. GET /ping_service through the gateway on the devnet (anvil
// eip155:196 with the EIP-3009 USD₮0 token, automine), once on a gateway that serves it free and
// once on one that takes payment: decode and check the header, claim the authorization in
// PostgreSQL, verify (signature, simulation) and settle on chain through the official in-process
// facilitator, wait for the receipt, book SERVICE_FEE, run the call, record the answer. Clients
// sign their authorizations before the clock starts, as a real agent's wallet would (with the
// same signer as the end-to-end tests, devnet/agents/x402Payer.ts). Reports
// calls/s and p50/p99 of each, sequential and with concurrent clients, and the difference.
// Run: npm run bench:x402   (args: [seconds per scenario])
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import 'reflect-metadata';
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PrivateKeyAccount } from 'viem/accounts';
import { startAllInOne, type RunningStack } from '../cli/stack';
import { startDevnetChains } from '../devnet/chains';
import { uniformLimits } from '../gateway/rateLimit/limiter';
import { silentLogger } from '../platform/log';
import { devnetX402, fundedPayers } from './paidStack';
import { benchServiceInfo, createScratchDatabase } from './service';
import { signedPaymentHeader } from '../devnet/agents/x402Payer';
import { percentile } from './stats';

const DEFAULT_SECONDS = 6;
const WARMUP_SECONDS = 1;
const CONCURRENT_CLIENTS = 8;

interface Result {
  name: string;
  clients: number;
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Map<number, number>;
}

async function measure(
  name: string,
  clients: number,
  seconds: number,
  call: (client: number) => Promise<{ status: number; ms: number }>,
): Promise<Result> {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const warmupUntil = Date.now() + WARMUP_SECONDS * 1000;
  const until = warmupUntil + seconds * 1000;
  let measuredStart = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_value, client) => {
      while (Date.now() < until) {
        const { status, ms } = await call(client);
        const now = Date.now();
        if (now < warmupUntil) continue;
        if (measuredStart === 0) measuredStart = now;
        latencies.push(ms);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    name,
    clients,
    requests: latencies.length,
    perSecond: Math.round(latencies.length / ((Date.now() - measuredStart) / 1000)),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    statuses,
  };
}

type Database = Awaited<ReturnType<typeof createScratchDatabase>>;
type Devnet = Awaited<ReturnType<typeof startDevnetChains>>;

/**
 * The two gateways under test, pushed onto `stacks` as each starts so the caller stops what did
 * start: one serving /ping_service free, one taking x402 payment settled on the devnet.
 */
async function startStacks(
  database: Database,
  devnet: Devnet,
  stacks: RunningStack[],
): Promise<{ free: RunningStack; paid: RunningStack }> {
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
  const paid = await startAllInOne({
    ...common,
    service: benchServiceInfo(funding.token.address, devnet.info.addresses.feeReceiver),
    x402: devnetX402(database, devnet),
  });
  stacks.push(paid);
  return { free, paid };
}

/** Free and paid, sequential then concurrent. The header is signed before the clock starts. */
async function runScenarios(
  free: RunningStack,
  paid: RunningStack,
  payers: PrivateKeyAccount[],
  seconds: number,
): Promise<Result[]> {
  const challenge = await fetch(`${paid.gateway.url}/ping_service`);
  const required = decodePaymentRequiredHeader(challenge.headers.get('payment-required')!);

  const freeCall = async () => {
    const started = process.hrtime.bigint();
    const response = await fetch(`${free.gateway.url}/ping_service`);
    await response.arrayBuffer();
    return { status: response.status, ms: Number(process.hrtime.bigint() - started) / 1e6 };
  };
  const paidCall = async (client: number) => {
    const header = await signedPaymentHeader(required, payers[client]);
    const started = process.hrtime.bigint();
    const response = await fetch(`${paid.gateway.url}/ping_service`, {
      headers: { 'payment-signature': header },
    });
    await response.arrayBuffer();
    return { status: response.status, ms: Number(process.hrtime.bigint() - started) / 1e6 };
  };

  const results: Result[] = [];
  for (const clients of [1, CONCURRENT_CLIENTS]) {
    process.stdout.write(
      `x402: ${clients} client(s), ${seconds}s each (after ${WARMUP_SECONDS}s warm-up) …\n`,
    );
    results.push(await measure('free', clients, seconds, freeCall));
    results.push(await measure('paid', clients, seconds, paidCall));
  }
  return results;
}

/** The table, the overhead of payment per client count, and a failure on any non-200 answer. */
function report(results: Result[]): void {
  process.stdout.write(
    `\nGET /ping_service on ${os.cpus().length} cores, devnet anvil (automine), in-process subgraphs\n`,
  );
  process.stdout.write('scenario  clients  requests   calls/s   p50 ms   p99 ms  statuses\n');
  for (const result of results) {
    const statuses = [...result.statuses.entries()]
      .map(([status, count]) => `${status}×${count}`)
      .join(' ');
    process.stdout.write(
      `${result.name.padEnd(9)} ${String(result.clients).padStart(7)} ${String(result.requests).padStart(9)} ${String(result.perSecond).padStart(9)} ${result.p50Ms.toFixed(1).padStart(8)} ${result.p99Ms.toFixed(1).padStart(8)}  ${statuses}\n`,
    );
  }
  for (const clients of [1, CONCURRENT_CLIENTS]) {
    const [freeResult, paidResult] = results.filter((result) => result.clients === clients);
    process.stdout.write(
      `overhead with ${clients} client(s): +${(paidResult.p50Ms - freeResult.p50Ms).toFixed(1)} ms at p50, +${(paidResult.p99Ms - freeResult.p99Ms).toFixed(1)} ms at p99\n`,
    );
  }
  const failures = results.filter((result) =>
    [...result.statuses.keys()].some((status) => status !== 200),
  );
  if (failures.length > 0)
    throw new Error(
      `non-200 answers in ${failures.map((result) => `${result.name}/${result.clients}`).join(', ')}`,
    );
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? DEFAULT_SECONDS);
  const database = await createScratchDatabase({ poolSize: 20 });
  process.stdout.write('x402: starting the devnet chains …\n');
  const devnet = await startDevnetChains({ dataDir: null });
  const stacks: RunningStack[] = [];
  try {
    const { free, paid } = await startStacks(database, devnet, stacks);
    const payers = await fundedPayers(devnet, CONCURRENT_CLIENTS);
    report(await runScenarios(free, paid, payers, seconds));
  } finally {
    for (const stack of stacks.reverse()) await stack.stop().catch(() => undefined);
    await devnet.stop();
    await database.drop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `bench x402 failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
