// Receipt anchoring benchmark (issue #19): what a batch costs on chain, and how long a receipt waits.
// Every receipt here is a real decision receipt: a preflight through the gateway (POST
// /preflight_payment, free on this stack) writes it and the database queues its anchor leaf
// (migration intent 0017), so the leaves, digests and proofs are the production path end to end.
// 1. Gas: for each batch size N (1, 100, 1,000, 10,000), N preflights are queued with no worker
//    running, then one round of the real anchoring job (cli/anchorWorker.ts with ANCHOR_BATCH_SIZE
//    = N) closes the batch and sends its one anchor(root, firstSeq, count) to the devnet's
//    ReceiptAnchor with the anchorWriter key. The gas is the transaction receipt's gasUsed. Before
//    a figure counts, a sample of the batch's proofs (as GET /receipt_status publishes them) is
//    walked from digests recomputed from the preflight responses and checked against the
//    contract's batchOf(root) and Anchored event, and a one-byte change is refused.
// 2. Latency: the worker as `spend-control start` deploys it on the devnet (anchoringOf: N and T
//    from ANCHOR_BATCH_SIZE / ANCHOR_BATCH_SECONDS, defaults 100 and 2 s, rounds every 500 ms),
//    preflights at a steady rate, and p50/p99 of enqueued_at → the batch's ANCHORED time, both
//    timestamps the database's own.
// Target: ≤ 100 gas per receipt amortised at batches of 1,000.
// Run: npm run bench:anchor   (args: [seconds per rate] [rates per second, comma-separated])
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import 'reflect-metadata';
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import { type Hex, bytesToHex } from 'viem';
import { anchoringOf } from '../cli/anchoring';
import { startAnchorWorker } from '../cli/anchorWorker';
import { startAllInOne, type RunningStack } from '../cli/stack';
import { receiptAnchorAbi } from '../contracts/artifacts/abis';
import {
  leafHash,
  proofFromHex,
  receiptLeafData,
  receiptMerkleHash,
  rootFromInclusionProof,
} from '../core/canon/merkle';
import { decisionReceiptBodyOf, decisionReceiptDigest } from '../core/receipts/anchor';
import { DEVNET_POLLING_INTERVAL_MS, startDevnetChains } from '../devnet/chains';
import { uniformLimits } from '../gateway/rateLimit/limiter';
import { type ChainPublicClient, createChainPublicClient } from '../platform/chain/clients';
import { readAnchoredEvent } from '../platform/chain/receiptAnchor';
import { loadConfig } from '../platform/config';
import { silentLogger } from '../platform/log';
import { benchServiceInfo, createScratchDatabase } from './service';
import { type Answer, createPolicies, POLICIES, Preflights } from './anchorReceipts';
import { percentile } from './stats';
import { runBenchMain } from './entry';

const SIZES = [1, 100, 1_000, 10_000];
const TARGET_SIZE = 1_000;
const TARGET_GAS_PER_RECEIPT = 100;
/** Proofs checked per batch: the first, the last, the middle and random others. */
const SAMPLE = 16;
const DEFAULT_SECONDS = 15;
const DEFAULT_RATES = [20, 200];

type Database = Awaited<ReturnType<typeof createScratchDatabase>>;
type Devnet = Awaited<ReturnType<typeof startDevnetChains>>;

interface Context {
  readonly database: Database;
  readonly devnet: Devnet;
  readonly stack: RunningStack;
  readonly chain: ChainPublicClient;
  readonly preflights: Preflights;
}

interface BatchRow {
  batchId: string;
  root: Hex;
  firstSeq: string;
  count: number;
  txHash: Hex;
  blockNumber: string;
  state: string;
}

/** The walk of one published proof from a digest recomputed from the preflight answer. */
function walks(anchor: Answer, digest: Hex): boolean {
  const walked = rootFromInclusionProof(
    receiptMerkleHash,
    leafHash(receiptMerkleHash, receiptLeafData(anchor.receiptId as Hex, digest)),
    anchor.proof.index,
    anchor.proof.treeSize,
    proofFromHex(anchor.proof.path),
  );
  return walked !== null && bytesToHex(walked) === anchor.batchRoot;
}

/** Checks SAMPLE proofs of the batch as the public route answers them, against the contract; throws if one fails. */
async function verifySample(ctx: Context, batch: BatchRow): Promise<number> {
  const contract = ctx.devnet.info.contracts.receiptAnchor!;
  const onChain = await ctx.chain.readContract({
    address: contract,
    abi: receiptAnchorAbi,
    functionName: 'batchOf',
    args: [batch.root],
  });
  const event = await readAnchoredEvent(ctx.chain, contract, { root: batch.root });
  if (
    onChain.count !== batch.count ||
    onChain.firstSeq.toString() !== batch.firstSeq ||
    event?.txHash.toLowerCase() !== batch.txHash
  )
    throw new Error(`batch ${batch.batchId} is not on chain as recorded`);
  const picks = new Set([0, batch.count - 1, Math.floor(batch.count / 2)]);
  while (picks.size < Math.min(SAMPLE, batch.count))
    picks.add(Math.floor(Math.random() * batch.count));
  const { rows } = await ctx.database.pool.query<{ receipt_id: string }>(
    `SELECT receipt_id FROM intent.anchor_leaves WHERE batch_id = $1 AND leaf_index = ANY($2)`,
    [batch.batchId, [...picks]],
  );
  for (const { receipt_id: receiptId } of rows) {
    const answer = ctx.preflights.answers.get(receiptId);
    if (answer === undefined) throw new Error(`leaf ${receiptId} is no receipt of this bench`);
    const digest = decisionReceiptDigest(decisionReceiptBodyOf(answer));
    const anchor = (await (
      await fetch(`${ctx.stack.gateway.url}/receipt_status/${receiptId}`)
    ).json()) as Answer;
    const tampered = `${digest.slice(0, -2)}${digest.endsWith('00') ? '01' : '00'}` as Hex;
    if (
      anchor.state !== 'ANCHORED' ||
      anchor.txHash !== batch.txHash ||
      anchor.proof.treeSize !== onChain.count ||
      anchor.blockNumber !== Number(onChain.blockNumber) ||
      !walks(anchor, digest) ||
      walks(anchor, tampered)
    )
      throw new Error(`receipt ${receiptId} does not verify: ${JSON.stringify(anchor)}`);
  }
  if (rows.length !== picks.size) throw new Error(`batch ${batch.batchId} lacks sampled leaves`);
  return rows.length;
}

interface GasResult {
  size: number;
  gasUsed: bigint;
  calldataGas: number;
  zeroBytes: number;
  roundMs: number;
  verified: number;
}

/** Queues `size` receipts, anchors them in one round of the real job with ANCHOR_BATCH_SIZE = size. */
async function gasAt(ctx: Context, size: number): Promise<GasResult> {
  await ctx.preflights.many(size);
  const funding = ctx.devnet.info.chains.funding;
  const worker = startAnchorWorker({
    chain: { chainId: funding.chainId, rpcUrl: funding.rpcUrl },
    contract: ctx.devnet.info.contracts.receiptAnchor!,
    writer: ctx.devnet.keys.anchorWriter.account,
    batchSize: size,
    batchSeconds: 86_400, // only a full batch closes
    intervalMs: 0,
    db: ctx.database.pool,
    log: silentLogger,
  });
  const started = performance.now();
  const round = await worker.runOnce().finally(() => worker.stop());
  const roundMs = performance.now() - started;
  if (round.anchored !== 1 || round.failed !== 0 || round.sending !== 0)
    throw new Error(`a round at size ${size} settled ${JSON.stringify(round)}, not one batch`);
  const { rows } = await ctx.database.pool.query<BatchRow>(
    `SELECT batch_id::text AS "batchId", root, first_seq::text AS "firstSeq", count,
            tx_hash AS "txHash", block_number::text AS "blockNumber", state
       FROM intent.anchor_batches ORDER BY batch_id DESC LIMIT 1`,
  );
  const batch = rows[0];
  if (batch?.state !== 'ANCHORED' || batch.count !== size)
    throw new Error(`the last batch is ${JSON.stringify(batch)}, not ${size} receipts ANCHORED`);
  const receipt = await ctx.chain.getTransactionReceipt({ hash: batch.txHash });
  const tx = await ctx.chain.getTransaction({ hash: batch.txHash });
  if (
    receipt.status !== 'success' ||
    tx.from.toLowerCase() !== ctx.devnet.keys.anchorWriter.account.address.toLowerCase()
  )
    throw new Error(`anchor transaction ${batch.txHash} is not the writer's successful call`);
  const input = Buffer.from(tx.input.slice(2), 'hex');
  const zeroBytes = input.filter((byte) => byte === 0).length;
  const calldataGas = zeroBytes * 4 + (input.length - zeroBytes) * 16;
  const verified = await verifySample(ctx, batch);
  return { size, gasUsed: receipt.gasUsed, calldataGas, zeroBytes, roundMs, verified };
}

function printGas(result: GasResult, label = ''): void {
  const execution = result.gasUsed - 21_000n - BigInt(result.calldataGas);
  const perReceipt = Number(result.gasUsed) / result.size;
  process.stdout.write(
    `${String(result.size).padStart(7)}  ${String(result.gasUsed).padStart(9)}  ${perReceipt.toFixed(2).padStart(12)}  ` +
      `${String(result.calldataGas).padStart(8)} (${String(result.zeroBytes).padStart(3)} zero B)  ${String(execution).padStart(9)}  ` +
      `${result.roundMs.toFixed(0).padStart(8)}  ${String(result.verified).padStart(8)}${label}\n`,
  );
}

/** Part 1: the first batch on the fresh contract apart, then every size; returns gas per receipt at TARGET_SIZE. */
async function gasTable(ctx: Context): Promise<number> {
  process.stdout.write(
    '\ngas per anchor transaction (one round of the anchoring job per batch, anvil, ReceiptAnchor as the devnet deploys it)\n' +
      '  batch   gasUsed  gas/receipt  calldata gas       execution  round ms  proofs ok\n',
  );
  printGas(
    await gasAt(ctx, 1),
    "  ← the contract's first batch (nextSeq 0 → non-zero), not counted",
  );
  let atTarget = Number.NaN;
  for (const size of SIZES) {
    const result = await gasAt(ctx, size);
    printGas(result);
    if (size === TARGET_SIZE) atTarget = Number(result.gasUsed) / size;
  }
  process.stdout.write(
    '(gasUsed = 21,000 + calldata + execution; execution is the same for every later batch, calldata moves with the zero bytes of root and count)\n',
  );
  return atTarget;
}

/** Part 2: preflights at `rate`/s for `seconds` with the deployed worker running; waits for all to anchor. */
async function latencyAt(ctx: Context, rate: number, seconds: number): Promise<void> {
  const ids: Promise<string>[] = [];
  const start = Date.now();
  const total = rate * seconds;
  while (ids.length < total) {
    const due = Math.min(total, Math.floor(((Date.now() - start) * rate) / 1000) + 1);
    while (ids.length < due) ids.push(ctx.preflights.one());
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const receiptIds = await Promise.all(ids);
  const sentSeconds = (Date.now() - start) / 1000;
  const pending = `SELECT count(*)::int AS n FROM intent.anchor_leaves l
      LEFT JOIN intent.anchor_batches b ON b.batch_id = l.batch_id
     WHERE l.receipt_id = ANY($1) AND b.state IS DISTINCT FROM 'ANCHORED'`;
  for (let waited = 0; ; waited += 100) {
    const { rows } = await ctx.database.pool.query<{ n: number }>(pending, [receiptIds]);
    if (rows[0].n === 0) break;
    if (waited > 60_000) throw new Error(`${rows[0].n} receipts not ANCHORED after 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const { rows } = await ctx.database.pool.query<{ ms: number; batch: string; count: number }>(
    `SELECT extract(epoch FROM (b.updated_at - l.enqueued_at)) * 1000 AS ms, b.batch_id::text AS batch, b.count
       FROM intent.anchor_leaves l JOIN intent.anchor_batches b ON b.batch_id = l.batch_id
      WHERE l.receipt_id = ANY($1)`,
    [receiptIds],
  );
  const ms = rows.map((row) => Number(row.ms)).sort((a, b) => a - b);
  const sizes = new Map(rows.map((row) => [row.batch, row.count]));
  const counts = [...sizes.values()];
  process.stdout.write(
    `${String(rate).padStart(6)}/s  ${String(receiptIds.length).padStart(8)} in ${sentSeconds.toFixed(1)} s  ` +
      `${String(sizes.size).padStart(7)} (${Math.min(...counts)}–${Math.max(...counts)} receipts)  ` +
      `p50 ${percentile(ms, 50).toFixed(0).padStart(5)} ms  p99 ${percentile(ms, 99).toFixed(0).padStart(5)} ms  max ${ms[ms.length - 1].toFixed(0)} ms\n`,
  );
}

async function latencyTable(ctx: Context, rates: number[], seconds: number): Promise<void> {
  const setup = anchoringOf(loadConfig(process.env), ctx.devnet.info, ctx.devnet.keys);
  if (setup.worker === undefined) throw new Error(`anchoring is off: ${setup.off}`);
  const worker = startAnchorWorker({ ...setup.worker, db: ctx.database.pool, log: silentLogger });
  try {
    process.stdout.write(
      `\nreceipt created → ANCHORED (the worker as deployed: N = ANCHOR_BATCH_SIZE = ${setup.worker.batchSize}, ` +
        `T = ANCHOR_BATCH_SECONDS = ${setup.worker.batchSeconds} s, a round every ${setup.worker.intervalMs} ms; ` +
        `anchor_leaves.enqueued_at → the batch's ANCHORED updated_at; ${seconds} s per rate)\n` +
        '    rate  receipts            batches                          latency\n',
    );
    for (const rate of rates) await latencyAt(ctx, rate, seconds);
  } finally {
    await worker.stop();
  }
}

async function startStack(database: Database, adminToken: string): Promise<RunningStack> {
  return startAllInOne({
    host: '127.0.0.1',
    port: 0,
    db: database.pool,
    transport: 'in-process',
    subgraphPortBase: 0,
    actorSecret: randomBytes(32),
    adminTokenHashes: [createHash('sha256').update(adminToken).digest()],
    sessionSecret: randomBytes(32),
    listenDatabaseUrl: null,
    graphql: { maxDepth: 10, maxCost: 5000, introspection: false },
    bodyLimitBytes: 65_536,
    rateLimit: { limits: uniformLimits(), store: 'postgres', databaseUrl: database.url },
    log: silentLogger,
    service: benchServiceInfo(),
    x402: null,
    // No worker in the stack: each part starts its own (the same startAnchorWorker the stack uses).
  });
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? DEFAULT_SECONDS);
  const rates = process.argv[3]?.split(',').map(Number) ?? DEFAULT_RATES;
  const database = await createScratchDatabase({ poolSize: 20 });
  const devnet = await startDevnetChains({ dataDir: null });
  const adminToken = randomBytes(32).toString('base64url');
  let stack: RunningStack | null = null;
  let preflights: Preflights | null = null;
  try {
    stack = await startStack(database, adminToken);
    const url = stack.gateway.url;
    preflights = new Preflights(new URL(url), await createPolicies(url, adminToken));
    const chain = createChainPublicClient(devnet.info.chains.funding, {
      pollingIntervalMs: DEVNET_POLLING_INTERVAL_MS,
    });
    const ctx: Context = { database, devnet, stack, chain, preflights };
    process.stdout.write(
      `anchor bench: decision receipts from real preflights through the gateway (${POLICIES} policies), ` +
        `anvil automine on eip155:196, ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)}\n`,
    );
    const atTarget = await gasTable(ctx);
    await latencyTable(ctx, rates, seconds);
    process.stdout.write(
      `gas per receipt at batches of ${TARGET_SIZE.toLocaleString('en-US')}: ${atTarget.toFixed(2)}\n` +
        `verdict: ${atTarget <= TARGET_GAS_PER_RECEIPT ? 'target met' : 'target missed'} ` +
        `(≤ ${TARGET_GAS_PER_RECEIPT} gas per receipt amortised at batches of ${TARGET_SIZE.toLocaleString('en-US')})\n`,
    );
  } finally {
    preflights?.close();
    await stack?.stop();
    await devnet.stop();
    await database.drop();
  }
}

runBenchMain('anchor bench', main);
