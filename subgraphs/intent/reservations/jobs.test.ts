// The lapsed-reservation sweep on a real database: lapsed ACTIVE reservations become EXPIRED once,
// whichever worker gets there, under the policy's decision lock; nothing else moves; the window a
// decision reads is the same before and after, and the running totals still equal the raw rows.
import { NOW_MS } from '../../../core/test-support/spend-fixtures';
import { formatIsoSeconds } from '../../../core/validation/timestamp';
import { createTestDatabase, type TestDatabase } from '../../../platform/db/testDb';
import { withTransaction } from '../../../platform/db/transaction';
import { lockPolicyDecisions } from '../decisionLock/lock';
import { sweepLapsedReservations } from './jobs';
import { consumeReservation, releaseReservation } from './consumeOrRelease';
import {
  fundingPosting,
  intentTestKit,
  lockAndReadPreflight,
  preflightPayment,
  rawWindow,
  readToolWindow,
  registerFixtureAsset,
  validIntent,
  type CreatedPolicy,
  type IntentTestKit,
} from '../test-support';

let db: TestDatabase;
let kit: IntentTestKit;
let clockMs = NOW_MS;

beforeAll(async () => {
  db = await createTestDatabase();
  kit = intentTestKit(db, () => clockMs);
  await registerFixtureAsset(db.pool);
});

afterAll(async () => {
  await db?.drop();
});

beforeEach(() => {
  clockMs = NOW_MS;
});

/** Approves one preflight per deadline (seconds after NOW); returns the reservation ids in order. */
async function reserve(policy: CreatedPolicy, deadlinesAfterSeconds: number[]): Promise<string[]> {
  const ids: string[] = [];
  for (const seconds of deadlinesAfterSeconds) {
    const answer = await preflightPayment(
      kit.ctx,
      policy.policyId,
      kit.intentFor(policy, { deadline: formatIsoSeconds(Math.floor(NOW_MS / 1000) + seconds) }),
      null,
    );
    expect(answer.decision).toBe('APPROVED');
    ids.push((answer.reservation as { reservationId: string }).reservationId);
  }
  return ids;
}

async function states(ids: string[]): Promise<string[]> {
  const result = await db.pool.query<{ reservation_id: string; state: string }>(
    'SELECT reservation_id, state FROM intent.reservations WHERE reservation_id = ANY($1)',
    [ids],
  );
  const byId = new Map(result.rows.map((row) => [row.reservation_id, row.state]));
  return ids.map((id) => byId.get(id)!);
}

describe('sweepLapsedReservations', () => {
  it('expires exactly the lapsed ACTIVE reservations, once, and the window a decision reads does not move', async () => {
    const policy = await kit.newPolicy({ rateLimit: { callsPerHour: 1000 } });
    const ids = await reserve(policy, [60, 120, 3600, 7200]);
    await releaseReservation(db.pool, ids[1]!, () => new Date(clockMs)); // released before it lapsed: stays RELEASED
    clockMs = NOW_MS + 600_000; // 60 s and 120 s have lapsed; 3600 s and 7200 s have not
    const now = new Date(clockMs);
    const readWindows = async () => {
      const intent = validIntent(kit.intentFor(policy), now);
      const decision = await withTransaction(db.pool, (client) =>
        lockAndReadPreflight(client, policy.policyId, intent, now),
      );
      return {
        decision: decision.window,
        tools: await readToolWindow(db.pool, policy.policyId, decision.policy, now),
        raw: await rawWindow(db.pool, policy.policyId, decision.policy, now, intent.provider),
      };
    };
    const before = await readWindows();

    expect(await sweepLapsedReservations(db.pool, now)).toBeGreaterThanOrEqual(1);
    expect(await states(ids)).toEqual(['EXPIRED', 'RELEASED', 'ACTIVE', 'ACTIVE']);
    expect(await sweepLapsedReservations(db.pool, now)).toBe(0);

    const after = await readWindows();
    expect(after.decision.reservedTodayAtomic).toBe(before.decision.reservedTodayAtomic);
    // The decision's and the tools' window against the raw rows (the decision reads the last approval per provider only with a cooldown).
    expect({ ...after.decision, lastApprovedAtMsByProvider: {} }).toEqual({
      ...after.raw,
      lastApprovedAtMsByProvider: {},
    });
    expect(after.tools).toEqual({ ...after.raw, lastApprovedAtMsByProvider: {} });
    const totals = await db.pool.query<{ active: string }>(
      'SELECT active::text FROM intent.policy_day_totals WHERE policy_id = $1',
      [policy.policyId],
    );
    const active = await db.pool.query<{ sum: string }>(
      `SELECT sum(amount)::text FROM intent.reservations WHERE policy_id = $1 AND state = 'ACTIVE'`,
      [policy.policyId],
    );
    expect(totals.rows[0]!.active).toBe(active.rows[0]!.sum);
  });

  it('two workers sweeping at once expire each lapsed reservation once', async () => {
    const policies = await Promise.all(Array.from({ length: 6 }, () => kit.newPolicy()));
    const ids = (await Promise.all(policies.map((policy) => reserve(policy, [30, 45, 90])))).flat();
    const now = new Date(NOW_MS + 3_600_000);
    const counts = await Promise.all([
      sweepLapsedReservations(db.pool, now),
      sweepLapsedReservations(db.pool, now),
    ]);
    expect(await states(ids)).toEqual(ids.map(() => 'EXPIRED'));
    // Moved once each: the two counts add up to them (other tests' lapsed ones may be in the counts
    // too), and each policy's running total of ACTIVE amounts is back to zero, not below.
    expect(counts[0]! + counts[1]!).toBeGreaterThanOrEqual(ids.length);
    const totals = await db.pool.query<{ active: string }>(
      'SELECT active::text FROM intent.policy_day_totals WHERE policy_id = ANY($1)',
      [policies.map((policy) => policy.policyId)],
    );
    expect(totals.rows.map((row) => row.active)).toEqual(policies.map(() => '0'));
  });

  it("waits for the policy's decision lock (a preflight or settlement in progress)", async () => {
    const policy = await kit.newPolicy();
    const [id] = await reserve(policy, [60]);
    const now = new Date(NOW_MS + 120_000);
    const holder = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await lockPolicyDecisions(holder, policy.policyId);
      const sweeping = sweepLapsedReservations(db.pool, now);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await states([id!])).toEqual(['ACTIVE']); // still waiting behind the lock
      await holder.query('COMMIT');
      await sweeping;
      expect(await states([id!])).toEqual(['EXPIRED']);
    } finally {
      holder.release();
    }
  });

  it('an expired reservation cannot be consumed; releasing it returns it unchanged', async () => {
    const policy = await kit.newPolicy();
    const [id] = await reserve(policy, [60]);
    const now = new Date(NOW_MS + 120_000);
    await sweepLapsedReservations(db.pool, now);
    await expect(consumeReservation(db.pool, id!, [], () => now)).rejects.toMatchObject({
      code: 'ILLEGAL_STATE_TRANSITION',
    });
    await expect(releaseReservation(db.pool, id!, () => now)).resolves.toMatchObject({
      reservationId: id,
      state: 'EXPIRED',
    });
  });
});

describe('reservation transitions in the database (migration 0008)', () => {
  it('leaves ACTIVE once, to CONSUMED, RELEASED or EXPIRED; those are final, and what it holds never changes', async () => {
    const policy = await kit.newPolicy();
    const ids = await reserve(policy, [3600, 3600, 3600]);
    const finals = ['CONSUMED', 'RELEASED', 'EXPIRED'] as const;
    // CONSUMED only with its ledger group (migration 0009, below); the others by any UPDATE.
    await consumeReservation(
      db.pool,
      ids[0]!,
      [fundingPosting(policy.policyId, 50_000n, `funding:${ids[0]}`)],
      () => new Date(clockMs),
    );
    for (const [index, state] of finals.entries()) {
      if (index > 0)
        await db.pool.query('UPDATE intent.reservations SET state = $2 WHERE reservation_id = $1', [
          ids[index],
          state,
        ]);
    }
    expect(await states(ids)).toEqual([...finals]);
    for (const [index, from] of finals.entries()) {
      for (const to of ['ACTIVE', ...finals.filter((state) => state !== from)]) {
        await expect(
          db.pool.query('UPDATE intent.reservations SET state = $2 WHERE reservation_id = $1', [
            ids[index],
            to,
          ]),
        ).rejects.toMatchObject({ code: 'IN002' });
      }
    }
    const [fresh] = await reserve(policy, [3600]);
    for (const change of [
      'amount = amount + 1',
      "policy_id = '1'",
      "expires_at = expires_at + interval '1 day'",
      'day = day + 1',
      "intent_hash = '0x" + 'ab'.repeat(32) + "'",
    ]) {
      await expect(
        db.pool.query(`UPDATE intent.reservations SET ${change} WHERE reservation_id = $1`, [
          fresh,
        ]),
      ).rejects.toMatchObject({ code: 'IN002' });
    }
    // Setting a final state again, and the settlement columns, stay allowed.
    await db.pool.query(
      `UPDATE intent.reservations SET state = 'CONSUMED', updated_at = now() WHERE reservation_id = $1`,
      [ids[0]],
    );
    expect(await states([fresh!])).toEqual(['ACTIVE']);
  });
});
