// Reconciliation and the analyst reads end to end, on real anvil chains with the real devnet
// merchant, the RDAP registry and the official x402 client: a policy's period holds a completed
// purchase, one the merchant refused (refunded on chain), one whose answer was lost after the
// merchant settled (ambiguous, under review), and a preflight blocked as a duplicate; the treasury
// also sends USD₮0 to the policy's wallet outside the service. POST /reconcile_agent_spend reports
// each number exactly and lists that transfer as the one difference; the GraphQL analyst queries
// and the CSV export are owner-scoped and agree with each other.
import { parseAbi } from 'viem';
import { freshWireIntent } from '../../core/test-support/spend-fixtures';
import { csvDocument } from '../../core/reconciliation/csv';
import type { DevnetChains } from '../../devnet/chains';
import type { DomainsMerchant } from '../../devnet/merchants/domains/server';
import { createChainPublicClient, createChainWalletClient } from '../../platform/chain/clients';
import type { ConsumerRails } from '../../subgraphs/kit';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { graphql, type TestStack } from '../support/stack';
import { fundingFetch, purchase, untilState } from '../support/purchases';

const ERC20 = parseAbi(['function transfer(address to, uint256 value) returns (bool)']);
const FUNDING = 50_250n;
const SPREAD = 250n;
const DUPLICATE_AMOUNT = 100_000n;
const OUTSIDE_TRANSFER = 777n;
const PRICE = 250_000n;

let world: ConsumerWorld;
let devnet: DevnetChains;
let merchant: DomainsMerchant;
let rails: ConsumerRails;
let stack: TestStack;
let buyer: TestConsumer;
let stranger: TestConsumer;
let period: { policyId: string; from: string; to: string };
const ids: Record<'completed' | 'refunded' | 'ambiguous', string> = {
  completed: '',
  refunded: '',
  ambiguous: '',
};
let duplicateHash: string;
let outsideTx: string;

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.[0-9]{3}Z$/, 'Z');

/** Reads the intent until it reaches `state`, running worker rounds between reads (nothing is timed). */
async function reaches(intentId: string, state: string): Promise<void> {
  // Refunds are paid by the worker's rounds (the NOTIFY wakes it for execution only).
  await untilState(world, intentId, state, () => stack.stack.consumerExecution!.runOnce());
}

/** The same preflight twice: approved, then BLOCKED_DUPLICATE (each paid with the official client). */
async function blockDuplicate(): Promise<string> {
  const intent = freshWireIntent(buyer.policy, Date.now(), {
    agentId: 'dup-bot',
    category: 'domains',
    network: rails.funding.network,
    token: rails.funding.token.toLowerCase(),
    amount: DUPLICATE_AMOUNT.toString(),
  });
  const decisions: string[] = [];
  let hash = '';
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const answer = await fundingFetch(world, buyer.account)(`${stack.url}/preflight_payment`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // Another nonce: a new intent with the same key tuple (a repeat of one hash is idempotent).
      body: JSON.stringify({
        policyId: buyer.policy.policyId,
        intent: { ...intent, nonce: `${intent.nonce}${attempt}` },
      }),
    });
    const body = (await answer.json()) as { decision: string; intentHash: string };
    decisions.push(body.decision);
    hash = body.intentHash;
  }
  expect(decisions).toEqual(['APPROVED', 'BLOCKED_DUPLICATE']);
  return hash;
}

/** USD₮0 sent from the funding treasury with its dev key, outside the service. */
async function transferOutsideService(): Promise<string> {
  const chain = devnet.info.chains.funding;
  const wallet = createChainWalletClient(chain, devnet.keys.treasury.account);
  const hash = await wallet.writeContract({
    address: rails.funding.token,
    abi: ERC20,
    functionName: 'transfer',
    args: [buyer.account.address, OUTSIDE_TRANSFER],
  });
  await createChainPublicClient(chain, { pollingIntervalMs: 20 }).waitForTransactionReceipt({
    hash,
  });
  return hash.toLowerCase();
}

beforeAll(async () => {
  const startedMs = Date.now() - 60_000;
  world = await startConsumerWorld({ rdap: true });
  ({ devnet, merchant, rails, stack } = world);
  buyer = await newConsumer(stack, devnet, {
    mintAtomic: 10_000_000n,
    policy: { escalateAbove: '5.00' },
  });
  stranger = await newConsumer(stack, devnet, { mintAtomic: 1_000_000n });
  ids.completed = await purchase(world, buyer, 'taken.test');
  await reaches(ids.completed, 'COMPLETED');
  ids.refunded = await purchase(world, buyer, 'refused.test', {
    faults: { refuseBeforePayment: true },
  });
  await reaches(ids.refunded, 'REFUNDED');
  merchant.resetFaults();
  ids.ambiguous = await purchase(world, buyer, 'dropped.test', {
    faults: { dropAfterSettle: true },
  });
  await reaches(ids.ambiguous, 'MANUAL_REVIEW');
  merchant.resetFaults();
  duplicateHash = await blockDuplicate();
  outsideTx = await transferOutsideService();
  period = {
    policyId: buyer.policy.policyId,
    from: iso(startedMs),
    to: iso(Date.now() + 3_600_000),
  };
}, 240_000);

afterAll(async () => {
  await world?.stop();
});

function reconcile(body: unknown, bearer: string | undefined, paid: boolean) {
  return (paid ? fundingFetch(world, buyer.account) : fetch)(`${stack.url}/reconcile_agent_spend`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
    },
    body: JSON.stringify(body),
  });
}

const RECONCILIATION =
  'query ($policyId: ID!, $from: String!, $to: String!) { reconciliation(policyId: $policyId, from: $from, to: $to) }';

describe('POST /reconcile_agent_spend', () => {
  test('unpaid: 402 with the $0.25 terms; a bad body is a 400 with its fields, never a challenge', async () => {
    const unpaid = await reconcile(period, buyer.owner, false);
    expect(unpaid.status).toBe(402);
    const required = JSON.parse(
      Buffer.from(unpaid.headers.get('payment-required')!, 'base64').toString('utf8'),
    ) as { accepts: Array<Record<string, unknown>> };
    expect(required.accepts[0]).toMatchObject({
      network: rails.funding.network,
      amount: PRICE.toString(),
    });
    const cases: Array<[unknown, string]> = [
      [{ ...period, to: period.from }, 'to'],
      [{ ...period, to: iso(Date.parse(period.from) + 93 * 86_400_000) }, 'to'],
      [{ ...period, from: '2026-02-30T00:00:00Z' }, 'from'],
      [{ ...period, from: 'yesterday' }, 'from'],
      [{ ...period, agentId: 'not an agent' }, 'agentId'],
    ];
    for (const [body, field] of cases) {
      const answer = await reconcile(body, buyer.owner, true);
      expect(answer.status).toBe(400);
      expect(answer.headers.get('payment-required')).toBeNull();
      const error = (await answer.json()) as { code: string; details: Array<{ field: string }> };
      expect(error.code).toBe('REQUEST_INVALID');
      expect(error.details.map((detail) => detail.field)).toEqual([field]);
    }
  });

  test('another owner and another policy’s session are refused before any 402, with no data', async () => {
    for (const bearer of [stranger.owner, stranger.session]) {
      const answer = await reconcile(period, bearer, true);
      expect(answer.status).toBe(403);
      expect(answer.headers.get('payment-required')).toBeNull();
      const text = await answer.text();
      expect(text).not.toContain(ids.completed);
      expect(JSON.parse(text).code).toBe('FORBIDDEN');
    }
    expect((await reconcile(period, undefined, true)).status).toBe(401);
  });

  test('paid: every number of the seeded period exactly, and the outside transfer as the one difference', async () => {
    const answer = await reconcile(period, buyer.session, true);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('payment-response')).not.toBeNull();
    const report = (await answer.json()) as any;
    const kept = FUNDING * 2n;
    expect(report.spend).toMatchObject({
      totalAtomic: kept.toString(),
      purchases: 2,
      byCategory: [{ key: 'domains', amountAtomic: kept.toString(), count: 2 }],
      byProvider: [{ key: 'spendctl-domains', amountAtomic: kept.toString(), count: 2 }],
    });
    expect(report.spend.byAgent).toHaveLength(1);
    expect(report.spend.byAgent[0]).toMatchObject({ amountAtomic: kept.toString(), count: 2 });
    expect(report.fees).toEqual({ serviceFeeAtomic: '0', spreadAtomic: (SPREAD * 2n).toString() });
    expect(report.duplicatesBlocked).toEqual({
      count: 1,
      amountAtomic: DUPLICATE_AMOUNT.toString(),
      intentHashes: [duplicateHash],
    });
    expect(report.refunds).toMatchObject({ count: 1, amountAtomic: FUNDING.toString() });
    expect(report.refunds.intents.map((line: any) => line.intentId)).toEqual([ids.refunded]);
    expect(report.failedDeliveries.intents.map((line: any) => line.intentId)).toEqual([
      ids.refunded,
    ]);
    expect(report.ambiguousOpen).toMatchObject({ count: 1, amountAtomic: FUNDING.toString() });
    expect(report.ambiguousOpen.intents.map((line: any) => line.intentId)).toEqual([ids.ambiguous]);
    // Legs: three fundings, the completed purchase's settlement, the refund; all on chain.
    expect(report.chainCheck.status).toBe('COMPLETE');
    expect(report.chainCheck.matchedLegs).toBe(5);
    expect(report.chainCheck.differences).toEqual([
      {
        kind: 'ON_CHAIN_NOT_BOOKED',
        rail: 'funding',
        legKind: null,
        intentId: null,
        txHash: outsideTx,
        from: rails.funding.treasury.toLowerCase(),
        to: buyer.account.address.toLowerCase(),
        bookedAtomic: '0',
        onchainAtomic: OUTSIDE_TRANSFER.toString(),
        deltaAtomic: OUTSIDE_TRANSFER.toString(),
      },
    ]);
  });

  test('narrowed to one agent: only that agent’s duplicate, no purchases', async () => {
    const answer = await reconcile({ ...period, agentId: 'dup-bot' }, buyer.owner, true);
    expect(answer.status).toBe(200);
    const report = (await answer.json()) as any;
    expect(report.spend.purchases).toBe(0);
    expect(report.duplicatesBlocked.count).toBe(1);
  });

  test('the analyst query answers the same spend report without a chain scan; another owner gets FORBIDDEN and no data', async () => {
    const mine = await graphql(stack.url, RECONCILIATION, period, buyer.owner);
    expect(mine.body.errors).toBeUndefined();
    const report = mine.body.data.reconciliation;
    expect(report.spend.totalAtomic).toBe((FUNDING * 2n).toString());
    // No chain scan on the free query: the outside transfer shows in the paid report only.
    expect(report.chainCheck.status).toBe('NOT_SCANNED');
    expect(JSON.stringify(report)).not.toContain(outsideTx);
    const admin = await graphql(stack.url, RECONCILIATION, period, stack.adminToken);
    expect(admin.body.data.reconciliation.refunds).toEqual(report.refunds);
    const theirs = await graphql(stack.url, RECONCILIATION, period, stranger.owner);
    expect(theirs.body.data?.reconciliation ?? null).toBeNull();
    expect(theirs.body.errors?.[0].extensions?.code).toBe('FORBIDDEN');
  });
});

const ENTRIES = `query ($filter: LedgerFilter, $first: Int, $after: String) {
  ledgerEntries(filter: $filter, first: $first, after: $after) {
    nodes { id groupId entryNo createdAt groupKind accountKey accountKind amountAtomic
            asset { chain token symbol decimals } }
    pageInfo { endCursor hasNextPage }
  }
}`;

async function allEntries(token: string, filter: Record<string, unknown>, first: number) {
  const nodes: any[] = [];
  let after: string | null = null;
  for (let page = 0; page < 100; page += 1) {
    const answer = await graphql(stack.url, ENTRIES, { filter, first, after }, token);
    expect(answer.body.errors).toBeUndefined();
    nodes.push(...answer.body.data.ledgerEntries.nodes);
    if (!answer.body.data.ledgerEntries.pageInfo.hasNextPage) return nodes;
    after = answer.body.data.ledgerEntries.pageInfo.endCursor;
  }
  throw new Error('more pages than expected');
}

describe('analyst GraphQL and the CSV export', () => {
  test('ledgerEntries pages through the policy’s entries, each once; another owner sees none of them', async () => {
    const filter = { policyId: buyer.policy.policyId };
    const whole = await allEntries(buyer.owner, filter, 200);
    const paged = await allEntries(buyer.owner, filter, 3);
    expect(paged.map((entry) => entry.id)).toEqual(whole.map((entry) => entry.id));
    expect(new Set(whole.map((entry) => entry.groupKind))).toEqual(
      new Set(['FUNDING', 'SETTLEMENT', 'RECOGNITION', 'REFUND', 'SUSPENSE_MOVE']),
    );
    const refused = await graphql(stack.url, ENTRIES, { filter }, stranger.owner);
    expect(refused.body.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    const strangers = await allEntries(stranger.owner, {}, 200);
    const mine = new Set(whole.map((entry) => entry.id));
    expect(strangers.filter((entry) => mine.has(entry.id))).toEqual([]);
    const admin = await allEntries(stack.adminToken, filter, 200);
    expect(admin.map((entry) => entry.id)).toEqual(whole.map((entry) => entry.id));
  });

  test('ledgerEntries narrows by account, group kind, asset and time, and each narrowing is a subset', async () => {
    const whole = await allEntries(buyer.owner, { policyId: buyer.policy.policyId }, 200);
    const asset = `${rails.funding.network}|${rails.funding.token.toLowerCase()}`;
    const refunds = await allEntries(buyer.owner, { kind: 'REFUND', asset }, 2);
    expect(refunds).toHaveLength(4);
    expect(
      refunds.every((e) => e.groupKind === 'REFUND' && e.asset.chain === rails.funding.network),
    ).toBe(true);
    const account = refunds.find((e) => e.accountKind === 'REFUND_PAYABLE')!.accountKey;
    const payable = await allEntries(buyer.owner, { account }, 200);
    expect(payable.map((e) => e.amountAtomic).sort()).toEqual(['-50250', '50250']);
    const later = await allEntries(buyer.owner, { from: iso(Date.now() + 60_000) }, 200);
    expect(later).toEqual([]);
    const ids = new Set(whole.map((e) => e.id));
    expect([...refunds, ...payable].every((e) => ids.has(e.id))).toBe(true);
  });

  test('ledgerBalances sums the policy’s entries per account kind over the period; zero per asset', async () => {
    const query =
      'query ($filter: LedgerFilter) { ledgerBalances(filter: $filter) { kind netAtomic debitsAtomic creditsAtomic entryCount asset { id } } }';
    const filter = { policyId: buyer.policy.policyId, from: period.from, to: period.to };
    const answer = await graphql(stack.url, query, { filter }, buyer.owner);
    expect(answer.body.errors).toBeUndefined();
    const lines = answer.body.data.ledgerBalances as Array<Record<string, any>>;
    const entries = await allEntries(buyer.owner, filter, 200);
    expect(lines.reduce((n, line) => n + line.entryCount, 0)).toBe(entries.length);
    for (const asset of new Set(lines.map((line) => line.asset.id))) {
      const net = lines
        .filter((line) => line.asset.id === asset)
        .reduce((sum, line) => sum + BigInt(line.netAtomic), 0n);
      expect(net).toBe(0n);
    }
    const refunds = lines.find((line) => line.kind === 'REFUND_PAYABLE');
    expect(refunds).toMatchObject({ netAtomic: '0', debitsAtomic: FUNDING.toString() });
    const theirs = await graphql(stack.url, query, { filter: {} }, stranger.owner);
    expect(theirs.body.data.ledgerBalances).toEqual([]);
    const refused = await graphql(stack.url, query, { filter }, stranger.owner);
    expect(refused.body.errors?.[0].extensions?.code).toBe('FORBIDDEN');
  });

  test('GET /reports/ledger.csv is the same entries as CSV, page by page; another owner is refused', async () => {
    const filter = { policyId: buyer.policy.policyId };
    const entries = await allEntries(buyer.owner, filter, 200);
    const first = await fetch(
      `${stack.url}/reports/ledger.csv?policyId=${buyer.policy.policyId}&first=4`,
      { headers: { authorization: `Bearer ${buyer.owner}` } },
    );
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^text\/csv/);
    const cursor = first.headers.get('x-next-cursor');
    expect(cursor).not.toBeNull();
    const rest = await fetch(
      `${stack.url}/reports/ledger.csv?policyId=${buyer.policy.policyId}&first=200&after=${cursor}`,
      { headers: { authorization: `Bearer ${buyer.owner}` } },
    );
    expect(rest.headers.get('x-next-cursor')).toBeNull();
    const rows = (text: string) => text.split('\r\n').slice(1, -1);
    const header = (await first.clone().text()).split('\r\n')[0];
    const expected = csvDocument(
      header.split(','),
      entries.map((e) => [
        e.id,
        e.groupId,
        String(e.entryNo),
        e.createdAt,
        e.groupKind,
        e.accountKey,
        e.accountKind,
        e.asset.chain,
        e.asset.token,
        e.asset.symbol,
        String(e.asset.decimals),
        e.amountAtomic,
      ]),
    );
    expect([...rows(await first.text()), ...rows(await rest.text())]).toEqual(rows(expected));
    const theirs = await fetch(
      `${stack.url}/reports/ledger.csv?policyId=${buyer.policy.policyId}`,
      {
        headers: { authorization: `Bearer ${stranger.owner}` },
      },
    );
    expect(theirs.status).toBe(403);
    expect(await theirs.text()).not.toContain(entries[0].groupId);
    const bad = await fetch(`${stack.url}/reports/ledger.csv?kind=NOPE&from=soon`, {
      headers: { authorization: `Bearer ${buyer.owner}` },
    });
    expect(bad.status).toBe(400);
  });
});
