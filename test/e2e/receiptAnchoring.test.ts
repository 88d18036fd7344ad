// Receipt anchoring end to end on the devnet: a whole purchase through the gateway (its preflight
// writes a decision receipt, its completion a final consumer receipt), then the anchoring job
// puts both in one ReceiptAnchor batch on eip155:196. Every proof is checked with nothing but viem
// against the contract, and with `spend-control receipts verify`; one changed byte fails. Batches
// close at N receipts or T seconds; a batch recorded but not settled (a crash), or already mined
// when the job retries, lands exactly once; a writer the contract does not know leaves its batch
// ANCHOR_FAILED with the contract's reason until propose → timelock → execute, then batches land.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Address, type Hex, concat, keccak256, toBytes } from 'viem';
import { receiptAnchorAbi } from '../../contracts/artifacts/abis';
import { hashJson } from '../../core/canon/jcs';
import { decisionReceiptBodyOf, decisionReceiptDigest } from '../../core/receipts/anchor';
import {
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
} from '../../platform/chain/clients';
import {
  anchorBatch,
  deployReceiptAnchor,
  executeWriter,
  proposeWriter,
} from '../../platform/chain/receiptAnchor';
import { createLogger } from '../../platform/log';
import { getConsumerIntent } from '../../subgraphs/intent/consumer/store';
import { type AnchorJobDeps, closeDueBatch, runAnchorRound } from '../../subgraphs/intent';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { postJson } from '../support/stack';
import { createIntent, fundAndExecute, intentRow, untilState } from '../support/purchases';

const run = promisify(execFile);
const CLI = path.join(__dirname, '..', '..', 'dist', 'cli', 'main.js');

let world: ConsumerWorld;
let buyer: TestConsumer;
let domains = 0;

beforeAll(async () => {
  world = await startConsumerWorld({ rdap: true, anchoring: { batchSize: 100, batchSeconds: 0 } });
  buyer = await newConsumer(world.stack, world.devnet, {
    mintAtomic: 10_000_000n,
    policy: { escalateAbove: '5.00' },
  });
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

const contract = (): Address => world.devnet.info.contracts.receiptAnchor!;

/** Job deps on the devnet chain with the anchorWriter key; tests pick the contract and the batching. */
function deps(overrides: Partial<AnchorJobDeps> = {}): AnchorJobDeps {
  const funding = world.devnet.info.chains.funding;
  return {
    db: world.stack.db.pool,
    publicClient: world.fundingChain,
    writer: createChainWalletClient(funding, world.devnet.keys.anchorWriter.account, {
      pollingIntervalMs: 20,
    }),
    contract: contract(),
    batchSize: 100,
    batchSeconds: 0,
    now: () => new Date(),
    log: createLogger({ level: 'silent' }),
    ...overrides,
  };
}

async function get(route: string): Promise<any> {
  const response = await fetch(`${world.stack.url}${route}`);
  expect(response.status).toBe(200);
  // Parsed in this realm: JCS accepts plain objects only.
  return JSON.parse(await response.text());
}

/** Creates a purchase (its preflight writes a decision receipt); returns the intent and that receipt id. */
async function created(): Promise<{ intentId: string; decisionReceiptId: string }> {
  domains += 1;
  const body = await createIntent(world, buyer, `anchor-${domains}.test`);
  const intentId = body.intent.intentId as string;
  const row = await intentRow(world, intentId);
  return { intentId, decisionReceiptId: row.decision!.receiptId as string };
}

/** The whole purchase: create, fund with the official x402 client, execute, until COMPLETED. */
async function purchased(): Promise<{ intentId: string; decisionReceiptId: string }> {
  const made = await created();
  await fundAndExecute(world, buyer, made.intentId);
  await untilState(world, made.intentId, 'COMPLETED');
  return made;
}

/** RFC 9162 §2.1.3.2 with nothing but viem, as docs/receipts.md prints it. */
function rootFromProof(leafData: Hex, index: number, treeSize: number, proof: Hex[]): Hex | null {
  if (index < 0 || index >= treeSize) return null;
  let fn = index;
  let sn = treeSize - 1;
  let hash = keccak256(concat(['0x00', leafData]));
  for (const sibling of proof) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      hash = keccak256(concat(['0x01', sibling, hash]));
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn / 2, Math.floor(sn / 2)];
    } else {
      hash = keccak256(concat(['0x01', hash, sibling]));
    }
    [fn, sn] = [Math.floor(fn / 2), Math.floor(sn / 2)];
  }
  return sn === 0 ? hash : null;
}

/** The plain viem check: the digest's leaf walks to the root, and the contract holds that root with that size. */
async function verifiedWithViem(anchor: any, digest: Hex): Promise<boolean> {
  const { proof } = anchor;
  const root = rootFromProof(
    concat([anchor.receiptId as Hex, digest]),
    proof.index,
    proof.treeSize,
    proof.path,
  );
  if (root === null || root !== anchor.batchRoot) return false;
  const batch = await world.fundingChain.readContract({
    address: anchor.contract,
    abi: receiptAnchorAbi,
    functionName: 'batchOf',
    args: [root],
  });
  return batch.count === proof.treeSize && Number(batch.blockNumber) === anchor.blockNumber;
}

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run('node', [CLI, 'receipts', 'verify', ...args]);
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, out: failed.stdout + failed.stderr };
  }
}

describe('receipts of a purchase', () => {
  let intentId: string;
  let decisionReceiptId: string;
  let decisionAnchor: any;
  let receipt: any;

  beforeAll(async () => {
    ({ intentId, decisionReceiptId } = await purchased());
  }, 60_000);

  test('PENDING until the job runs, then both ANCHORED in one batch, everywhere the anchor appears', async () => {
    expect(await get(`/receipt_status/${decisionReceiptId}`)).toEqual({
      state: 'PENDING',
      receiptId: decisionReceiptId,
    });
    const before = await get(`/consumer/receipt/${intentId}`);
    expect(before.anchor.state).toBe('PENDING');

    const round = await world.stack.stack.anchoring!.runOnce();
    expect(round).toMatchObject({ ran: true, failed: 0, sending: 0 });
    expect(round.anchored).toBeGreaterThanOrEqual(1);

    decisionAnchor = await get(`/receipt_status/${decisionReceiptId}`);
    receipt = await get(`/consumer/receipt/${intentId}`);
    for (const anchor of [decisionAnchor, receipt.anchor]) {
      expect(anchor).toEqual({
        state: 'ANCHORED',
        receiptId: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        blockNumber: expect.any(Number),
        batchRoot: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        proof: {
          digest: expect.stringMatching(/^0x[0-9a-f]{64}$/),
          index: expect.any(Number),
          treeSize: expect.any(Number),
          path: expect.any(Array),
        },
        chain: 'eip155:196',
        contract: contract().toLowerCase(),
      });
    }
    expect(receipt.anchor.batchRoot).toBe(decisionAnchor.batchRoot);
    // The same object through log_receipt and for the consumer receipt by its id.
    const logged = await postJson(world.stack.url, '/log_receipt', {
      receiptId: receipt.anchor.receiptId,
    });
    expect(logged.body).toEqual(receipt.anchor);
    // The transaction is the Anchored event of that root.
    const tx = await world.fundingChain.getTransactionReceipt({ hash: receipt.anchor.txHash });
    expect(tx.status).toBe('success');
    expect(Number(tx.blockNumber)).toBe(receipt.anchor.blockNumber);
    // And the owner's GraphQL view of the intent carries the same receipt.
    const graphql = await postJson(
      world.stack.url,
      '/graphql',
      { query: `{ consumerIntent(intentId: "${intentId}") { receipt } }` },
      buyer.owner,
    );
    expect(graphql.body.data.consumerIntent.receipt.anchor).toEqual(receipt.anchor);
  });

  test('each proof verifies with nothing but viem, from digests recomputed from the public bodies', async () => {
    const { integrity, anchor, ...covered } = receipt;
    const consumerDigest = keccak256(toBytes(JSON.stringify(sorted(covered))));
    expect(consumerDigest).toBe(integrity.digest);
    expect(hashJson(covered)).toBe(integrity.digest);
    expect(anchor.proof.digest).toBe(integrity.digest);
    expect(await verifiedWithViem(anchor, consumerDigest)).toBe(true);

    const row = await getConsumerIntent(world.stack.db.pool, intentId);
    const decisionDigest = decisionReceiptDigest(decisionReceiptBodyOf(row!.decision!));
    expect(decisionAnchor.proof.digest).toBe(decisionDigest);
    expect(await verifiedWithViem(decisionAnchor, decisionDigest)).toBe(true);
  });

  test('one byte changed in the receipt fails verification', async () => {
    const { integrity: _integrity, anchor, ...covered } = receipt;
    const tampered = { ...covered, spread: `${covered.spread}0` };
    expect(await verifiedWithViem(anchor, hashJson(tampered))).toBe(false);
    const flipped = `${anchor.proof.digest.slice(0, -1)}${anchor.proof.digest.endsWith('0') ? '1' : '0'}`;
    expect(await verifiedWithViem(anchor, flipped as Hex)).toBe(false);
  });

  test('spend-control receipts verify: 0 for both receipts, 1 for a tampered receipt file', async () => {
    const rpc = world.devnet.info.chains.funding.rpcUrl;
    const service = world.stack.url;
    // The user's contract; the devnet's waits 5 s where a real one waits three days.
    const mine = ['--contract', contract(), '--writer-delay', '5'];
    const consumerOk = await cli([intentId, '--rpc', rpc, '--service', service, ...mine]);
    expect(consumerOk).toMatchObject({ code: 0, out: expect.stringMatching(/verified/i) });
    expect(consumerOk.out).not.toMatch(/WARNING/);
    const decisionOk = await cli([decisionReceiptId, '--rpc', rpc, '--service', service, ...mine]);
    expect(decisionOk).toMatchObject({ code: 0, out: expect.stringMatching(/verified/i) });

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'receipt-'));
    const file = path.join(dir, 'receipt.json');
    fs.writeFileSync(file, JSON.stringify(receipt));
    expect(
      await cli([receipt.anchor.receiptId, '--rpc', rpc, '--receipt-file', file, ...mine]),
    ).toMatchObject({ code: 0 });
    const text = JSON.stringify(receipt).replace(
      `"fee":"${receipt.fee}"`,
      `"fee":"${receipt.fee}1"`,
    );
    fs.writeFileSync(file, text);
    const tampered = await cli([
      receipt.anchor.receiptId,
      '--rpc',
      rpc,
      '--receipt-file',
      file,
      ...mine,
    ]);
    expect(tampered.code).toBe(1);
    expect(tampered.out).toMatch(/not verified/i);
  }, 120_000);

  test('receipts verify: without --contract it warns and uses the service’s; a contract whose writer delay is not three days is refused', async () => {
    const rpc = world.devnet.info.chains.funding.rpcUrl;
    const service = world.stack.url;
    const theirs = await cli([intentId, '--rpc', rpc, '--service', service, '--writer-delay', '5']);
    expect(theirs.code).toBe(0);
    expect(theirs.out).toContain(
      `WARNING   no --contract given: checking against ${contract().toLowerCase()}`,
    );
    // The default requirement is the spec's three days: the devnet contract's 5 s fails it.
    const short = await cli([
      intentId,
      '--rpc',
      rpc,
      '--service',
      service,
      '--contract',
      contract(),
    ]);
    expect(short.code).toBe(1);
    expect(short.out).toMatch(/NOT verified: .*writer delay of 5 s, not the 259200 s required/);
  }, 60_000);
});

/** A plain JCS for these bodies (strings, integers, null, objects): keys sorted, no spaces. */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
  );
}

describe('batches', () => {
  test('close at N receipts or T seconds after the oldest, never before', async () => {
    await runAnchorRound(deps()); // drains anything earlier tests left
    const first = await created();
    const second = await created();
    const third = await created();
    const young = await runAnchorRound(deps({ batchSize: 1000, batchSeconds: 3600 }));
    expect(young).toMatchObject({ ran: true, anchored: 0 });
    expect((await get(`/receipt_status/${first.decisionReceiptId}`)).state).toBe('PENDING');

    // N = 2: one batch of the two oldest; the third waits for T.
    const full = await runAnchorRound(deps({ batchSize: 2, batchSeconds: 3600 }));
    expect(full.anchored).toBe(1);
    const a = await get(`/receipt_status/${first.decisionReceiptId}`);
    const b = await get(`/receipt_status/${second.decisionReceiptId}`);
    expect([a.state, b.state, a.batchRoot, a.proof.treeSize]).toEqual([
      'ANCHORED',
      'ANCHORED',
      b.batchRoot,
      2,
    ]);
    expect((await get(`/receipt_status/${third.decisionReceiptId}`)).state).toBe('PENDING');

    // T = 5 s, on a clock 5 s ahead: the lone third closes.
    const later = () => new Date(Date.now() + 5_000);
    const aged = await runAnchorRound(deps({ batchSize: 1000, batchSeconds: 5, now: later }));
    expect(aged.anchored).toBe(1);
    const c = await get(`/receipt_status/${third.decisionReceiptId}`);
    expect([c.state, c.proof.treeSize, c.proof.path]).toEqual(['ANCHORED', 1, []]);
  });

  test('a batch recorded but never sent (a crash) is sent by the next round, once', async () => {
    const made = await created();
    const client = await world.stack.db.pool.connect();
    const batch = await closeDueBatch(deps(), client).finally(() => client.release());
    expect(batch).not.toBeNull();
    expect((await get(`/receipt_status/${made.decisionReceiptId}`)).state).toBe('PENDING');

    const round = await runAnchorRound(deps());
    expect(round).toMatchObject({ anchored: 1, failed: 0, sending: 0 });
    const anchor = await get(`/receipt_status/${made.decisionReceiptId}`);
    expect(anchor.batchRoot).toBe(batch!.root);
    expect(await anchoredEvents(batch!.root)).toBe(1);
  });

  test('a batch whose transaction was mined before the crash is found on chain, not sent again', async () => {
    const made = await created();
    const client = await world.stack.db.pool.connect();
    const batch = await closeDueBatch(deps(), client).finally(() => client.release());
    // The crashed process had sent it: the transaction is mined, the database still says SENDING.
    const job = deps();
    const mined = await anchorBatch({
      publicClient: job.publicClient,
      writer: job.writer,
      contract: contract(),
      root: batch!.root,
      firstSeq: batch!.firstSeq,
      count: batch!.count,
    });
    const round = await runAnchorRound(job);
    expect(round).toMatchObject({ anchored: 1, failed: 0 });
    const anchor = await get(`/receipt_status/${made.decisionReceiptId}`);
    expect([anchor.state, anchor.txHash]).toEqual(['ANCHORED', mined.txHash]);
    expect(await anchoredEvents(batch!.root)).toBe(1);
    const nextSeq = await world.fundingChain.readContract({
      address: contract(),
      abi: receiptAnchorAbi,
      functionName: 'nextSeq',
    });
    expect(nextSeq).toBe(batch!.firstSeq + BigInt(batch!.count));
    // The database refuses to put a batched receipt in another batch.
    await expect(releaseLeaf(made.decisionReceiptId)).rejects.toMatchObject({ code: 'IN007' });
  });
  test('a landed batch waits for its confirmations; one whose block is re-orged away is sent again, once', async () => {
    await runAnchorRound(deps()); // nothing of earlier tests left queued
    const made = await created();
    const rpc = world.fundingChain as unknown as {
      request(args: { method: string; params?: unknown[] }): Promise<unknown>;
    };
    const beforeSend = await rpc.request({ method: 'evm_snapshot' });
    const job = deps({ confirmations: 3 });

    // Landed, but one block deep of three: still SENDING, the receipt PENDING, nothing closed behind it.
    expect(await runAnchorRound(job)).toMatchObject({ anchored: 0, failed: 0, sending: 1 });
    const { rows } = await world.stack.db.pool.query<{ root: Hex; state: string }>(
      `SELECT b.root, b.state FROM intent.anchor_leaves l
         JOIN intent.anchor_batches b ON b.batch_id = l.batch_id WHERE l.receipt_id = $1`,
      [made.decisionReceiptId],
    );
    expect(rows).toEqual([{ root: expect.any(String), state: 'SENDING' }]);
    const root = rows[0]!.root;
    expect(await anchoredEvents(root)).toBe(1);
    expect((await get(`/receipt_status/${made.decisionReceiptId}`)).state).toBe('PENDING');

    // A re-org takes the block away: the contract no longer has the root.
    await rpc.request({ method: 'evm_revert', params: [beforeSend] });
    expect(await anchoredEvents(root)).toBe(0);
    // The next round does not find it and sends it again, at the same positions; still too shallow.
    expect(await runAnchorRound(job)).toMatchObject({ anchored: 0, failed: 0, sending: 1 });
    const [resent] = await anchoredLogs(root);
    expect(resent).toBeDefined();

    // Two more blocks: three deep, ANCHORED with the transaction that is on chain now.
    await rpc.request({ method: 'anvil_mine', params: ['0x2'] });
    expect(await runAnchorRound(job)).toMatchObject({ anchored: 1, failed: 0, sending: 0 });
    const anchor = await get(`/receipt_status/${made.decisionReceiptId}`);
    expect(anchor).toMatchObject({
      state: 'ANCHORED',
      batchRoot: root,
      txHash: resent!.transactionHash,
      blockNumber: Number(resent!.blockNumber),
    });
    expect(await anchoredEvents(root)).toBe(1);
  });
});

describe('the recheck depth', () => {
  test('an ANCHORED batch is read again at ANCHOR_RECHECK_DEPTH: dropped by a re-org, it is sent again and anchored once; still there, it is confirmed', async () => {
    await runAnchorRound(deps()); // nothing of earlier tests left queued
    const made = await created();
    const rpc = world.fundingChain as unknown as {
      request(args: { method: string; params?: unknown[] }): Promise<unknown>;
    };
    const job = deps({ confirmations: 1, recheckDepth: 3 });
    await runAnchorRound(job); // earlier batches, deep by now, are confirmed
    const beforeSend = await rpc.request({ method: 'evm_snapshot' });
    const made2 = await created();
    expect(await runAnchorRound(job)).toMatchObject({ anchored: 1, reorged: 0 });
    const first = await get(`/receipt_status/${made2.decisionReceiptId}`);
    expect(first.state).toBe('ANCHORED');
    const root = first.batchRoot as Hex;

    // A re-org takes the anchored block away; at the recheck depth the batch is sent again.
    await rpc.request({ method: 'evm_revert', params: [beforeSend] });
    expect(await anchoredEvents(root)).toBe(0);
    await rpc.request({ method: 'anvil_mine', params: ['0x3'] });
    expect(await runAnchorRound(job)).toMatchObject({ reorged: 1, anchored: 1, sending: 0 });
    expect(await anchoredEvents(root)).toBe(1);
    const [onChain] = await anchoredLogs(root);
    const again = await get(`/receipt_status/${made2.decisionReceiptId}`);
    expect(again).toMatchObject({
      state: 'ANCHORED',
      batchRoot: root,
      txHash: onChain!.transactionHash,
      blockNumber: Number(onChain!.blockNumber),
    });
    expect(await verifiedWithViem(again, again.proof.digest)).toBe(true);

    // Deep enough again and still there: confirmed, never read again.
    await rpc.request({ method: 'anvil_mine', params: ['0x3'] });
    expect(await runAnchorRound(job)).toMatchObject({ reorged: 0, anchored: 0 });
    const { rows } = await world.stack.db.pool.query<{ confirmed: boolean }>(
      `SELECT b.confirmed FROM intent.anchor_batches b WHERE b.root = $1`,
      [root],
    );
    expect(rows).toEqual([{ confirmed: true }]);
    expect((await get(`/receipt_status/${made.decisionReceiptId}`)).state).toBe('ANCHORED');
  });
});

/** The Anchored events of a root on the devnet chain now. */
function anchoredLogs(root: Hex) {
  return world.fundingChain.getContractEvents({
    address: contract(),
    abi: receiptAnchorAbi,
    eventName: 'Anchored',
    args: { root },
    fromBlock: 0n,
  });
}

async function anchoredEvents(root: Hex): Promise<number> {
  return (await anchoredLogs(root)).length;
}

/** Takes a receipt out of its batch behind the job's back (the database refuses it: IN007). */
function releaseLeaf(receiptId: string) {
  return world.stack.db.pool.query(
    `UPDATE intent.anchor_leaves SET batch_id = NULL, leaf_index = NULL, proof = NULL
      WHERE receipt_id = $1`,
    [receiptId],
  );
}

describe('a writer the contract does not know (the mainnet case)', () => {
  test('ANCHOR_FAILED with the contract reason; after propose → delay → execute, new batches anchor', async () => {
    await runAnchorRound(deps()); // nothing of earlier tests left queued
    const funding = world.devnet.info.chains.funding;
    const admin = createChainWalletClient(funding, world.devnet.keys.deployer.account, {
      pollingIntervalMs: 20,
    });
    const publicClient = createChainPublicClient(funding, { pollingIntervalMs: 20 });
    const writer = world.devnet.keys.anchorWriter.address;
    const fresh = await deployReceiptAnchor(publicClient, admin, {
      delaySeconds: 5,
      admin: world.devnet.keys.deployer.address,
      writers: [],
    });
    const job = deps({ contract: fresh.address });

    const refused = await created();
    const round = await runAnchorRound(job);
    expect(round).toMatchObject({ anchored: 0, failed: 1 });
    const failed = await get(`/receipt_status/${refused.decisionReceiptId}`);
    expect(failed).toEqual({
      state: 'ANCHOR_FAILED',
      receiptId: refused.decisionReceiptId,
      reason: expect.stringContaining(`NotWriter: ${writer}`),
    });
    // The purchase itself is untouched by the anchor.
    const row = await getConsumerIntent(world.stack.db.pool, refused.intentId);
    expect(row!.state).toBe('AWAITING_FUNDING');

    const change = { publicClient, contract: fresh.address, account: writer, allowed: true };
    await proposeWriter({ ...change, sender: admin });
    await expect(executeWriter({ ...change, sender: admin })).rejects.toThrow(
      /WriterProposalNotDue/,
    );
    const testClient = createAnvilTestClient(funding);
    await testClient.increaseTime({ seconds: 5 });
    await testClient.mine({ blocks: 1 });
    await executeWriter({ ...change, sender: admin });

    const accepted = await created();
    // Once the contract lists the writer, the refused receipt is queued again and anchored with the new one.
    expect(await runAnchorRound(job)).toMatchObject({ requeued: 1, anchored: 1, failed: 0 });
    const anchored = await get(`/receipt_status/${accepted.decisionReceiptId}`);
    expect([anchored.state, anchored.contract]).toEqual(['ANCHORED', fresh.address.toLowerCase()]);
    const requeued = await get(`/receipt_status/${refused.decisionReceiptId}`);
    expect(requeued).toMatchObject({ state: 'ANCHORED', batchRoot: anchored.batchRoot });
    expect(await verifiedWithViem(requeued, requeued.proof.digest)).toBe(true);
    // The refused batch stays on record, requeued; the receipt is in one batch, the anchored one.
    const { rows } = await world.stack.db.pool.query(
      `SELECT b.state, b.requeued_at IS NOT NULL AS requeued, b.root FROM intent.anchor_batches b
        WHERE b.contract = $1 ORDER BY b.batch_id`,
      [fresh.address.toLowerCase()],
    );
    expect(rows).toEqual([
      { state: 'ANCHOR_FAILED', requeued: true, root: expect.any(String) },
      { state: 'ANCHORED', requeued: false, root: anchored.batchRoot },
    ]);
    // An anchored receipt never leaves its batch, and a refused batch is requeued once.
    await expect(releaseLeaf(refused.decisionReceiptId)).rejects.toMatchObject({ code: 'IN007' });
    expect(await runAnchorRound(job)).toMatchObject({ requeued: 0, anchored: 0, failed: 0 });
  }, 60_000);
});
