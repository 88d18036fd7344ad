// The public receipt of a consumer purchase, end to end on real anvil chains with the real devnet
// merchant and the official x402 client: a purchase through the gateway (create → fund → execute,
// the worker awake), then GET /consumer/receipt/:intentId without any credential. Its two payment
// legs are checked against the chains' Transfer logs (payer → funding treasury on eip155:196,
// settlement treasury → merchant on eip155:8453), its keys against the allow-list, its digest
// recomputed with the `canonicalize` package and viem's keccak256; while the purchase runs, every
// committed snapshot of the intent has the receipt its row builds (written in the same transaction).
import canonicalize from 'canonicalize';
import { type Hex, keccak256, toBytes } from 'viem';
import { buildConsumerReceipt } from '../../core/consumer/receipt';
import type { DevnetChains } from '../../devnet/chains';
import type { DomainsMerchant } from '../../devnet/merchants/domains/server';
import type { ChainPublicClient } from '../../platform/chain/clients';
import type { ConsumerRails } from '../../subgraphs/kit';
import {
  CONSUMER_INTENT_COLUMNS,
  type ConsumerIntentDbRow,
  fromRow,
} from '../../subgraphs/intent/consumer/store';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { graphql, type TestStack } from '../support/stack';
import { createIntent, fundAndExecute } from '../support/purchases';
import { transferIn } from '../support/transfers';

let devnet: DevnetChains;
let merchant: DomainsMerchant;
let rails: ConsumerRails;
let stack: TestStack;
let fundingChain: ChainPublicClient;
let settlementChain: ChainPublicClient;

let world: ConsumerWorld;

beforeAll(async () => {
  world = await startConsumerWorld();
  ({ devnet, merchant, rails, stack, fundingChain, settlementChain } = world);
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

/** DECISIONS "Receipts", written out again: each allow-listed object and its keys. */
const ALLOWED = {
  receipt: [
    'anchor',
    'capability',
    'createdAt',
    'fee',
    'integrity',
    'intentId',
    'paymentLegs',
    'policy',
    'providerAttested',
    'serviceVerified',
    'spread',
    'state',
    'updatedAt',
  ],
  policy: ['decision', 'policyHash', 'policyId', 'policyVersion'],
  providerAttested: ['attestedAt', 'fields', 'status'],
  serviceVerified: ['checkedAt', 'detail', 'method', 'source', 'verified'],
  paymentLegs: ['funding', 'settlement'],
  leg: ['amount', 'asset', 'chain', 'recipient', 'sender', 'txHash'],
  anchor: ['receiptId', 'state'],
  integrity: ['digest'],
};
const sortedKeys = (value: unknown): string[] => Object.keys(value as object).sort();

/** States a purchase may be in while nothing but the merchant has spoken on delivery. */
const UNVERIFIED = ['FUNDED', 'EXECUTION_QUEUED', 'PROVIDER_PAYMENT_PENDING', 'PROVIDER_PAID'];
const DELIVERED = ['DELIVERY_PENDING', 'DELIVERY_VERIFIED', 'COMPLETED'];

/** GET /consumer/receipt/:intentId with no credential at all. */
async function publicReceipt(intentId: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${stack.url}/consumer/receipt/${intentId}`);
  return { status: response.status, body: await response.json() };
}

function expectNotFound(answer: { status: number; body: any }): void {
  expect(answer.status).toBe(404);
  expect(sortedKeys(answer.body)).toEqual(
    expect.arrayContaining(['code', 'docsUrl', 'message', 'retryable']),
  );
  expect(answer.body).toMatchObject({
    code: 'RECEIPT_NOT_FOUND',
    retryable: false,
    docsUrl: expect.stringMatching(/errors\.md#receipt_not_found$/),
  });
}

/** One committed snapshot of the intent and its receipt (one statement: one snapshot). */
async function snapshot(intentId: string) {
  const result = await stack.db.pool.query<ConsumerIntentDbRow & { receipt: any; digest: any }>(
    `SELECT ${CONSUMER_INTENT_COLUMNS}, r.body AS receipt, r.digest
       FROM intent.consumer_intents i LEFT JOIN intent.consumer_receipts r USING (intent_id)
      WHERE i.intent_id = $1`,
    [intentId],
  );
  const row = result.rows[0]!;
  return { intent: fromRow(row), receipt: row.receipt, digest: row.digest as string | null };
}

function digestOf(receipt: Record<string, unknown>): Hex {
  const { integrity: _integrity, anchor: _anchor, ...covered } = receipt;
  return keccak256(toBytes(canonicalize(covered)!));
}

/** Samples snapshots until stopped: each funded one must hold the receipt its row builds. */
function watchSnapshots(intentId: string) {
  let running = true;
  const problems: string[] = [];
  const states = new Set<string>();
  let funded = 0;
  const check = async () => {
    const { intent, receipt, digest } = await snapshot(intentId);
    if (intent.funding === null) {
      if (receipt !== null) problems.push(`receipt before funding in ${intent.state}`);
      return;
    }
    funded += 1;
    states.add(intent.state);
    const built = buildConsumerReceipt(intent);
    if (JSON.stringify(canonicalize(receipt)) !== JSON.stringify(canonicalize(built)))
      problems.push(`${intent.state}: stored receipt is not what the committed row builds`);
    if (digest !== digestOf(receipt)) problems.push(`${intent.state}: digest does not recompute`);
  };
  const loop = (async () => {
    while (running) await check();
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await check();
      return { problems, states: [...states], funded };
    },
  };
}

async function intentState(who: TestConsumer, intentId: string): Promise<string> {
  const response = await fetch(`${stack.url}/consumer/intents/${intentId}`, {
    headers: { authorization: `Bearer ${who.session}` },
  });
  return ((await response.json()) as { intent: { state: string } }).intent.state;
}

async function delivered(who: TestConsumer, intentId: string): Promise<string> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const state = await intentState(who, intentId);
    if (DELIVERED.includes(state)) return state;
    if (['MANUAL_REVIEW', 'REFUNDED', 'BLOCKED', 'EXPIRED'].includes(state))
      throw new Error(`intent ended ${state}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`intent ${intentId} was never delivered`);
}

/** The one Transfer of `token` in the transaction `hash`. */
async function purchase(who: TestConsumer, domain: string) {
  const intentId = (await createIntent(world, who, domain)).intent.intentId as string;
  // Before funding there is nothing to publish.
  expectNotFound(await publicReceipt(intentId));
  const watch = watchSnapshots(intentId);
  await fundAndExecute(world, who, intentId);
  await delivered(who, intentId);
  return { intentId, watched: await watch.stop() };
}

test('a purchase’s public receipt: no credential, the allow-list exactly, both legs as the chains show them', async () => {
  const who = await newConsumer(stack, devnet, { mintAtomic: 10_000_000n });
  const domain = `receipt-${Date.now().toString(36)}.test`;
  const { intentId, watched } = await purchase(who, domain);

  // Every committed snapshot from funding on held the receipt its row builds.
  expect(watched.problems).toEqual([]);
  expect(watched.funded).toBeGreaterThanOrEqual(1);

  const answer = await publicReceipt(intentId);
  expect(answer.status).toBe(200);
  const receipt = answer.body;
  // Exactly as stored.
  const stored = await stack.db.pool.query(
    'SELECT body FROM intent.consumer_receipts WHERE intent_id = $1',
    [intentId],
  );
  expect(receipt).toEqual(stored.rows[0].body);

  expect(sortedKeys(receipt)).toEqual(ALLOWED.receipt);
  expect(sortedKeys(receipt.policy)).toEqual(ALLOWED.policy);
  expect(sortedKeys(receipt.providerAttested)).toEqual(ALLOWED.providerAttested);
  expect(sortedKeys(receipt.paymentLegs)).toEqual(ALLOWED.paymentLegs);
  expect(sortedKeys(receipt.paymentLegs.funding)).toEqual(ALLOWED.leg);
  expect(sortedKeys(receipt.paymentLegs.settlement)).toEqual(ALLOWED.leg);
  expect(sortedKeys(receipt.anchor)).toEqual(ALLOWED.anchor);
  expect(sortedKeys(receipt.integrity)).toEqual(ALLOWED.integrity);
  const text = JSON.stringify(receipt);
  for (const secret of [
    who.session,
    who.owner,
    '"params"',
    'correlationId',
    'sessionId',
    'pollRef',
  ])
    expect(text).not.toContain(secret);

  expect(receipt).toMatchObject({
    intentId,
    capability: 'domains.check',
    policy: { policyId: who.policy.policyId, decision: 'APPROVED', policyVersion: 1 },
    fee: '0',
    spread: '250',
    providerAttested: { status: 'ATTESTED', fields: { domain, available: true } },
    anchor: { state: 'PENDING', receiptId: expect.stringMatching(/^0x[0-9a-f]{64}$/) },
  });
  // The merchant's word and the service's own finding are two objects; the finding is null
  // until delivery is verified (issue #18 item 1), then exactly its five keys.
  if (receipt.serviceVerified === null)
    expect([...UNVERIFIED, 'DELIVERY_PENDING']).toContain(receipt.state);
  else expect(sortedKeys(receipt.serviceVerified)).toEqual(ALLOWED.serviceVerified);

  // Funding leg: the payer's Transfer to the funding treasury on eip155:196.
  const funding = receipt.paymentLegs.funding;
  expect(funding).toMatchObject({
    chain: rails.funding.network,
    asset: rails.funding.token.toLowerCase(),
    amount: '50250',
    sender: who.account.address.toLowerCase(),
    recipient: rails.funding.treasury.toLowerCase(),
  });
  expect(await transferIn(fundingChain, rails.funding.token, funding.txHash)).toEqual({
    from: funding.sender,
    to: funding.recipient,
    value: '50250',
  });
  // Settlement leg: the settlement treasury's Transfer to the merchant on eip155:8453.
  const settlement = receipt.paymentLegs.settlement;
  expect(settlement).toMatchObject({
    chain: rails.settlement.network,
    asset: rails.settlement.token.toLowerCase(),
    amount: '50000',
    sender: rails.settlement.treasury.toLowerCase(),
    recipient: merchant.payTo.toLowerCase(),
  });
  expect(await transferIn(settlementChain, rails.settlement.token, settlement.txHash)).toEqual({
    from: settlement.sender,
    to: settlement.recipient,
    value: '50000',
  });

  // The digest, outside the service: JCS (the canonicalize package) and keccak256 (viem).
  expect(receipt.integrity.digest).toBe(digestOf(receipt));

  // The same body through GraphQL: public consumerReceipt, and ConsumerIntent.receipt for the owner.
  const open = await graphql(stack.url, 'query($id: ID!) { consumerReceipt(intentId: $id) }', {
    id: intentId,
  });
  expect(open.body.data.consumerReceipt).toEqual(receipt);
  const owned = await graphql(
    stack.url,
    'query($id: ID!) { consumerIntent(intentId: $id) { state receipt } }',
    { id: intentId },
    who.owner,
  );
  expect(owned.body.data.consumerIntent.receipt).toEqual(receipt);
  // Another owner does not see the intent (nor, so, its receipt field); the public route still answers.
  const stranger = await newConsumer(stack, devnet);
  const theirs = await graphql(
    stack.url,
    'query($id: ID!) { consumerIntent(intentId: $id) { receipt } }',
    { id: intentId },
    stranger.owner,
  );
  expect(theirs.body.data.consumerIntent).toBeNull();
});

test('unknown and malformed ids: 404 RECEIPT_NOT_FOUND with the error body, no credential asked', async () => {
  expectNotFound(await publicReceipt('ci_' + '0'.repeat(24)));
  expectNotFound(await publicReceipt('ci_NOT-AN-ID'));
  expectNotFound(await publicReceipt('0x' + 'ab'.repeat(32)));
  const open = await graphql(stack.url, 'query { consumerReceipt(intentId: "ci_x") }');
  expect(open.body.data).toEqual({ consumerReceipt: null });
});
