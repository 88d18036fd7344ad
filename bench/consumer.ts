// Consumer purchase benchmark: whole purchases end to end on the devnet, the way a consumer app
// drives them through the gateway. Each of 8 concurrent consumers (its own wallet, policy and
// SIWE session) loops: create an intent for a fresh domain (the service quotes from the devnet
// merchant's own 402 and the engine decides), fund it over x402 on eip155:196 (a real EIP-3009
// authorization settled on chain), execute it, and wait until it is DELIVERY_PENDING (the service
// has paid the merchant on eip155:8453 through a one-time capability and stored its answer).
// Reports purchases per second and p50/p99 from execute to PROVIDER_ACKNOWLEDGED, read from the
// intent's own outbox events (the database's timestamps of both state changes), plus the whole
// purchase's p50/p99 as the consumer saw it.
// The consumers and the devnet merchant each run on a worker thread of their own, so their HTTP
// work and signatures do not share the service's event loop (a consumer's wallet and a merchant
// run on machines of their own, not on the service's cores; bench:x402 does the same with its
// clients). `inline` as the fifth argument runs them on the service's thread, as before 2026-11-29.
// Target: ≥ 40 purchases/s and p99 execute → PROVIDER_ACKNOWLEDGED ≤ 250 ms.
// Run: npm run bench:consumer -- [seconds] [consumers] [rounds|notify] [threads|inline]
//   (or node dist/bench/consumer.js with the same arguments and DATABASE_URL set)
// `rounds` runs the worker without its NOTIFY wake-up (250 ms rounds only), for comparison.
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import 'reflect-metadata';
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startAllInOne, type RunningStack } from '../cli/stack';
import { policyDocument } from '../core/test-support/spend-fixtures';
import { DEVNET_POLLING_INTERVAL_MS, startDevnetChains } from '../devnet/chains';
import { devnetConsumerRails } from '../devnet/consumerRails';
import type { DevnetChainInfo } from '../devnet/devnetFile';
import { startDevnetDomainsMerchant } from '../devnet/merchants/domains/start';
import { uniformLimits } from '../gateway/rateLimit/limiter';
import { createChainPublicClient, createChainWalletClient } from '../platform/chain/clients';
import { mintToken } from '../platform/chain/tokens';
import { silentLogger } from '../platform/log';
import { signIn } from '../devnet/agents/signIn';
import { benchServiceInfo, createScratchDatabase } from './service';
import { devnetRail } from './paidStack';
import { percentile } from './stats';
import { runBenchMain } from './entry';
import {
  type ConsumerSeed,
  type ConsumersJob,
  expectStatus,
  type Purchase,
  runConsumers,
  WARMUP_SECONDS,
} from './consumerBuyers';
import { profiled } from './cpuProfile';

const DEFAULT_SECONDS = 20;
const DEFAULT_CONSUMERS = 8;
const TARGET_PER_SECOND = 40;
const TARGET_P99_MS = 250;

type Devnet = Awaited<ReturnType<typeof startDevnetChains>>;

/** The worker threads' messages. */
type SideMessage =
  | { readonly type: 'merchant'; readonly url: string }
  | { readonly type: 'stopped' }
  | { readonly type: 'purchases'; readonly purchases: Purchase[] };

async function startStack(
  database: Awaited<ReturnType<typeof createScratchDatabase>>,
  devnet: Devnet,
  merchantUrl: string,
  adminToken: string,
  wakeOnNotify: boolean,
): Promise<RunningStack> {
  const funding = devnet.info.chains.funding;
  const rails = devnetConsumerRails(devnet.info, { 'spendctl-domains': merchantUrl });
  return startAllInOne({
    host: '127.0.0.1',
    port: 0,
    db: database.pool,
    transport: 'in-process',
    subgraphPortBase: 0,
    actorSecret: randomBytes(32),
    adminTokenHashes: [createHash('sha256').update(adminToken).digest()],
    sessionSecret: randomBytes(32),
    listenDatabaseUrl: database.url,
    graphql: { maxDepth: 10, maxCost: 5000, introspection: false },
    bodyLimitBytes: 65_536,
    rateLimit: { limits: uniformLimits(), store: 'postgres', databaseUrl: database.url },
    log: silentLogger,
    service: benchServiceInfo(funding.token.address, devnet.info.addresses.feeReceiver),
    x402: {
      rail: devnetRail(devnet),
      db: database.pool,
      leaseMs: 60_000,
      reconcileIntervalMs: 0,
    },
    consumer: {
      rails,
      execution: {
        treasuryKey: devnet.keys.treasury,
        relayerKey: devnet.keys.relayer,
        intervalMs: 250,
        wakeOnNotify,
      },
    },
  });
}

/** One consumer per client: a wallet with USD₮0, its own policy (generous limits), a session. */
async function consumers(
  url: string,
  adminToken: string,
  devnet: Devnet,
  count: number,
): Promise<ConsumerSeed[]> {
  const funding = devnet.info.chains.funding;
  const publicClient = createChainPublicClient(funding, {
    pollingIntervalMs: DEVNET_POLLING_INTERVAL_MS,
  });
  const minter = createChainWalletClient(funding, devnet.keys.deployer.account, {
    pollingIntervalMs: DEVNET_POLLING_INTERVAL_MS,
  });
  const made: ConsumerSeed[] = [];
  for (let i = 0; i < count; i += 1) {
    const privateKey = generatePrivateKey();
    const account = privateKeyToAccount(privateKey);
    await mintToken({
      publicClient,
      minter,
      token: funding.token.address,
      to: account.address,
      amountAtomic: 1_000_000_000_000n,
    });
    const policy = policyDocument({
      owner: account.address.toLowerCase(),
      asset: {
        network: funding.caip2,
        token: funding.token.address.toLowerCase(),
        symbol: 'USDT0',
        decimals: 6,
      },
      dailyBudget: '1000000.00',
      perCallCap: '10.00',
      hardCap: '10.00',
      escalateAbove: '10.00',
      categories: { allow: ['domains'], deny: [] },
      rateLimit: { callsPerHour: 1_000_000 },
    });
    const response = await fetch(`${url}/create_spend_policy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ policy }),
    });
    const body = await expectStatus(response, 201, 'create_spend_policy');
    made.push({
      privateKey,
      policyId: body.policyId as string,
      session: await signIn(url, account, body.policyId as string),
    });
  }
  return made;
}

/** execute → PROVIDER_ACKNOWLEDGED of each purchase, from the database's own event times. */
async function acknowledgedLatencies(
  pool: Awaited<ReturnType<typeof createScratchDatabase>>['pool'],
  intentIds: readonly string[],
): Promise<number[]> {
  const result = await pool.query<{ ms: number }>(
    `SELECT extract(epoch FROM (a.occurred_at - q.occurred_at)) * 1000 AS ms
       FROM intent.consumer_intent_events q
       JOIN intent.consumer_intent_events a ON a.intent_id = q.intent_id
      WHERE q.intent_id = ANY($1) AND q.to_state = 'EXECUTION_QUEUED'
        AND a.to_state = 'PROVIDER_ACKNOWLEDGED'`,
    [intentIds],
  );
  return result.rows.map((row) => Number(row.ms)).sort((a, b) => a - b);
}

/**
 * Where a purchase's time goes: for each state change, the p50 and p99 of the time since the
 * intent's previous change, from the database's own event times (each its transaction's start).
 */
async function stepLatencies(
  pool: Awaited<ReturnType<typeof createScratchDatabase>>['pool'],
  intentIds: readonly string[],
): Promise<string[]> {
  const result = await pool.query<{ step: string; n: string; p50: number; p99: number }>(
    `WITH gaps AS (
       SELECT coalesce(from_state, '(created)') || ' → ' || to_state AS step, event_id,
              extract(epoch FROM occurred_at - lag(occurred_at) OVER (PARTITION BY intent_id ORDER BY event_id)) * 1000 AS ms
         FROM intent.consumer_intent_events WHERE intent_id = ANY($1))
     SELECT step, count(*) AS n, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99
       FROM gaps WHERE ms IS NOT NULL GROUP BY step ORDER BY min(event_id)`,
    [intentIds],
  );
  return result.rows.map(
    (row) =>
      `  ${row.step}: p50 ${Number(row.p50).toFixed(1)} ms, p99 ${Number(row.p99).toFixed(1)} ms (${row.n})`,
  );
}

/** The next message of a worker thread of this bench, or its error. */
function nextMessage(worker: Worker): Promise<SideMessage> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      worker.off('message', onMessage);
      reject(error);
    };
    const onMessage = (message: SideMessage) => {
      worker.off('error', onError);
      resolve(message);
    };
    worker.once('message', onMessage);
    worker.once('error', onError);
  });
}

/** Where the consumers and the merchant run: worker threads of their own, or the service's thread. */
interface Sides {
  readonly merchantUrl: string;
  purchases(job: ConsumersJob): Promise<Purchase[]>;
  stop(): Promise<void>;
}

async function threadSides(settlement: DevnetChainInfo): Promise<Sides> {
  const merchant = new Worker(__filename, { workerData: { side: 'merchant', settlement } });
  const started = await nextMessage(merchant);
  if (started.type !== 'merchant') throw new Error(`merchant thread answered ${started.type}`);
  const buyers = new Worker(__filename, { workerData: { side: 'consumers' } });
  return {
    merchantUrl: started.url,
    async purchases(job) {
      const report = nextMessage(buyers);
      buyers.postMessage(job);
      const message = await report;
      if (message.type !== 'purchases')
        throw new Error(`consumers thread answered ${message.type}`);
      return message.purchases;
    },
    async stop() {
      await buyers.terminate();
      const stopped = nextMessage(merchant);
      merchant.postMessage('stop');
      await stopped;
      await merchant.terminate();
    },
  };
}

async function inlineSides(settlement: DevnetChainInfo): Promise<Sides> {
  const merchant = await startDevnetDomainsMerchant({ settlement, dataDir: null });
  return { merchantUrl: merchant.url, purchases: runConsumers, stop: () => merchant.stop() };
}

async function main(): Promise<number> {
  const seconds = Number(process.argv[2] ?? DEFAULT_SECONDS);
  const clients = Number(process.argv[3] ?? DEFAULT_CONSUMERS);
  const wakeOnNotify = process.argv[4] !== 'rounds';
  const inline = process.argv[5] === 'inline';
  const database = await createScratchDatabase();
  const devnet = await startDevnetChains({ dataDir: null });
  const settlement = devnet.info.chains.settlement;
  const sides = await (inline ? inlineSides(settlement) : threadSides(settlement));
  const adminToken = randomBytes(32).toString('base64url');
  let stack: RunningStack | null = null;
  try {
    stack = await startStack(database, devnet, sides.merchantUrl, adminToken, wakeOnNotify);
    const url = stack.gateway.url;
    const seeds = await consumers(url, adminToken, devnet, clients);
    process.stdout.write(
      `consumer bench: ${clients} consumers, ${seconds} s after ${WARMUP_SECONDS} s warm-up, ` +
        `${os.cpus().length} cores, anvil automine on both chains, worker ` +
        `${wakeOnNotify ? 'woken by NOTIFY' : 'on 250 ms rounds only'}, consumers and merchant ` +
        `${inline ? "on the service's thread" : 'on threads of their own'}\n`,
    );
    const job: ConsumersJob = { url, databaseUrl: database.url, consumers: seeds, seconds };
    const purchases = await profiled('consumer', () => sides.purchases(job));
    const whole = purchases.map((p) => p.endedAt - p.startedAt).sort((a, b) => a - b);
    const acknowledged = await acknowledgedLatencies(
      database.pool,
      purchases.map((p) => p.intentId),
    );
    const perSecond = purchases.length / seconds;
    const p50 = percentile(acknowledged, 50);
    const p99 = percentile(acknowledged, 99);
    process.stdout.write(
      `purchases: ${purchases.length} in ${seconds} s = ${perSecond.toFixed(1)}/s\n` +
        `execute → PROVIDER_ACKNOWLEDGED: p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms (${acknowledged.length} samples)\n` +
        `whole purchase (create → DELIVERY_PENDING): p50 ${percentile(whole, 50)} ms, p99 ${percentile(whole, 99)} ms\n`,
    );
    const steps = await stepLatencies(
      database.pool,
      purchases.map((p) => p.intentId),
    );
    process.stdout.write(`time since the intent's previous state change:\n${steps.join('\n')}\n`);
    const met = perSecond >= TARGET_PER_SECOND && p99 <= TARGET_P99_MS;
    process.stdout.write(
      `verdict: ${met ? 'target met' : 'target missed'} (≥ ${TARGET_PER_SECOND} purchases/s and p99 ≤ ${TARGET_P99_MS} ms)\n`,
    );
    return 0;
  } finally {
    await stack?.stop();
    await sides.stop();
    await devnet.stop();
    await database.drop();
  }
}

/** A worker thread of this bench: the merchant, or the consumers. */
async function runSide(
  side: { side: 'merchant'; settlement: DevnetChainInfo } | { side: 'consumers' },
) {
  const port = parentPort!;
  if (side.side === 'merchant') {
    const merchant = await startDevnetDomainsMerchant({
      settlement: side.settlement,
      dataDir: null,
    });
    port.once('message', () => {
      void merchant.stop().then(() => port.postMessage({ type: 'stopped' } satisfies SideMessage));
    });
    port.postMessage({ type: 'merchant', url: merchant.url } satisfies SideMessage);
    return;
  }
  port.on('message', (job: ConsumersJob) => {
    void runConsumers(job).then((purchases) =>
      port.postMessage({ type: 'purchases', purchases } satisfies SideMessage),
    );
  });
}

if (isMainThread) runBenchMain('consumer bench', main);
else
  runSide(workerData as Parameters<typeof runSide>[0]).catch((error: unknown) => {
    throw error;
  });
