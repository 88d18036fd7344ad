// Chain reads with bounds a hosted RPC accepts (issue #27 items 7 and 8), on real anvil chains and
// the real devnet merchant, with each rail's RPC behind a 127.0.0.1 proxy that counts every request
// and refuses an eth_getLogs longer than 5 blocks, as hosted RPCs refuse long ranges. The service
// pages its log searches (CHAIN_LOG_PAGE_BLOCKS = 4 here): the reconciler finds a payment many
// pages after the block the authorization was signed at. The free GraphQL `reconciliation` makes
// no RPC call at all; the paid POST /reconcile_agent_spend scans, within its per-report budget
// (RECONCILE_MAX_RPC_CALLS = 30 here), and says when the budget cut the scan short.
import type { Hex } from 'viem';
import { createAnvilTestClient } from '../../platform/chain/clients';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { fundingFetch, purchase, untilState } from '../support/purchases';
import { type RpcProxy, startRpcProxy } from '../support/rpcProxy';
import { graphql } from '../support/stack';

const MAX_LOG_BLOCKS = 5n;
const PAGE_BLOCKS = 4n;
const REPORT_RPC_CALLS = 30;

let world: ConsumerWorld;
let buyer: TestConsumer;
const proxies: RpcProxy[] = [];
let funding: RpcProxy;
let settlement: RpcProxy;
let ambiguous: string;
let period: { policyId: string; from: string; to: string };

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.[0-9]{3}Z$/, 'Z');
const rpcCalls = () => funding.total() + settlement.total();

beforeAll(async () => {
  const startedMs = Date.now() - 60_000;
  world = await startConsumerWorld({
    async rails(rails) {
      funding = await startRpcProxy(rails.funding.rpcUrl, { maxLogBlocks: MAX_LOG_BLOCKS });
      settlement = await startRpcProxy(rails.settlement.rpcUrl, { maxLogBlocks: MAX_LOG_BLOCKS });
      proxies.push(funding, settlement);
      return {
        ...rails,
        funding: { ...rails.funding, rpcUrl: funding.url, logPageBlocks: PAGE_BLOCKS },
        settlement: { ...rails.settlement, rpcUrl: settlement.url, logPageBlocks: PAGE_BLOCKS },
        reportRpcCalls: REPORT_RPC_CALLS,
      };
    },
  });
  buyer = await newConsumer(world.stack, world.devnet, {
    mintAtomic: 10_000_000n,
    policy: { escalateAbove: '5.00' },
  });
  // The merchant settles, then its answer is lost: the payment is ambiguous, under review.
  ambiguous = await purchase(world, buyer, 'far-away.test', { faults: { dropAfterSettle: true } });
  await untilState(world, ambiguous, 'MANUAL_REVIEW');
  world.merchant.resetFaults();
  period = {
    policyId: buyer.policy.policyId,
    from: iso(startedMs),
    to: iso(Date.now() + 3_600_000),
  };
}, 180_000);

afterAll(async () => {
  await world?.stop();
  for (const proxy of proxies) await proxy.stop();
});

test('the reconciler pages its log search: a payment 12+ pages after the signing block is found PAID, no request refused', async () => {
  const row = (
    await world.stack.db.pool.query(
      `SELECT settlement FROM intent.consumer_intents WHERE intent_id = $1`,
      [ambiguous],
    )
  ).rows[0] as { settlement: { fromBlock: string } };
  const fromBlock = BigInt(row.settlement.fromBlock);
  // Fifty more blocks on the settlement chain: one search from the signing block to `latest`
  // would span more than the RPC allows.
  await createAnvilTestClient(world.devnet.info.chains.settlement).mine({ blocks: 50 });
  const head = await world.settlementChain.getBlockNumber();
  expect(head - fromBlock + 1n).toBeGreaterThan(12n * PAGE_BLOCKS);
  const logsBefore = settlement.calls.get('eth_getLogs') ?? 0;

  await world.stack.stack.consumerExecution!.runOnce();

  const { rows } = await world.stack.db.pool.query<{ resolution: any; settlement: any }>(
    `SELECT resolution, settlement FROM intent.consumer_intents WHERE intent_id = $1`,
    [ambiguous],
  );
  const finding = rows[0]!.resolution.chainFinding;
  expect(finding).toMatchObject({
    status: 'PAID',
    txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
  });
  const paid = await world.settlementChain.getTransactionReceipt({ hash: finding.txHash as Hex });
  expect(paid.status).toBe('success');
  expect(BigInt(finding.blockNumber)).toBe(paid.blockNumber);
  expect(settlement.refused).toBe(0);
  // The log was found by pages of at most PAGE_BLOCKS blocks, oldest first, up to its block.
  const pagesToFind = (paid.blockNumber - fromBlock) / PAGE_BLOCKS + 1n;
  expect(BigInt((settlement.calls.get('eth_getLogs') ?? 0) - logsBefore)).toBeGreaterThanOrEqual(
    pagesToFind,
  );
});

test('GraphQL reconciliation answers from the ledger and the stored findings with no RPC call', async () => {
  const before = rpcCalls();
  const answer = await graphql(
    world.stack.url,
    'query ($policyId: ID!, $from: String!, $to: String!) { reconciliation(policyId: $policyId, from: $from, to: $to) }',
    period,
    buyer.owner,
  );
  expect(answer.body.errors).toBeUndefined();
  expect(rpcCalls()).toBe(before);
  const report = answer.body.data.reconciliation;
  expect(report.ambiguousOpen.intents.map((line: any) => line.intentId)).toEqual([ambiguous]);
  expect(report.chainCheck).toMatchObject({
    status: 'NOT_SCANNED',
    reason: expect.stringContaining('POST /reconcile_agent_spend'),
    booked: [
      { rail: 'funding', legs: 1 },
      { rail: 'settlement', legs: 0 },
    ],
    chainFindings: [{ intentId: ambiguous, status: 'PAID' }],
  });
  expect(report.chainCheck.differences).toBeUndefined();
});

test('the paid report scans within its RPC budget and says so when the budget cut it short', async () => {
  const before = rpcCalls();
  const answer = await fundingFetch(world, buyer.account)(
    `${world.stack.url}/reconcile_agent_spend`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${buyer.owner}` },
      body: JSON.stringify(period),
    },
  );
  expect(answer.status).toBe(200);
  const report = (await answer.json()) as any;
  const made = rpcCalls() - before;
  expect(made).toBeGreaterThan(0);
  expect(made).toBeLessThanOrEqual(REPORT_RPC_CALLS);
  expect(report.chainCheck).toMatchObject({
    status: 'INCOMPLETE',
    reason: expect.stringContaining(`RPC budget (${REPORT_RPC_CALLS} calls)`),
    rpcCalls: { limit: REPORT_RPC_CALLS },
  });
  // The budget is taken before each read (a binary search at its longest), so it covers what was made.
  expect(report.chainCheck.rpcCalls.used).toBeGreaterThanOrEqual(made);
  expect(report.chainCheck.rpcCalls.used).toBeLessThanOrEqual(REPORT_RPC_CALLS);
  expect(funding.refused + settlement.refused).toBe(0);
});
