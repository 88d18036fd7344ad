// The counted outcomes against a real database (migration 0020): intent.trust_outcome_of puts a
// purchase in one bucket by its final outcome (or none), and the trigger on consumer intents moves
// it between buckets as it changes, for the provider and for the buyer alike; the preflight
// window's array of counters reads back as the same counts.
import { newConsumerIntentId } from '../../../core/canon/ids';
import type { ConsumerIntentState } from '../../../core/consumer/lifecycle';
import { createTestDatabase, type TestDatabase } from '../../../platform/db/testDb';
import { insertConsumerIntent } from '../consumer/store';
import { transitionConsumerIntent } from '../consumer/transition';
import { buyerOutcomes, outcomesOfWindow, vendorOutcomes, NO_HISTORY } from './outcomes';
import { vendorScoreOfWindow } from './score';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const WALLET = '0x' + 'cd'.repeat(20);
const POLICY = '777';
const t0 = new Date('2026-11-24T10:00:00Z');
const SETTLEMENT = { requestLeftAt: t0.toISOString() };
const VERIFIED = { verified: true, method: 'RDAP', source: 'x', checkedAt: 'x', detail: 'x' };
const CONTRADICTED = { ...VERIFIED, verified: false };

async function outcomeOf(
  state: string,
  serviceVerified: unknown,
  settlement: unknown,
  resolution: unknown,
): Promise<string | null> {
  const result = await db.pool.query<{ o: string | null }>(
    'SELECT intent.trust_outcome_of($1, $2::jsonb, $3::jsonb, $4::jsonb) AS o',
    [state, serviceVerified, settlement, resolution].map((value, index) =>
      index === 0 || value === null ? value : JSON.stringify(value),
    ),
  );
  return result.rows[0]!.o;
}

test('intent.trust_outcome_of: one bucket by the final outcome, none while open or never at the provider', async () => {
  const cases: Array<[string, unknown, unknown, unknown, string | null]> = [
    ['COMPLETED', VERIFIED, SETTLEMENT, null, 'verified'],
    ['DELIVERY_VERIFIED', VERIFIED, SETTLEMENT, null, 'verified'],
    ['MANUAL_REVIEW', CONTRADICTED, SETTLEMENT, null, 'failed'],
    ['REFUNDED', CONTRADICTED, SETTLEMENT, null, 'failed'],
    // Still being retried: the registry has not had its last word.
    ['DELIVERY_PENDING', CONTRADICTED, SETTLEMENT, null, null],
    ['FAILED_AFTER_PAYMENT', null, SETTLEMENT, null, 'failed'],
    ['REFUND_PENDING', null, SETTLEMENT, { outcome: 'NOT_PAID' }, 'ambiguous'],
    ['REFUNDED', null, SETTLEMENT, null, 'refunds'],
    // An ambiguous payment not resolved yet, and an earlier verification now under review.
    ['MANUAL_REVIEW', null, SETTLEMENT, { chainFinding: { status: 'OPEN' } }, null],
    ['MANUAL_REVIEW', VERIFIED, SETTLEMENT, null, null],
    // Never reached the provider.
    ['REFUNDED', null, null, null, null],
    // Signed, then stopped before the paid request left (a crash of the service, not the merchant).
    ['REFUNDED', null, { signedAt: t0.toISOString() }, null, null],
    ['COMPLETED', VERIFIED, { txHash: '0x01' }, null, 'verified'],
    ['BLOCKED', null, null, null, null],
    ['EXPIRED', null, null, null, null],
    ['PROVIDER_PAID', null, SETTLEMENT, null, null],
    // Issue #27: paid and completed without the merchant's delivery verified counts against it
    // (resolved PAID from the chain, or accepted by an operator over an invalid answer).
    ['COMPLETED', null, SETTLEMENT, { outcome: 'PAID' }, 'failed'],
    ['COMPLETED', null, SETTLEMENT, { outcome: 'ACCEPT_DELIVERY' }, 'failed'],
    ['COMPLETED', CONTRADICTED, SETTLEMENT, { outcome: 'ACCEPT_DELIVERY' }, 'failed'],
    // Resolved PAID and still being checked: open.
    ['DELIVERY_PENDING', null, SETTLEMENT, { outcome: 'PAID' }, null],
    ['REFUNDED', null, SETTLEMENT, { outcome: 'REFUND' }, 'refunds'],
  ];
  for (const [state, serviceVerified, settlement, resolution, bucket] of cases)
    expect({
      state,
      serviceVerified,
      resolution,
      bucket: await outcomeOf(state, serviceVerified, settlement, resolution),
    }).toEqual({ state, serviceVerified, resolution, bucket });
});

/** A purchase walked to DELIVERY_PENDING with its merchant leg begun; returns its id and clock. */
async function paidPurchase(provider: string): Promise<{ intentId: string; at: () => Date }> {
  let ms = t0.getTime();
  const at = () => new Date((ms += 1000));
  const { row } = await insertConsumerIntent(db.pool, {
    intentId: newConsumerIntentId(),
    policyId: POLICY,
    wallet: WALLET,
    capability: 'domains.check',
    provider,
    category: 'domains',
    params: { domain: 'example.test' },
    idempotencyKey: null,
    now: t0,
  });
  const path: ConsumerIntentState[] = [
    'QUOTED',
    'POLICY_CHECKING',
    'APPROVED',
    'AWAITING_FUNDING',
    'FUNDED',
    'EXECUTION_QUEUED',
    'PROVIDER_PAYMENT_PENDING',
    'PROVIDER_PAID',
    'PROVIDER_ACKNOWLEDGED',
    'DELIVERY_PENDING',
  ];
  let from: ConsumerIntentState = 'CREATED';
  for (const to of path) {
    const changes = to === 'PROVIDER_PAYMENT_PENDING' ? { settlement: SETTLEMENT } : {};
    expect(
      await transitionConsumerIntent(db.pool, row.intentId, from, to, { now: at(), changes }),
    ).not.toBeNull();
    from = to;
  }
  return { intentId: row.intentId, at };
}

async function move(
  purchase: { intentId: string; at: () => Date },
  from: ConsumerIntentState,
  to: ConsumerIntentState,
  changes: Record<string, unknown> = {},
): Promise<void> {
  expect(
    await transitionConsumerIntent(db.pool, purchase.intentId, from, to, {
      now: purchase.at(),
      changes,
    }),
  ).not.toBeNull();
}

test('the trigger moves each purchase between buckets as it changes, for the vendor and the buyer', async () => {
  const provider = 'trigger.example';
  expect(await vendorOutcomes(db.pool, provider)).toEqual(NO_HISTORY);

  const good = await paidPurchase(provider);
  // Open: nothing counted yet.
  expect((await vendorOutcomes(db.pool, provider)).verified).toBe(0);
  await move(good, 'DELIVERY_PENDING', 'DELIVERY_VERIFIED', { serviceVerified: VERIFIED });
  await move(good, 'DELIVERY_VERIFIED', 'COMPLETED');

  const lie = await paidPurchase(provider);
  await move(lie, 'DELIVERY_PENDING', 'MANUAL_REVIEW', { serviceVerified: CONTRADICTED });
  await move(lie, 'MANUAL_REVIEW', 'REFUND_PENDING');

  const failed = await paidPurchase(provider);
  await move(failed, 'DELIVERY_PENDING', 'FAILED_AFTER_PAYMENT');
  expect((await vendorOutcomes(db.pool, provider)).failed).toBe(2);
  await move(failed, 'FAILED_AFTER_PAYMENT', 'REFUND_PENDING');

  const reviewed = await paidPurchase(provider);
  await move(reviewed, 'DELIVERY_PENDING', 'DELIVERY_VERIFIED', { serviceVerified: VERIFIED });
  expect((await vendorOutcomes(db.pool, provider)).verified).toBe(2);
  // Back under review: it leaves its bucket until a final outcome.
  await move(reviewed, 'DELIVERY_VERIFIED', 'MANUAL_REVIEW');

  const expected = { verified: 1, failed: 1, disputed: 0, refunds: 1, ambiguous: 0 };
  const vendor = await vendorOutcomes(db.pool, provider);
  expect(vendor).toMatchObject(expected);
  expect(vendor.firstSeenAt!.getTime()).toBeGreaterThan(t0.getTime());
  // The buyer: the SpendIntent's agentId, or consumer:<wallet> before there is one.
  expect(await buyerOutcomes(db.pool, POLICY, `consumer:${WALLET}`)).toMatchObject(expected);
  expect(await buyerOutcomes(db.pool, '778', `consumer:${WALLET}`)).toEqual(NO_HISTORY);
});

test('the preflight window reads the same counters, and too little history is no score', async () => {
  const row = await db.pool.query<{ vendor_outcomes: any }>(
    `SELECT json_build_array(verified, failed, disputed, refunds, ambiguous,
                             floor(extract(epoch FROM first_seen_at) * 1000)::bigint) AS vendor_outcomes
       FROM intent.trust_vendor_outcomes WHERE provider = 'trigger.example'`,
  );
  const raw = row.rows[0]!.vendor_outcomes;
  expect(outcomesOfWindow(raw)).toEqual(await vendorOutcomes(db.pool, 'trigger.example'));
  expect(vendorScoreOfWindow(raw)).toBeNull();
  expect(vendorScoreOfWindow(null)).toBeNull();
  expect(vendorScoreOfWindow([9, 1, 0, 0, 0, t0.getTime()])).toBe(59);
});
