// The decision thread on a real database: preflights cross to a worker thread (TypeScript through
// ts-node here, compiled JavaScript in `spend-control start`), are decided there by the same queue,
// and their answers and errors cross back. The fourteen outcomes through the thread are in
// test/e2e/preflight.test.ts; this file holds what only the thread adds.
import { Pool } from 'pg';
import { AppError } from '../../../core/errors';
import { NOW_MS } from '../../../core/test-support/spend-fixtures';
import { createTestDatabase, type TestDatabase } from '../../../platform/db/testDb';
import type { SubgraphContext } from '../../kit';
import {
  attachDecisionThread,
  detachDecisionThread,
  startDecisionThread,
  type DecisionThread,
} from './decisionThread';
import { fromWireError, toWireError } from './threadWire';
import { preflightPayment } from './dispatch';
import { intentTestKit, type IntentTestKit } from '../test-support';

let db: TestDatabase;
let kit: IntentTestKit;
let ctx: SubgraphContext;
let thread: DecisionThread;

beforeAll(async () => {
  db = await createTestDatabase();
  kit = intentTestKit(db, () => NOW_MS);
  ctx = kit.ctx;
  thread = startDecisionThread({ connectionString: db.url });
  attachDecisionThread(db.pool, thread);
});

afterAll(async () => {
  if (thread !== undefined) {
    detachDecisionThread(db.pool, thread);
    await thread.stop();
  }
  await db?.drop();
});

const newPolicy = (overrides?: Record<string, unknown>) => kit.newPolicy(overrides);
const intentFor = (
  policy: { policyId: string; policyHash: string },
  overrides?: Record<string, unknown>,
) => kit.intentFor(policy, overrides);

describe('errors crossing the thread', () => {
  it('an AppError comes back as an AppError with its code, message and details', () => {
    const details = [{ field: 'intent.amount', reason: 'must be a decimal string' }];
    const back = fromWireError(
      toWireError(new AppError('INTENT_MALFORMED', 'bad intent', details)),
    );
    expect(back).toBeInstanceOf(AppError);
    expect(back).toMatchObject({ code: 'INTENT_MALFORMED', message: 'bad intent', details });
  });

  it('a database error keeps its SQLSTATE and severity, and anything else its message', () => {
    const pgError = Object.assign(new Error('duplicate key value'), {
      code: '23505',
      severity: 'ERROR',
    });
    const back = fromWireError(toWireError(pgError));
    expect(back).not.toBeInstanceOf(AppError);
    expect(back).toMatchObject({
      message: 'duplicate key value',
      code: '23505',
      severity: 'ERROR',
    });
    expect(fromWireError(toWireError('plain text'))).toMatchObject({ message: 'plain text' });
  });
});

describe('preflights decided on the thread', () => {
  it('holds the budget under 40 concurrent preflights of one policy, in one or more batches', async () => {
    const policy = await newPolicy({
      dailyBudget: '1.00',
      perCallCap: '1.00',
      hardCap: '1.00',
      escalateAbove: '1.00',
    });
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        preflightPayment(ctx, policy.policyId, intentFor(policy, { amount: '70000' }), null),
      ),
    );
    expect(answers.filter((answer) => answer.decision === 'APPROVED')).toHaveLength(14);
    expect(answers.filter((answer) => answer.decision === 'BLOCKED_BUDGET')).toHaveLength(26);
    const reserved = await db.pool.query(
      `SELECT count(*)::int AS n FROM intent.reservations WHERE policy_id = $1 AND state = 'ACTIVE'`,
      [policy.policyId],
    );
    expect(reserved.rows[0].n).toBe(14);
  });

  it('validates and looks up on the thread: INTENT_MALFORMED with its reasons, POLICY_ID_REQUIRED, INTENT_NOT_FOUND come back as AppErrors', async () => {
    const policy = await newPolicy();
    const malformed = preflightPayment(
      ctx,
      policy.policyId,
      intentFor(policy, { amount: '1.5', recipient: 'nobody' }),
      null,
    );
    await expect(malformed).rejects.toBeInstanceOf(AppError);
    await expect(malformed).rejects.toMatchObject({
      code: 'INTENT_MALFORMED',
      details: expect.arrayContaining([
        expect.objectContaining({ field: 'amount' }),
        expect.objectContaining({ field: 'recipient' }),
      ]),
    });
    await expect(preflightPayment(ctx, null, intentFor(policy), null)).rejects.toMatchObject({
      code: 'POLICY_ID_REQUIRED',
    });
    await expect(
      preflightPayment(ctx, policy.policyId, null, `0x${'ab'.repeat(32)}`),
    ).rejects.toMatchObject({ code: 'INTENT_NOT_FOUND' });
  });

  it('a decision the database refuses fails alone, with its SQLSTATE, and the others commit once', async () => {
    const policies = await Promise.all([newPolicy(), newPolicy(), newPolicy()]);
    const refused = policies[1]!;
    await db.adminPool.query(`
      CREATE FUNCTION intent.refuse_for_test() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused for the test' USING ERRCODE = '23514'; END $$;
      CREATE TRIGGER refuse_for_test BEFORE INSERT ON intent.decisions
        FOR EACH ROW WHEN (NEW.policy_id = '${refused.policyId}') EXECUTE FUNCTION intent.refuse_for_test();`);
    try {
      const settled = await Promise.allSettled(
        policies.map((policy) => preflightPayment(ctx, policy.policyId, intentFor(policy), null)),
      );
      expect(settled[1]).toMatchObject({
        status: 'rejected',
        reason: { code: '23514', message: 'refused for the test' },
      });
      for (const index of [0, 2])
        expect(settled[index]).toMatchObject({
          status: 'fulfilled',
          value: { decision: 'APPROVED' },
        });
    } finally {
      await db.adminPool.query(
        'DROP TRIGGER refuse_for_test ON intent.decisions; DROP FUNCTION intent.refuse_for_test();',
      );
    }
    const decisions = await db.pool.query(
      'SELECT policy_id, count(*)::int AS n FROM intent.decisions WHERE policy_id = ANY($1) GROUP BY policy_id ORDER BY policy_id',
      [policies.map((policy) => policy.policyId)],
    );
    expect(decisions.rows).toEqual(
      [policies[0]!, policies[2]!]
        .map((policy) => ({ policy_id: policy.policyId, n: 1 }))
        .sort((a, b) => a.policy_id.localeCompare(b.policy_id)),
    );
  });

  it("an escalation needs the caller's sealing key, which crosses with the preflight; without it, an AppError comes back", async () => {
    const policy = await newPolicy();
    const answer = await preflightPayment(
      ctx,
      policy.policyId,
      intentFor(policy, { amount: '1500000' }),
      null,
    );
    expect(answer.decision).toBe('ESCALATED_THRESHOLD');
    const pollRef = (answer.escalation as { pollRef: string }).pollRef;
    const opened = await db.pool.query('SELECT state FROM policy.escalations WHERE poll_ref = $1', [
      pollRef,
    ]);
    expect(opened.rows).toEqual([{ state: 'PENDING' }]);
    const { sealingKey: _key, ...keyless } = ctx;
    void _key;
    const refused = preflightPayment(
      keyless,
      policy.policyId,
      intentFor(policy, { amount: '1500000' }),
      null,
    );
    await expect(refused).rejects.toBeInstanceOf(AppError);
    await expect(refused).rejects.toMatchObject({
      code: 'INTERNAL_ERROR',
      message: 'No sealing key for escalation codes.',
    });
  });
});

describe('stopping', () => {
  it('answers what it holds, then refuses new preflights with SERVICE_UNAVAILABLE', async () => {
    // A thread of its own, registered under a pool of its own (never connected: only the key of the
    // registry), so only this test's preflights reach it.
    const own = startDecisionThread({ connectionString: db.url });
    const key = new Pool({ connectionString: db.url, max: 1 });
    attachDecisionThread(key, own);
    const policy = await newPolicy();
    try {
      const answers = Array.from({ length: 5 }, () =>
        preflightPayment({ ...ctx, db: key }, policy.policyId, intentFor(policy), null),
      );
      const stopped = own.stop();
      expect((await Promise.all(answers)).map((answer) => answer.decision)).toEqual(
        Array(5).fill('APPROVED'),
      );
      await stopped;
      await expect(
        preflightPayment({ ...ctx, db: key }, policy.policyId, intentFor(policy), null),
      ).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    } finally {
      detachDecisionThread(key, own);
      await key.end();
    }
  });
});
