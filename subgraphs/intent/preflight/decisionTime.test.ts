// A decision's instant is the clock read once the policy's decision lock is held (issue #14 item
// 6), in the batch runner, in consume, and on the decision thread: so the instants of one
// policy's decisions are ordered as the lock orders them, and a consume that waited behind a
// preflight can never act at an earlier instant than that preflight did. Where the first round's
// window was read just before the lock, it is read again when the reading under the lock could
// see it differently (a whole second passed, a counted call left the hour). Real database.
import type { PoolClient } from 'pg';
import { freshWireIntent, NOW_MS } from '../../../core/test-support/spend-fixtures';
import { formatIsoSeconds } from '../../../core/validation/timestamp';
import { systemClock } from '../../../platform/clock';
import { createTestDatabase, type TestDatabase } from '../../../platform/db/testDb';
import { attachDecisionThread, detachDecisionThread, startDecisionThread } from './decisionThread';
import { preflightPayment } from './dispatch';
import { lockPolicyDecisions } from './lock';
import { consumeReservation } from '../reservations/consumeOrRelease';
import {
  fundingPosting,
  intentTestKit,
  registerFixtureAsset,
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

const tenCents = (overrides: Record<string, unknown> = {}): Promise<CreatedPolicy> =>
  kit.newPolicy({
    dailyBudget: '0.10',
    perCallCap: '0.10',
    hardCap: '0.10',
    escalateAbove: '0.10',
    ...overrides,
  });

/** Holds the policy's decision lock on a connection of its own until `release`. */
async function holdLock(
  policyId: string,
): Promise<{ holder: PoolClient; release: () => Promise<void> }> {
  const holder = await db.pool.connect();
  await holder.query('BEGIN');
  await lockPolicyDecisions(holder, policyId);
  return {
    holder,
    release: async () => {
      await holder.query('COMMIT');
      holder.release();
    },
  };
}

/** Until `count` sessions wait for an advisory lock. */
async function untilWaiting(holder: PoolClient, count: number): Promise<void> {
  for (;;) {
    const waiting = await holder.query(
      `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`,
    );
    if (waiting.rows[0].n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A clock answering `values` in turn (then its last one again), as preflight reads it. */
function clockOf(values: number[]): () => Date {
  let next = 0;
  return () => new Date(values[Math.min(next++, values.length - 1)]!);
}

describe('the batch runner reads the decision time under the lock', () => {
  it('evaluatedAt is a reading taken after the lock was granted, not when the preflight arrived', async () => {
    const policy = await kit.newPolicy();
    const { holder, release } = await holdLock(policy.policyId);
    let granted = false;
    const readings: Array<{ at: string; granted: boolean }> = [];
    let tick = NOW_MS;
    const clock = (): Date => {
      tick += 1000;
      readings.push({ at: new Date(tick).toISOString(), granted });
      return new Date(tick);
    };
    const answer = preflightPayment(
      { ...kit.ctx, now: clock },
      policy.policyId,
      kit.intentFor(policy),
      null,
    );
    await untilWaiting(holder, 1);
    granted = true; // from here on the lock can be granted
    await release();
    const decided = await answer;
    expect(decided.decision).toBe('APPROVED');
    expect(readings.find((reading) => reading.at === decided.evaluatedAt)).toEqual({
      at: decided.evaluatedAt,
      granted: true,
    });
    const stored = await db.pool.query(
      'SELECT evaluated_at FROM intent.decisions WHERE intent_hash = $1',
      [decided.intentHash],
    );
    expect(stored.rows[0].evaluated_at.toISOString()).toBe(decided.evaluatedAt);
  });

  it('a consume that was called before a later preflight, but waited behind it, cannot consume what that preflight treated as lapsed', async () => {
    const policy = await tenCents();
    const deadlineMs = (Math.floor(NOW_MS / 1000) + 60) * 1000;
    const first = await preflightPayment(
      kit.ctx,
      policy.policyId,
      kit.intentFor(policy, { amount: '100000', deadline: formatIsoSeconds(deadlineMs / 1000) }),
      null,
    );
    const reservationId = (first.reservation as { reservationId: string }).reservationId;
    const { holder, release } = await holdLock(policy.policyId);

    // The preflight arrives after the deadline and queues for the lock first …
    clockMs = deadlineMs + 1000;
    const later = preflightPayment(
      kit.ctx,
      policy.policyId,
      kit.intentFor(policy, { amount: '100000' }),
      null,
    );
    await untilWaiting(holder, 1);
    // … the consume is called while the caller's clock still said "before the deadline", and queues second …
    clockMs = deadlineMs - 1000;
    const consume = consumeReservation(
      db.pool,
      reservationId,
      [fundingPosting(policy.policyId, 100_000n, `funding:${reservationId}`)],
      () => new Date(clockMs),
    );
    await untilWaiting(holder, 2);
    // … and by the time either holds the lock, the deadline has passed.
    clockMs = deadlineMs + 1000;
    await release();

    expect((await later).decision).toBe('APPROVED'); // the 0.10 reservation had lapsed: the budget was free
    await expect(consume).rejects.toMatchObject({ code: 'ILLEGAL_STATE_TRANSITION' });
    const spent = await db.pool.query(
      `SELECT coalesce(sum(settled_amount), 0)::text AS settled,
              coalesce(sum(amount) FILTER (WHERE state = 'ACTIVE' AND expires_at > $2), 0)::text AS reserved
         FROM intent.reservations WHERE policy_id = $1`,
      [policy.policyId, new Date(clockMs)],
    );
    expect(spent.rows[0]).toEqual({ settled: '0', reserved: '100000' }); // never more than the 0.10 budget
  });

  it('reads the window again at the reading under the lock when a whole second passed: a reservation lapsing in between no longer counts', async () => {
    const policy = await tenCents();
    const deadlineMs = (Math.floor(NOW_MS / 1000) + 60) * 1000;
    await preflightPayment(
      kit.ctx,
      policy.policyId,
      kit.intentFor(policy, { amount: '100000', deadline: formatIsoSeconds(deadlineMs / 1000) }),
      null,
    );
    const intent = kit.intentFor(policy, {
      amount: '100000',
      deadline: formatIsoSeconds(deadlineMs / 1000 + 3600),
    });
    // Validation, then the reading the locking round trip reads the window at (the reservation still
    // counts), then the reading under the lock (it has lapsed).
    const decided = await preflightPayment(
      { ...kit.ctx, now: clockOf([deadlineMs - 2, deadlineMs - 1, deadlineMs]) },
      policy.policyId,
      intent,
      null,
    );
    expect([decided.decision, decided.evaluatedAt]).toEqual([
      'APPROVED',
      new Date(deadlineMs).toISOString(),
    ]);
  });

  it('reads the window again when a counted call left the hour in between, within one second', async () => {
    const policy = await kit.newPolicy({ rateLimit: { callsPerHour: 1 } });
    const approvedAtMs = NOW_MS + 500;
    clockMs = approvedAtMs;
    expect(
      (await preflightPayment(kit.ctx, policy.policyId, kit.intentFor(policy), null)).decision,
    ).toBe('APPROVED');
    const hourLater = approvedAtMs + 3_600_000;
    const intent = freshWireIntent(policy, hourLater);
    const decided = await preflightPayment(
      { ...kit.ctx, now: clockOf([hourLater - 300, hourLater - 200, hourLater + 100]) },
      policy.policyId,
      intent,
      null,
    );
    expect([decided.decision, decided.evaluatedAt]).toEqual([
      'APPROVED',
      new Date(hourLater + 100).toISOString(),
    ]);
    expect(
      (decided.ruleTrace as Array<{ rule: string; observed: string }>).find(
        (entry) => entry.rule === 'rate.limit',
      )?.observed,
    ).toBe('1');
  });
});

describe('on the decision thread', () => {
  it('with the system clock, the thread reads it once the lock is held', async () => {
    const thread = startDecisionThread({ connectionString: db.url });
    attachDecisionThread(db.pool, thread);
    try {
      const policy = await kit.newPolicy({ expiresAt: null });
      const { holder, release } = await holdLock(policy.policyId);
      const answer = preflightPayment(
        { ...kit.ctx, now: systemClock },
        policy.policyId,
        freshWireIntent(policy, Date.now()),
        null,
      );
      await untilWaiting(holder, 1);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const releasedAtMs = Date.now();
      await release();
      const decided = await answer;
      expect(decided.decision).toBe('APPROVED');
      expect(Date.parse(decided.evaluatedAt as string)).toBeGreaterThanOrEqual(releasedAtMs);
    } finally {
      detachDecisionThread(db.pool, thread);
      await thread.stop();
    }
  });
});
