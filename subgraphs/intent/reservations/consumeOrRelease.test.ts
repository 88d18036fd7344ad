// Consuming a reservation on a real database (migration 0009): PostgreSQL itself refuses anything
// but exactly one ledger group in the reservation's asset moving at most what it reserved, and
// nothing of a refused consumption is posted; a partial settlement counts only what it moved.
// The TypeScript wrapper checks none of this; every refusal below carries PostgreSQL's SQLSTATE.
import { NOW_MS } from '../../../core/test-support/spend-fixtures';
import { createTestDatabase, type TestDatabase } from '../../../platform/db/testDb';
import { accountId, assetId } from '../../ledger';
import { registerAsset } from '../../ledger';
import {
  consumeReservation,
  releaseReservation,
  type ReservationPosting,
} from './consumeOrRelease';
import {
  currentPolicy,
  FIXTURE_ASSET,
  fundingPosting,
  intentTestKit,
  preflightPayment,
  readToolWindow,
  registerFixtureAsset,
  type CreatedPolicy,
  type IntentTestKit,
} from '../test-support';

let db: TestDatabase;
let kit: IntentTestKit;
const clock = () => new Date(NOW_MS);

beforeAll(async () => {
  db = await createTestDatabase();
  kit = intentTestKit(db, () => NOW_MS);
  await registerFixtureAsset(db.pool);
});

afterAll(async () => {
  await db?.drop();
});

/** A policy with a 1.00 budget and one approved 0.10 reservation. */
async function reserved(
  amount = '100000',
): Promise<{ policy: CreatedPolicy; reservationId: string; intentHash: string }> {
  const policy = await kit.newPolicy({
    dailyBudget: '1.00',
    perCallCap: '1.00',
    hardCap: '1.00',
    escalateAbove: '1.00',
  });
  const answer = await preflightPayment(
    kit.ctx,
    policy.policyId,
    kit.intentFor(policy, { amount }),
    null,
  );
  expect(answer.decision).toBe('APPROVED');
  return {
    policy,
    reservationId: (answer.reservation as { reservationId: string }).reservationId,
    intentHash: answer.intentHash as string,
  };
}

async function facts(reservationId: string, intentHash: string) {
  const reservation = await db.pool.query(
    'SELECT state, settled_amount::text AS settled, settled_group_id FROM intent.reservations WHERE reservation_id = $1',
    [reservationId],
  );
  const groups = await db.pool.query(
    'SELECT count(*)::int AS n FROM ledger.groups WHERE intent_ref = $1',
    [intentHash],
  );
  return { ...reservation.rows[0], groups: groups.rows[0].n };
}

const refusedByPostgres = (sqlstate: string, code: string) => ({ code, details: { sqlstate } });

describe('consume_reservation refuses, in PostgreSQL, a settlement that does not fit', () => {
  it('no group: the reservation stays ACTIVE and nothing is posted', async () => {
    const { reservationId, intentHash } = await reserved();
    await expect(consumeReservation(db.pool, reservationId, [], clock)).rejects.toMatchObject(
      refusedByPostgres('IN003', 'RESERVATION_SETTLEMENT_INVALID'),
    );
    expect(await facts(reservationId, intentHash)).toEqual({
      state: 'ACTIVE',
      settled: null,
      settled_group_id: null,
      groups: 0,
    });
  });

  it('two groups, even each within the reservation', async () => {
    const { policy, reservationId, intentHash } = await reserved();
    const two = [
      fundingPosting(policy.policyId, 50_000n, `a:${reservationId}`),
      fundingPosting(policy.policyId, 50_000n, `b:${reservationId}`),
    ];
    await expect(consumeReservation(db.pool, reservationId, two, clock)).rejects.toMatchObject(
      refusedByPostgres('IN003', 'RESERVATION_SETTLEMENT_INVALID'),
    );
    expect(await facts(reservationId, intentHash)).toEqual({
      state: 'ACTIVE',
      settled: null,
      settled_group_id: null,
      groups: 0,
    });
  });

  it('a group in another asset', async () => {
    const { policy, reservationId, intentHash } = await reserved();
    const usdc = assetId('eip155:8453', '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913');
    await registerAsset(db.pool, {
      chain: 'eip155:8453',
      token: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
      symbol: 'USDC',
      decimals: 6,
    });
    await expect(
      consumeReservation(
        db.pool,
        reservationId,
        [fundingPosting(policy.policyId, 100_000n, `usdc:${reservationId}`, usdc)],
        clock,
      ),
    ).rejects.toMatchObject(refusedByPostgres('IN003', 'RESERVATION_SETTLEMENT_INVALID'));
    expect(await facts(reservationId, intentHash)).toEqual({
      state: 'ACTIVE',
      settled: null,
      settled_group_id: null,
      groups: 0,
    });
  });

  it('more than reserved: a 0.10 reservation with a 5.00 SETTLEMENT', async () => {
    const { reservationId, intentHash } = await reserved('100000');
    const settlement: ReservationPosting = {
      kind: 'SETTLEMENT',
      asset: FIXTURE_ASSET,
      entries: [
        {
          account: accountId('PROVIDER_SETTLEMENT', FIXTURE_ASSET, 'api.vendor.example'),
          amountAtomic: 5_000_000n,
        },
        { account: accountId('TREASURY', FIXTURE_ASSET, 'float'), amountAtomic: -5_000_000n },
      ],
      idempotencyKey: `settlement:${reservationId}`,
    };
    const refusal = consumeReservation(db.pool, reservationId, [settlement], clock);
    await expect(refusal).rejects.toMatchObject(
      refusedByPostgres('IN003', 'RESERVATION_SETTLEMENT_INVALID'),
    );
    await expect(refusal).rejects.toMatchObject({
      message: expect.stringContaining('moves 5000000, more than the 100000'),
    });
    expect(await facts(reservationId, intentHash)).toEqual({
      state: 'ACTIVE',
      settled: null,
      settled_group_id: null,
      groups: 0,
    });
    // One atomic unit over is refused too; the reserved amount exactly is accepted.
    await expect(
      consumeReservation(
        db.pool,
        reservationId,
        [fundingPosting('1', 100_001n, `over:${reservationId}`)],
        clock,
      ),
    ).rejects.toMatchObject({
      code: 'RESERVATION_SETTLEMENT_INVALID',
    });
  });

  it('a group that already settled another reservation: the same intent approved again, its first posting reused', async () => {
    const policy = await kit.newPolicy({ duplicates: { windowMinutes: 0, keys: ['capability'] } });
    const intent = kit.intentFor(policy, { amount: '100000' });
    const first = await preflightPayment(kit.ctx, policy.policyId, intent, null);
    const firstId = (first.reservation as { reservationId: string }).reservationId;
    const posting = fundingPosting(
      policy.policyId,
      100_000n,
      `funding:${first.intentHash as string}`,
    );
    await consumeReservation(db.pool, firstId, [posting], clock);
    // Consumed, so a repeat of the intent is decided afresh (no duplicate window) and reserves again.
    const again = await preflightPayment(kit.ctx, policy.policyId, intent, null);
    const secondId = (again.reservation as { reservationId: string }).reservationId;
    expect(secondId).not.toBe(firstId);
    // The same key and payload answer the first group from the ledger: it may not settle a second reservation.
    await expect(consumeReservation(db.pool, secondId, [posting], clock)).rejects.toMatchObject(
      refusedByPostgres('IN003', 'RESERVATION_SETTLEMENT_INVALID'),
    );
    expect(await facts(secondId, first.intentHash as string)).toEqual({
      state: 'ACTIVE',
      settled: null,
      settled_group_id: null,
      groups: 1,
    });
  });

  it('an UPDATE that marks a reservation CONSUMED without intent.consume_reservation, whatever it sets', async () => {
    const { reservationId } = await reserved();
    const bypass = db.pool.query(
      `UPDATE intent.reservations SET state = 'CONSUMED', settled_amount = amount, settled_at = now(), settled_group_id = 'lg_000000000000000000000000'
        WHERE reservation_id = $1`,
      [reservationId],
    );
    await expect(bypass).rejects.toMatchObject({ code: 'IN002' });
  });

  it('the SQL function itself, called directly: an empty array and a non-array', async () => {
    const { reservationId } = await reserved();
    for (const groups of ['[]', '{}', 'null']) {
      await expect(
        db.pool.query('SELECT * FROM intent.consume_reservation($1, $2::jsonb, $3)', [
          reservationId,
          groups,
          clock(),
        ]),
      ).rejects.toMatchObject({ code: 'IN003' });
    }
  });
});

describe('a settlement for less than reserved', () => {
  it('consumes the reservation with its one group, counts only what it moved, and releases the rest', async () => {
    const { policy, reservationId, intentHash } = await reserved('400000');
    const consumed = await consumeReservation(
      db.pool,
      reservationId,
      [fundingPosting(policy.policyId, 150_000n, `funding:${reservationId}`)],
      clock,
    );
    expect(consumed).toMatchObject({
      state: 'CONSUMED',
      amountAtomic: '400000',
      settledAmountAtomic: '150000',
      groupIds: [expect.stringMatching(/^lg_[0-9a-f]{24}$/)],
    });
    expect(await facts(reservationId, intentHash)).toMatchObject({
      state: 'CONSUMED',
      settled: '150000',
      groups: 1,
    });
    const snapshot = await currentPolicy(db.pool, policy.policyId);
    const window = await readToolWindow(db.pool, policy.policyId, snapshot, clock());
    expect([window.settledTodayAtomic, window.reservedTodayAtomic]).toEqual([150_000n, 0n]);
    // The released 0.25 is budget again: 1.00 - 0.15 = 0.85 fits, one unit more does not.
    expect(
      (
        await preflightPayment(
          kit.ctx,
          policy.policyId,
          kit.intentFor(policy, { amount: '850001' }),
          null,
        )
      ).decision,
    ).toBe('BLOCKED_BUDGET');
    expect(
      (
        await preflightPayment(
          kit.ctx,
          policy.policyId,
          kit.intentFor(policy, { amount: '850000' }),
          null,
        )
      ).decision,
    ).toBe('APPROVED');
    // Consuming again answers the first consumption; releasing it is refused.
    expect(
      await consumeReservation(
        db.pool,
        reservationId,
        [fundingPosting(policy.policyId, 150_000n, `funding:${reservationId}`)],
        clock,
      ),
    ).toEqual(consumed);
    await expect(releaseReservation(db.pool, reservationId, clock)).rejects.toMatchObject({
      code: 'ILLEGAL_STATE_TRANSITION',
    });
  });

  it('the reserved amount exactly is accepted', async () => {
    const { policy, reservationId } = await reserved('100000');
    const consumed = await consumeReservation(
      db.pool,
      reservationId,
      [fundingPosting(policy.policyId, 100_000n, `funding:${reservationId}`)],
      clock,
    );
    expect(consumed).toMatchObject({ state: 'CONSUMED', settledAmountAtomic: '100000' });
  });

  it('a reservation past its deadline is refused by the database as well', async () => {
    const { policy, reservationId } = await reserved();
    const late = new Date(NOW_MS + 2 * 3_600_000);
    await expect(
      db.pool.query('SELECT * FROM intent.consume_reservation($1, $2::jsonb, $3)', [
        reservationId,
        JSON.stringify([
          {
            kind: 'FUNDING',
            asset: FIXTURE_ASSET,
            idempotencyKey: `late:${reservationId}`,
            entries: [
              { account: accountId('TREASURY', FIXTURE_ASSET, 'float'), amount: '1' },
              {
                account: accountId('USER_OBLIGATION', FIXTURE_ASSET, policy.policyId),
                amount: '-1',
              },
            ],
          },
        ]),
        late,
      ]),
    ).rejects.toMatchObject({ code: 'IN002' });
  });
});
