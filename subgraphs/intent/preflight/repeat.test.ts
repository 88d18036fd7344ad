// A repeated preflight of one intentHash never reserves twice (issue #15 item 8): while its
// approval's reservation is ACTIVE, a repeat is answered with that approval and writes nothing,
// and PostgreSQL refuses a second ACTIVE reservation of the intent whatever path writes it
// (migrations 0010, 0011). Through the module API on a real database, in-thread and on the
// decision thread, concurrently.
import { NOW_MS } from '../../../core/test-support/spend-fixtures';
import { createTestDatabase, type TestDatabase } from '../../../platform/db/testDb';
import { attachDecisionThread, detachDecisionThread, startDecisionThread } from './decisionThread';
import { preflightPayment } from './dispatch';
import { releaseReservation } from '../reservations/consumeOrRelease';
import { intentTestKit, type CreatedPolicy, type IntentTestKit } from '../test-support';

let db: TestDatabase;
let kit: IntentTestKit;
let clockMs = NOW_MS;

beforeAll(async () => {
  db = await createTestDatabase();
  kit = intentTestKit(db, () => clockMs);
});

afterAll(async () => {
  await db?.drop();
});

beforeEach(() => {
  clockMs = NOW_MS;
});

/** No duplicate window: before this change nothing else stopped a repeat from reserving again. */
const noDuplicateWindow = (): Promise<CreatedPolicy> =>
  kit.newPolicy({ duplicates: { windowMinutes: 0, keys: ['capability'] } });

async function rowsOf(intentHash: string) {
  const result = await db.pool.query(
    `SELECT (SELECT count(*) FROM intent.reservations WHERE intent_hash = $1 AND state = 'ACTIVE')::int AS active,
            (SELECT count(*) FROM intent.reservations WHERE intent_hash = $1)::int AS reservations,
            (SELECT count(*) FROM intent.decisions WHERE intent_hash = $1)::int AS decisions,
            (SELECT count(*) FROM intent.approved_calls WHERE intent_hash = $1)::int AS calls`,
    [intentHash],
  );
  return result.rows[0];
}

describe('a repeated preflight of one intent', () => {
  it('60 concurrent preflights of one intentHash: one decision, one ACTIVE reservation, every answer that approval', async () => {
    const policy = await noDuplicateWindow();
    const intent = kit.intentFor(policy);
    const answers = await Promise.all(
      Array.from({ length: 60 }, () => preflightPayment(kit.ctx, policy.policyId, intent, null)),
    );
    const intentHash = answers[0]!.intentHash as string;
    expect(await rowsOf(intentHash)).toEqual({
      active: 1,
      reservations: 1,
      decisions: 1,
      calls: 1,
    });
    // Every answer is the first approval: same reservation, receipt, trace and time.
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]).toMatchObject({
      decision: 'APPROVED',
      reservation: { state: 'ACTIVE', amountAtomic: '50000' },
    });
  });

  it('by its hash, later: the same answer, nothing written, the budget reserved once', async () => {
    const policy = await kit.newPolicy({
      dailyBudget: '0.10',
      perCallCap: '0.10',
      hardCap: '0.10',
      escalateAbove: '0.10',
      duplicates: { windowMinutes: 0, keys: ['capability'] },
    });
    const first = await preflightPayment(
      kit.ctx,
      policy.policyId,
      kit.intentFor(policy, { amount: '100000' }),
      null,
    );
    clockMs = NOW_MS + 60_000;
    const repeat = await preflightPayment(kit.ctx, policy.policyId, null, first.intentHash);
    expect(repeat).toEqual(first);
    expect(await rowsOf(first.intentHash as string)).toEqual({
      active: 1,
      reservations: 1,
      decisions: 1,
      calls: 1,
    });
  });

  it('once its reservation is released, a repeat is decided afresh (and may reserve again)', async () => {
    const policy = await noDuplicateWindow();
    const intent = kit.intentFor(policy);
    const first = await preflightPayment(kit.ctx, policy.policyId, intent, null);
    await releaseReservation(
      db.pool,
      (first.reservation as { reservationId: string }).reservationId,
      () => new Date(clockMs),
    );
    const second = await preflightPayment(kit.ctx, policy.policyId, intent, null);
    expect(second.decision).toBe('APPROVED');
    expect((second.reservation as { reservationId: string }).reservationId).not.toBe(
      (first.reservation as { reservationId: string }).reservationId,
    );
    expect(await rowsOf(first.intentHash as string)).toEqual({
      active: 1,
      reservations: 2,
      decisions: 2,
      calls: 2,
    });
  });

  it("a repeat naming another policy is decided (and blocked), not answered with the other policy's approval", async () => {
    const policy = await noDuplicateWindow();
    const other = await noDuplicateWindow();
    const intent = kit.intentFor(policy);
    await preflightPayment(kit.ctx, policy.policyId, intent, null);
    const elsewhere = await preflightPayment(kit.ctx, other.policyId, intent, null);
    expect(elsewhere.decision).toBe('BLOCKED_POLICY_MISMATCH');
    expect(elsewhere.reservation).toBeNull();
  });

  it('PostgreSQL refuses a second ACTIVE reservation of one intent, whatever writes it', async () => {
    const policy = await noDuplicateWindow();
    const first = await preflightPayment(kit.ctx, policy.policyId, kit.intentFor(policy), null);
    // A second decision of the same intent, written by hand (as the superuser: the service may not
    // insert reservations at all), and a reservation for it.
    const copy = db.adminPool.query(
      `WITH decision AS (
         INSERT INTO intent.decisions (intent_hash, policy_id, policy_version, policy_hash, decision, outcome, deciding_rule, rule_trace, engine, fail_closed_reason, evaluated_at)
         SELECT intent_hash, policy_id, policy_version, policy_hash, decision, outcome, deciding_rule, rule_trace, engine, fail_closed_reason, evaluated_at
           FROM intent.decisions WHERE decision_id = (SELECT decision_id FROM intent.reservations WHERE reservation_id = $1)
         RETURNING decision_id)
       INSERT INTO intent.reservations (reservation_id, decision_id, intent_hash, policy_id, amount, asset, day, state, expires_at, created_at, updated_at)
       SELECT 'rsv_' || repeat('0', 24), (SELECT decision_id FROM decision), intent_hash, policy_id, amount, asset, day, 'ACTIVE',
              expires_at, created_at, updated_at
         FROM intent.reservations WHERE reservation_id = $1`,
      [(first.reservation as { reservationId: string }).reservationId],
    );
    await expect(copy).rejects.toMatchObject({
      code: '23505',
      constraint: 'reservations_one_active_per_intent',
    });
  });
});

describe('on the decision thread', () => {
  it('40 concurrent preflights of one intentHash reserve once', async () => {
    const thread = startDecisionThread({ connectionString: db.url });
    attachDecisionThread(db.pool, thread);
    try {
      const policy = await noDuplicateWindow();
      const intent = kit.intentFor(policy);
      const answers = await Promise.all(
        Array.from({ length: 40 }, () => preflightPayment(kit.ctx, policy.policyId, intent, null)),
      );
      expect(
        new Set(
          answers.map((answer) => (answer.reservation as { reservationId: string }).reservationId),
        ).size,
      ).toBe(1);
      expect(await rowsOf(answers[0]!.intentHash as string)).toEqual({
        active: 1,
        reservations: 1,
        decisions: 1,
        calls: 1,
      });
    } finally {
      detachDecisionThread(db.pool, thread);
      await thread.stop();
    }
  });
});
