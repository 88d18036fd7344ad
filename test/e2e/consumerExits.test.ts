// Every state where money waits has an exit (issue #27 items 4 and 5, DECISIONS "Human exits"),
// end to end through the gateway: real anvil chains, the real devnet domains merchant with its
// fault switches, the devnet RDAP registry, the worker awake on NOTIFY. A payment resolved PAID
// from the chain still needs its delivery (the registry answers for domains.check, else a human);
// a paid purchase under review (an invalid merchant answer, a delivery the registry cannot
// confirm) is resolved by an operator with ACCEPT_DELIVERY or REFUND, each with its ledger
// postings; every outcome that the merchant did not deliver counts against the vendor; the public
// receipt shows `resolution {outcome, resolvedAt}` and never who or the evidence.
import type { Address } from 'viem';
import type { DevnetChains } from '../../devnet/chains';
import type { DomainsMerchant } from '../../devnet/merchants/domains/server';
import type { DevnetRdapRegistry } from '../../devnet/rdap/registry';
import { readTokenBalance } from '../../platform/chain/tokens';
import type { ConsumerRails } from '../../subgraphs/kit';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { intentRow, purchase, untilIntent } from '../support/purchases';
import { postJson, type TestStack } from '../support/stack';

const PROVIDER = 'spendctl-domains';

let world: ConsumerWorld;
let devnet: DevnetChains;
let merchant: DomainsMerchant;
let registry: DevnetRdapRegistry;
let rails: ConsumerRails;
let stack: TestStack;
let buyer: TestConsumer;
let sequence = 0;

beforeAll(async () => {
  world = await startConsumerWorld({
    rdap: true,
    // One failed registry check is enough to hand a delivery to a human here.
    execution: { deliveryRetry: { maxAttempts: 1, backoffMs: [1_000] } },
  });
  ({ devnet, merchant, rails, stack } = world);
  registry = world.registry!;
  buyer = await newConsumer(stack, devnet, {
    mintAtomic: 10_000_000n,
    // This suite's failures lower the merchant's score; rule 7 is trustScores.test.ts's subject.
    policy: {
      escalateAbove: '5.00',
      vendorRisk: { minScore: 0, onBelow: 'ESCALATE', onUnavailable: 'ALLOW' },
    },
  });
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

afterEach(() => {
  merchant.resetFaults();
  registry.clearFaults();
});

const unique = (label: string) => `${label}-${(sequence += 1)}-${Date.now().toString(36)}.test`;

function resolve(intentId: string, body: unknown, token = stack.adminToken) {
  return postJson(stack.url, `/consumer/intents/${intentId}/resolve`, body, token);
}

async function ledgerKindsOf(intentId: string): Promise<string[]> {
  const row = await intentRow(world, intentId);
  const groups = await stack.db.pool.query<{ kind: string }>(
    'SELECT kind FROM ledger.groups WHERE intent_ref = $1 OR group_id = $2 ORDER BY seq',
    [intentId, (row.funding as { groupId?: string } | null)?.groupId ?? null],
  );
  return groups.rows.map((group) => group.kind);
}

async function expectTrialBalanceZero(): Promise<void> {
  const result = await stack.db.pool.query<{ asset: string; net: string }>(
    'SELECT asset, net::text AS net FROM ledger.trial_balance',
  );
  expect(result.rows.length).toBeGreaterThanOrEqual(2);
  for (const row of result.rows) expect(row).toEqual({ asset: row.asset, net: '0' });
}

async function vendorFailed(): Promise<number> {
  const result = await stack.db.pool.query<{ failed: number }>(
    'SELECT failed FROM intent.trust_vendor_outcomes WHERE provider = $1',
    [PROVIDER],
  );
  return result.rows[0]?.failed ?? 0;
}

async function statesOf(intentId: string): Promise<string[]> {
  const events = await stack.db.pool.query<{ to_state: string }>(
    'SELECT to_state FROM intent.consumer_intent_events WHERE intent_id = $1 ORDER BY event_id',
    [intentId],
  );
  return events.rows.map((event) => event.to_state);
}

async function publicReceipt(intentId: string): Promise<Record<string, any>> {
  const response = await fetch(`${stack.url}/consumer/receipt/${intentId}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, any>;
}

function buyerBalance(): Promise<bigint> {
  return readTokenBalance(
    world.fundingChain,
    rails.funding.token,
    buyer.account.address as Address,
  );
}

async function ambiguousPurchase(domain: string): Promise<string> {
  const intentId = await purchase(world, buyer, domain, { faults: { dropAfterSettle: true } });
  const parked = await untilIntent(world, intentId, (row) => row.state === 'MANUAL_REVIEW');
  expect(parked.stateReason).toMatch(/^PAYMENT_AMBIGUOUS/);
  merchant.resetFaults();
  return intentId;
}

test('resolved PAID is not delivered: the registry answers for domains.check, COMPLETED as PROVIDER_DELIVERED_NOTHING, counted against the vendor', async () => {
  const domain = unique('lost');
  const intentId = await ambiguousPurchase(domain);
  const failedBefore = await vendorFailed();
  const resolved = await resolve(intentId, {
    outcome: 'PAID',
    evidence: 'AuthorizationUsed on 8453',
  });
  expect(resolved.status).toBe(200);
  expect(resolved.body.intent.state).toBe('DELIVERY_PENDING');
  const done = await untilIntent(world, intentId, (row) => row.state !== 'DELIVERY_PENDING');
  expect(done.state).toBe('COMPLETED');
  expect(done.stateReason).toMatch(/^PROVIDER_DELIVERED_NOTHING: /);
  expect(done.providerAttested).toBeNull();
  expect(done.serviceVerified).toMatchObject({
    verified: false,
    method: 'RDAP',
    source: `${registry.url}/domain/${domain}`,
    detail: expect.stringMatching(
      /^not verified: the merchant was paid and delivered no answer; the registry answers instead: .* is available/,
    ),
  });
  expect(registry.requests.map((request) => request.path)).toContain(`/domain/${domain}`);
  expect((await statesOf(intentId)).slice(-4)).toEqual([
    'MANUAL_REVIEW',
    'DELIVERY_PENDING',
    'DELIVERY_VERIFIED',
    'COMPLETED',
  ]);
  expect(await ledgerKindsOf(intentId)).toEqual([
    'FUNDING',
    'SUSPENSE_MOVE',
    'SUSPENSE_MOVE',
    'RECOGNITION',
    'RECOGNITION',
  ]);
  expect(await vendorFailed()).toBe(failedBefore + 1);
  // The public receipt says what was decided and when, never who nor the evidence.
  const receipt = await publicReceipt(intentId);
  expect(receipt.resolution).toEqual({ outcome: 'PAID', resolvedAt: expect.any(String) });
  expect(JSON.stringify(receipt)).not.toMatch(/resolvedBy|evidence|AuthorizationUsed on 8453/);
  await expectTrialBalanceZero();
});

test('resolved PAID and nothing verifiable (registry down): to a human, who refunds; the recognition is reversed, the merchant payment borne, the funding returned on chain', async () => {
  registry.setFaults({ answer: 'HTTP_500' });
  const before = await buyerBalance();
  const intentId = await ambiguousPurchase(unique('dark'));
  const failedBefore = await vendorFailed();
  expect((await resolve(intentId, { outcome: 'PAID', evidence: 'chain' })).status).toBe(200);
  const review = await untilIntent(world, intentId, (row) => row.state === 'MANUAL_REVIEW');
  expect(review.stateReason).toMatch(/^DELIVERY_UNVERIFIED: /);
  expect(review.serviceVerified).toMatchObject({ verified: false });
  expect(await vendorFailed()).toBe(failedBefore + 1);
  // A paid purchase takes ACCEPT_DELIVERY or REFUND, not a payment outcome again.
  const wrong = await resolve(intentId, { outcome: 'NOT_PAID', evidence: 'x' });
  expect(wrong.status).toBe(409);
  expect(wrong.body.code).toBe('CONSUMER_INTENT_NOT_RESOLVABLE');
  // Only an admin resolves.
  expect(
    (await resolve(intentId, { outcome: 'REFUND', evidence: 'x' }, buyer.session)).status,
  ).toBeGreaterThanOrEqual(401);
  const refunded = await resolve(intentId, {
    outcome: 'REFUND',
    evidence: 'registry down for a day; consumer asked for the money back',
  });
  expect(refunded.status).toBe(200);
  expect(refunded.body.intent.state).toBe('REFUND_PENDING');
  const done = await untilIntent(world, intentId, (row) => row.state === 'REFUNDED');
  expect(done.resolution).toMatchObject({
    outcome: 'REFUND',
    evidence: 'registry down for a day; consumer asked for the money back',
    previous: { outcome: 'PAID' },
  });
  expect(await buyerBalance()).toBe(before);
  expect(await ledgerKindsOf(intentId)).toEqual([
    'FUNDING',
    'SUSPENSE_MOVE',
    'SUSPENSE_MOVE',
    'RECOGNITION',
    'RECOGNITION',
    'REVERSAL',
    'REVERSAL',
    'RECOGNITION',
    'REFUND',
    'REFUND',
  ]);
  // Still one failure against the vendor (moved, not counted twice).
  expect(await vendorFailed()).toBe(failedBefore + 1);
  expect((await statesOf(intentId)).slice(-2)).toEqual(['REFUND_PENDING', 'REFUNDED']);
  expect((await publicReceipt(intentId)).resolution).toEqual({
    outcome: 'REFUND',
    resolvedAt: expect.any(String),
  });
  await expectTrialBalanceZero();
});

test('an invalid merchant answer: MANUAL_REVIEW PROVIDER_ANSWER_INVALID, resolved ACCEPT_DELIVERY → COMPLETED with the recognition, counted against the vendor', async () => {
  const intentId = await purchase(world, buyer, unique('garbled'), {
    faults: { invalidAnswer: true },
  });
  const review = await untilIntent(world, intentId, (row) => row.state === 'MANUAL_REVIEW');
  expect(review.stateReason).toMatch(/^PROVIDER_ANSWER_INVALID/);
  expect(await ledgerKindsOf(intentId)).toEqual(['FUNDING', 'SETTLEMENT']);
  const failedBefore = await vendorFailed();
  const paid = await resolve(intentId, { outcome: 'PAID', evidence: 'x' });
  expect(paid.status).toBe(409);
  expect(paid.body.code).toBe('CONSUMER_INTENT_NOT_RESOLVABLE');
  const bad = await resolve(intentId, { outcome: 'MAYBE', evidence: 'x' });
  expect(bad.status).toBe(400);
  const accepted = await resolve(intentId, {
    outcome: 'ACCEPT_DELIVERY',
    evidence: 'merchant sent the answer by email',
  });
  expect(accepted.status).toBe(200);
  expect(accepted.body.intent).toMatchObject({
    state: 'COMPLETED',
    resolution: { outcome: 'ACCEPT_DELIVERY' },
  });
  expect(await ledgerKindsOf(intentId)).toEqual([
    'FUNDING',
    'SETTLEMENT',
    'RECOGNITION',
    'RECOGNITION',
  ]);
  expect(await vendorFailed()).toBe(failedBefore + 1);
  expect((await publicReceipt(intentId)).resolution).toEqual({
    outcome: 'ACCEPT_DELIVERY',
    resolvedAt: expect.any(String),
  });
  // Once out of review, nothing resolves it again.
  const again = await resolve(intentId, { outcome: 'REFUND', evidence: 'x' });
  expect(again.status).toBe(409);
  await expectTrialBalanceZero();
});

test('a contradicted delivery refunded by an operator: REFUNDED on chain, the ledger balanced', async () => {
  const before = await buyerBalance();
  const intentId = await purchase(world, buyer, 'example.test', {
    faults: { lieAboutAvailability: true },
  });
  const review = await untilIntent(world, intentId, (row) => row.state === 'MANUAL_REVIEW');
  expect(review.stateReason).toMatch(/^DELIVERY_CONTRADICTED/);
  const refunded = await resolve(intentId, { outcome: 'REFUND', evidence: 'registry says taken' });
  expect(refunded.status).toBe(200);
  await untilIntent(world, intentId, (row) => row.state === 'REFUNDED');
  expect(await buyerBalance()).toBe(before);
  const row = await intentRow(world, intentId);
  // What the service found stays what it found.
  expect(row.serviceVerified).toMatchObject({ verified: false });
  await expectTrialBalanceZero();
});
