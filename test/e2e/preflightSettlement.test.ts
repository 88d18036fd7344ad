// Settling reservations: consume (settled spend plus its ledger postings in one transaction) and
// release, both idempotent, seen through get_ledger and the budget rule.
import {
  NOW_MS,
  TOKEN,
  freshWireIntent,
  policyDocument,
} from '../../core/test-support/spend-fixtures';
import { accountId, assetId } from '../../subgraphs/ledger';
import { registerAsset } from '../../subgraphs/ledger';
import {
  consumeReservation,
  releaseReservation,
  type ReservationPosting,
} from '../../subgraphs/intent';
import { startTestStack, type TestStack, postJson } from '../support/stack';

const OWNER = '0x1111111111111111111111111111111111111111';
const ASSET = assetId('eip155:196', TOKEN);
const now = new Date(NOW_MS);
let stack: TestStack;
let policy: { policyId: string; policyHash: string };

function post(path: string, body: unknown, token?: string): Promise<{ status: number; body: any }> {
  return postJson(stack.url, path, body, token);
}

async function approve(amount = '50000'): Promise<any> {
  const intent = freshWireIntent(policy, NOW_MS, { amount });
  return (await post('/preflight_payment', { policyId: policy.policyId, intent })).body;
}

function funding(amount: bigint, key: string, balanced = true): ReservationPosting {
  return {
    kind: 'FUNDING',
    asset: ASSET,
    entries: [
      { account: accountId('TREASURY', ASSET, 'float'), amountAtomic: amount },
      {
        account: accountId('USER_OBLIGATION', ASSET, policy.policyId),
        amountAtomic: balanced ? -amount : -amount + 1n,
      },
    ],
    idempotencyKey: key,
  };
}

beforeAll(async () => {
  stack = await startTestStack({ now: () => now });
  await registerAsset(stack.db.pool, {
    chain: 'eip155:196',
    token: TOKEN,
    symbol: 'USDT0',
    decimals: 6,
  });
  const budget = '0.10';
  const created = await post(
    '/create_spend_policy',
    {
      policy: policyDocument({
        owner: OWNER,
        dailyBudget: budget,
        perCallCap: budget,
        hardCap: budget,
        escalateAbove: budget,
      }),
    },
    stack.adminToken,
  );
  policy = { policyId: created.body.policyId, policyHash: created.body.policyHash };
});

afterAll(async () => {
  await stack?.stop();
});

test('consume posts the ledger groups with the reservation, once; release frees the budget, once', async () => {
  const first = await approve();
  const reservationId = first.reservation.reservationId;
  const consumed = await consumeReservation(
    stack.db.pool,
    reservationId,
    [funding(50_000n, `funding:${reservationId}`)],
    () => now,
  );
  expect(consumed).toMatchObject({
    state: 'CONSUMED',
    amountAtomic: '50000',
    groupIds: [expect.stringMatching(/^lg_[0-9a-f]{24}$/)],
  });
  expect(
    await consumeReservation(
      stack.db.pool,
      reservationId,
      [funding(50_000n, `funding:${reservationId}`)],
      () => now,
    ),
  ).toEqual(consumed);
  const groups = await stack.db.pool.query(
    'SELECT count(*)::int AS n FROM ledger.groups WHERE intent_ref = $1',
    [first.intentHash],
  );
  expect(groups.rows[0].n).toBe(1);
  await expect(releaseReservation(stack.db.pool, reservationId, () => now)).rejects.toMatchObject({
    code: 'ILLEGAL_STATE_TRANSITION',
  });

  const ledger = await post('/get_ledger', { policyId: policy.policyId }, stack.adminToken);
  expect(ledger.body).toMatchObject({
    settledTodayAtomic: '50000',
    reservedTodayAtomic: '0',
    remainingBudgetAtomic: '50000',
  });

  const second = await approve();
  expect(second.decision).toBe('APPROVED');
  expect((await approve()).decision).toBe('BLOCKED_BUDGET');
  const released = await releaseReservation(
    stack.db.pool,
    second.reservation.reservationId,
    () => now,
  );
  expect(released.state).toBe('RELEASED');
  expect(
    await releaseReservation(stack.db.pool, second.reservation.reservationId, () => now),
  ).toEqual(released);
  await expect(
    consumeReservation(stack.db.pool, second.reservation.reservationId, [], () => now),
  ).rejects.toMatchObject({ code: 'ILLEGAL_STATE_TRANSITION' });
  expect((await approve()).decision).toBe('APPROVED');
});

test('a refused posting rolls the consumption back: the reservation stays ACTIVE', async () => {
  const ledger = await post('/get_ledger', { policyId: policy.policyId }, stack.adminToken);
  expect(ledger.body.remainingBudgetAtomic).toBe('0');
  const active = await stack.db.pool.query(
    `SELECT reservation_id FROM intent.reservations WHERE policy_id = $1 AND state = 'ACTIVE'`,
    [policy.policyId],
  );
  const reservationId = active.rows[0].reservation_id;
  await expect(
    consumeReservation(
      stack.db.pool,
      reservationId,
      [funding(50_000n, `bad:${reservationId}`, false)],
      () => now,
    ),
  ).rejects.toMatchObject({
    code: 'LEDGER_GROUP_UNBALANCED',
  });
  const after = await stack.db.pool.query(
    'SELECT state FROM intent.reservations WHERE reservation_id = $1',
    [reservationId],
  );
  expect(after.rows[0].state).toBe('ACTIVE');
});
