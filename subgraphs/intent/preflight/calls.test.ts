// The two SQL calls a preflight is made of (migration 0003): `intent.preflight_window` takes the
// per-policy lock and reads policy, window and approval; `intent.preflight_record` writes the
// decision. Checked through the module API on a real database: the window equals the one the tools
// read statement by statement, rules are withheld only when the caller holds them, the lock is the
// one settlement takes, a lost approval is reported, and one policy has one spelling of its id.
import fc from 'fast-check';
import type { PoolClient } from 'pg';
import * as ids from '../../../core/canon/ids';
import { NOW_MS } from '../../../core/test-support/spend-fixtures';
import { formatIsoSeconds } from '../../../core/validation/timestamp';
import { createTestDatabase, type TestDatabase } from '../../../platform/db/testDb';
import type { SubgraphContext } from '../../kit';
import { consumeReservation } from '../reservations/consumeOrRelease';
import {
  fundingPosting,
  intentTestKit,
  rawWindow,
  registerFixtureAsset,
  type CreatedPolicy,
  type IntentTestKit,
} from '../test-support';
import { utcDay } from '../day';
import { dollarQuoted, PREFLIGHT_BATCH_OPTIONS, preflightQueue } from './batch';
import { preflightPayment } from './dispatch';
import { validIntent } from './input';
import { lockPolicyDecisions } from './lock';
import { lockAndReadPreflight, readToolWindow } from './window';

let db: TestDatabase;
let clockMs = NOW_MS;
let kit: IntentTestKit;
let ctx: SubgraphContext;

beforeAll(async () => {
  db = await createTestDatabase();
  kit = intentTestKit(db, () => clockMs);
  ctx = kit.ctx;
  await registerFixtureAsset(db.pool);
});

afterAll(async () => {
  await db?.drop();
});

beforeEach(() => {
  clockMs = NOW_MS;
});

const newPolicy = (overrides?: Record<string, unknown>): Promise<CreatedPolicy> =>
  kit.newPolicy(overrides);
const intentFor = (policy: CreatedPolicy, overrides?: Record<string, unknown>) =>
  kit.intentFor(policy, overrides);

async function inTransaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    return await work(client);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

describe('intent.preflight_window', () => {
  it('reads the same window as the statement-by-statement reader', async () => {
    const policy = await newPolicy({
      dailyBudget: '100.00',
      duplicates: { windowMinutes: 30, keys: ['capability', 'recipient', 'amount', 'itemHash'] },
      cooldowns: { sameServiceMinutes: 1 },
      rateLimit: { callsPerHour: 1000 },
    });
    // Approvals spread over two hours and two providers, one expired reservation, one settled.
    const providers = ['api.vendor.example', 'api.other.example'];
    for (let index = 0; index < 6; index += 1) {
      clockMs = NOW_MS - (5 - index) * 25 * 60_000;
      const result = await preflightPayment(
        ctx,
        policy.policyId,
        intentFor(policy, { provider: providers[index % 2], amount: String(1000 + index) }),
        null,
      );
      expect(result.decision).toBe('APPROVED');
    }
    clockMs = NOW_MS - 10 * 60_000;
    await preflightPayment(
      ctx,
      policy.policyId,
      intentFor(policy, { deadline: formatIsoSeconds(Math.floor(clockMs / 1000) + 60) }),
      null,
    );
    // Settled for less than it reserved: the window counts what it moved.
    const settledId = (
      await db.pool.query(
        'SELECT reservation_id FROM intent.reservations WHERE policy_id = $1 ORDER BY created_at DESC LIMIT 1 OFFSET 1',
        [policy.policyId],
      )
    ).rows[0].reservation_id;
    await consumeReservation(
      db.pool,
      settledId,
      [fundingPosting(policy.policyId, 40_000n, `funding:${settledId}`)],
      () => new Date(clockMs),
    );
    clockMs = NOW_MS;
    for (const provider of providers) {
      const intent = validIntent(intentFor(policy, { provider }), new Date(clockMs));
      const read = await inTransaction((client) =>
        lockAndReadPreflight(client, policy.policyId, intent, new Date(clockMs)),
      );
      const reference = await rawWindow(
        db.pool,
        policy.policyId,
        read.policy,
        new Date(clockMs),
        provider,
      );
      expect(read.window).toEqual(reference);
      // The tools read the same window without the lock, and without the per-provider lookup.
      expect(
        await readToolWindow(db.pool, policy.policyId, read.policy, new Date(clockMs)),
      ).toEqual({ ...reference, lastApprovedAtMsByProvider: {} });
      expect(read.window.recentApproved.length).toBeGreaterThan(0);
      expect(read.window.settledTodayAtomic).toBe(40_000n);
      expect(Object.keys(read.window.lastApprovedAtMsByProvider)).toEqual([provider]);
    }
  });

  it('skips the per-provider read when the policy has no cooldown (rule 9 reads nothing then)', async () => {
    const policy = await newPolicy({ cooldowns: { sameServiceMinutes: 0 } });
    expect((await preflightPayment(ctx, policy.policyId, intentFor(policy), null)).decision).toBe(
      'APPROVED',
    );
    const intent = validIntent(intentFor(policy), new Date(clockMs));
    const read = await inTransaction((client) =>
      lockAndReadPreflight(client, policy.policyId, intent, new Date(clockMs)),
    );
    expect(read.window.lastApprovedAtMsByProvider).toEqual({});
    expect(read.window.approvedCallsLastHour).toBe(1);
  });

  it('withholds the rules only when the caller already holds this version and hash', async () => {
    const policy = await newPolicy();
    const call = (version: number | null, hash: string | null) =>
      inTransaction(async (client) => {
        const result = await client.query<{ version: number; policy_hash: string; rules: unknown }>(
          'SELECT version, policy_hash, rules FROM intent.preflight_window($1, $2, $3, $4, $5, $6, $7)',
          [
            policy.policyId,
            `0x${'ab'.repeat(32)}`,
            new Date(clockMs),
            '2026-11-22',
            'api.vendor.example',
            version,
            hash,
          ],
        );
        return result.rows[0];
      });
    const stored = await db.pool.query(
      'SELECT rules FROM policy.policies WHERE policy_id = $1::numeric',
      [policy.policyId],
    );
    expect((await call(null, null)).rules).toEqual(stored.rows[0].rules);
    expect((await call(policy.version, policy.policyHash)).rules).toBeNull();
    expect((await call(policy.version, `0x${'00'.repeat(32)}`)).rules).not.toBeNull();
    expect((await call(policy.version + 1, policy.policyHash)).rules).not.toBeNull();
    const unknown = await inTransaction(async (client) => {
      const result = await client.query(
        'SELECT * FROM intent.preflight_window($1, $2, $3, $4, $5, $6, $7)',
        [
          '12345',
          `0x${'ab'.repeat(32)}`,
          new Date(clockMs),
          '2026-11-22',
          'api.vendor.example',
          null,
          null,
        ],
      );
      return result.rows[0];
    });
    expect(unknown).toMatchObject({
      policy_found: false,
      version: null,
      rules: null,
      settled: '0',
      reserved: '0',
      calls: '0',
    });
  });

  it('waits for the decision lock that settlement takes (lockPolicyDecisions)', async () => {
    const policy = await newPolicy();
    const holder = await db.pool.connect();
    const waiter = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await lockPolicyDecisions(holder, policy.policyId);
      const waiterPid = (await waiter.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))
        .rows[0].pid;
      await waiter.query('BEGIN');
      const intent = validIntent(intentFor(policy), new Date(clockMs));
      let done = false;
      const reading = lockAndReadPreflight(waiter, policy.policyId, intent, new Date(clockMs)).then(
        (read) => {
          done = true;
          return read;
        },
      );
      // The waiter shows up as blocked on an advisory lock, and stays blocked while the lock is held.
      for (;;) {
        const waiting = await holder.query(
          `SELECT 1 FROM pg_locks WHERE pid = $1 AND locktype = 'advisory' AND NOT granted`,
          [waiterPid],
        );
        if (waiting.rowCount === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(done).toBe(false);
      await holder.query('COMMIT');
      const read = await reading;
      expect(read.policy?.policyId).toBe(policy.policyId);
      await waiter.query('COMMIT');
    } finally {
      holder.release();
      waiter.release();
    }
  });
});

describe('intent.preflight_record', () => {
  it('refuses an owner approval it cannot use, so the transaction cannot commit', async () => {
    const policy = await newPolicy();
    const attempt = inTransaction((client) =>
      client.query(
        `SELECT * FROM intent.preflight_record($1, $2, $3, $4, 'APPROVED', 'APPROVED', NULL, '[]', '{}', NULL, $5, $6,
                                               false, 'research-bot-1', 1000, NULL, NULL, NULL, NULL, NULL,
                                               NULL, NULL, NULL, NULL, NULL, $7, NULL, NULL, NULL, NULL, NULL)`,
        [
          `0x${'ab'.repeat(32)}`,
          policy.policyId,
          policy.version,
          policy.policyHash,
          new Date(clockMs),
          `0x${'cd'.repeat(32)}`,
          'esc_0123456789abcdef01234567',
        ],
      ),
    );
    await expect(attempt).rejects.toMatchObject({ code: 'IN001' });
  });

  it('rolls the whole decision back when the write fails, even with its COMMIT already queued', async () => {
    const policy = await newPolicy();
    const intent = intentFor(policy);
    // A receipt id that collides makes the write fail after the decision row went in.
    const first = await preflightPayment(ctx, policy.policyId, intent, null);
    const before = await db.pool.query(
      'SELECT count(*)::int AS n FROM intent.decisions WHERE policy_id = $1',
      [policy.policyId],
    );
    const spy = jest.spyOn(ids, 'newReceiptId').mockReturnValue(first.receiptId as string);
    try {
      await expect(
        preflightPayment(ctx, policy.policyId, intentFor(policy), null),
      ).rejects.toMatchObject({ code: '23505' });
    } finally {
      spy.mockRestore();
    }
    const after = await db.pool.query(
      'SELECT count(*)::int AS n FROM intent.decisions WHERE policy_id = $1',
      [policy.policyId],
    );
    expect(after.rows[0].n).toBe(before.rows[0].n);
    // The connection went back to the pool usable: the next preflight works.
    expect((await preflightPayment(ctx, policy.policyId, intentFor(policy), null)).decision).toBe(
      'APPROVED',
    );
  });

  it('writes the intent, decision, receipt, reservation and approved call of an approval in one call', async () => {
    const policy = await newPolicy();
    const result = await preflightPayment(ctx, policy.policyId, intentFor(policy), null);
    expect(result.decision).toBe('APPROVED');
    const counts = await db.pool.query(
      `SELECT (SELECT count(*) FROM intent.spend_intents WHERE intent_hash = $1)::int AS intents,
              (SELECT count(*) FROM intent.decisions WHERE intent_hash = $1)::int AS decisions,
              (SELECT count(*) FROM intent.decision_receipts WHERE receipt_id = $2)::int AS receipts,
              (SELECT count(*) FROM intent.reservations WHERE reservation_id = $3 AND state = 'ACTIVE')::int AS reservations,
              (SELECT count(*) FROM intent.approved_calls WHERE intent_hash = $1)::int AS calls`,
      [
        result.intentHash,
        result.receiptId,
        (result.reservation as { reservationId: string }).reservationId,
      ],
    );
    expect(counts.rows[0]).toEqual({
      intents: 1,
      decisions: 1,
      receipts: 1,
      reservations: 1,
      calls: 1,
    });
  });
});

describe('statements with their JSON inlined (a batch is one simple query per round trip)', () => {
  it('dollarQuoted text reaches PostgreSQL verbatim, whatever quotes, dollars and backslashes it holds', async () => {
    expect(dollarQuoted('{"a":"$json$ and $json1$"}')).toBe(
      '$json2${"a":"$json$ and $json1$"}$json2$',
    );
    const tricky = fc.oneof(
      fc.constantFrom('$', '$json$', '$json1$', "'", '\\', '"', '$$', '\u00e9', '\u{1F600}', ';'),
      fc.string(),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(tricky, { maxLength: 12 }), async (parts) => {
        const text = JSON.stringify({ value: parts.join('') });
        const { rows } = await db.pool.query(`SELECT ${dollarQuoted(text)}::jsonb AS value`);
        expect(rows[0].value).toEqual(JSON.parse(text));
      }),
      { numRuns: 200 },
    );
  });

  it('an intent whose strings hold the quote tag is stored exactly as sent', async () => {
    const policy = await newPolicy();
    const item = { description: "it's $json$ \\ $json1$; COMMIT; --", params: { q: '$$' } };
    const result = await preflightPayment(ctx, policy.policyId, intentFor(policy, { item }), null);
    expect(result.decision).toBe('APPROVED');
    const stored = await db.pool.query(
      'SELECT canonical FROM intent.spend_intents WHERE intent_hash = $1',
      [result.intentHash],
    );
    expect(stored.rows[0].canonical.item).toEqual(item);
  });
});

describe('one spelling per policy', () => {
  it('a policyId with leading zeros shares the lock and the budget of the policy', async () => {
    // A uint256 has up to 78 digits and a policyId at most 78 characters: take one with room for a zero.
    let policy = await newPolicy({
      dailyBudget: '1.00',
      perCallCap: '1.00',
      hardCap: '1.00',
      escalateAbove: '1.00',
    });
    while (policy.policyId.length >= 78)
      policy = await newPolicy({
        dailyBudget: '1.00',
        perCallCap: '1.00',
        hardCap: '1.00',
        escalateAbove: '1.00',
      });
    const first = await preflightPayment(
      ctx,
      policy.policyId,
      intentFor(policy, { amount: '1000000' }),
      null,
    );
    expect(first.decision).toBe('APPROVED');
    const padded = await preflightPayment(
      ctx,
      `0${policy.policyId}`,
      intentFor(policy, { amount: '1000000' }),
      null,
    );
    expect(padded.decision).toBe('BLOCKED_BUDGET');
    expect(padded.policyId).toBe(policy.policyId);
  });
});

describe('group commit (migration 0004, batchQueue.ts)', () => {
  /**
   * Holds the decision locks of as many policies as batches may run at once, and starts one
   * preflight on each: every batch slot is then busy, so whatever arrives next waits and forms one
   * batch. Returns the blocked preflights and the release.
   */
  async function occupyEveryBatchSlot(): Promise<{
    blocked: Array<Promise<unknown>>;
    release: () => Promise<void>;
  }> {
    const holder = await db.pool.connect();
    await holder.query('BEGIN');
    const blocked: Array<Promise<unknown>> = [];
    for (let index = 0; index < PREFLIGHT_BATCH_OPTIONS.maxInFlight; index += 1) {
      const policy = await newPolicy();
      await lockPolicyDecisions(holder, policy.policyId);
      blocked.push(preflightPayment(ctx, policy.policyId, intentFor(policy), null));
    }
    // Every blocked preflight in flight (a spare slot opens only after spareAfterMs), none waiting.
    while (preflightQueue(db.pool).queued > 0)
      await new Promise((resolve) => setTimeout(resolve, 5));
    return {
      blocked,
      release: async () => {
        await holder.query('COMMIT');
        holder.release();
      },
    };
  }

  async function untilQueued(count: number): Promise<void> {
    while (preflightQueue(db.pool).queued < count)
      await new Promise((resolve) => setTimeout(resolve, 5));
  }

  /** Starts the preflights while every batch slot is busy, so they all wait and form one batch. */
  async function asOneBatch<T>(start: () => Array<Promise<T>>): Promise<T[]> {
    const { blocked, release } = await occupyEveryBatchSlot();
    const answers = start();
    await untilQueued(answers.length);
    await release();
    await Promise.all(blocked);
    return Promise.all(answers);
  }

  /** Runs `work` while a test trigger refuses (P0001) every row of `table` matching `condition` (on NEW). */
  async function whileRefusing<T>(
    table: 'decisions' | 'reservations',
    condition: string,
    work: () => Promise<T>,
  ): Promise<T> {
    await db.adminPool.query(`
      CREATE FUNCTION intent.test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF ${condition} THEN RAISE EXCEPTION 'refused by the test' USING ERRCODE = 'P0001'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_refuse BEFORE INSERT ON intent.${table} FOR EACH ROW EXECUTE FUNCTION intent.test_refuse();`);
    try {
      return await work();
    } finally {
      await db.adminPool.query(
        `DROP TRIGGER test_refuse ON intent.${table}; DROP FUNCTION intent.test_refuse()`,
      );
    }
  }

  it('decides preflights of different policies in one transaction, each against its own window', async () => {
    const policies = await Promise.all(
      Array.from({ length: 6 }, () =>
        newPolicy({
          dailyBudget: '1.00',
          perCallCap: '1.00',
          hardCap: '1.00',
          escalateAbove: '1.00',
        }),
      ),
    );
    // Each policy has spent its whole budget but one: its next 1.00 is blocked, the others' approved.
    for (const policy of policies.slice(1)) {
      expect(
        (
          await preflightPayment(
            ctx,
            policy.policyId,
            intentFor(policy, { amount: '1000000' }),
            null,
          )
        ).decision,
      ).toBe('APPROVED');
    }
    const answers = await asOneBatch(() =>
      policies.map((policy) =>
        preflightPayment(ctx, policy.policyId, intentFor(policy, { amount: '1000000' }), null),
      ),
    );
    const decisions = answers.map((answer) => answer.decision);
    expect(decisions).toEqual([
      'APPROVED',
      'BLOCKED_BUDGET',
      'BLOCKED_BUDGET',
      'BLOCKED_BUDGET',
      'BLOCKED_BUDGET',
      'BLOCKED_BUDGET',
    ]);
    // One transaction wrote all six: their rows carry one transaction id.
    const receipts = answers.map((answer) => answer.receiptId as string);
    const writers = await db.pool.query(
      'SELECT count(DISTINCT xmin::text)::int AS n FROM intent.decision_receipts WHERE receipt_id = ANY($1)',
      [receipts],
    );
    expect(writers.rows[0].n).toBe(1);
  });

  it('decides successive preflights of one policy in one transaction, each against the window the one before wrote', async () => {
    const policy = await newPolicy({
      dailyBudget: '3.00',
      perCallCap: '1.00',
      hardCap: '1.00',
      escalateAbove: '1.00',
    });
    const settledAnswers = await asOneBatch(() =>
      Array.from({ length: 5 }, () =>
        preflightPayment(ctx, policy.policyId, intentFor(policy, { amount: '1000000' }), null),
      ),
    );
    // In arrival order: three fit the 3.00 budget, the next two do not.
    expect(settledAnswers.map((answer) => answer.decision)).toEqual([
      'APPROVED',
      'APPROVED',
      'APPROVED',
      'BLOCKED_BUDGET',
      'BLOCKED_BUDGET',
    ]);
    const writers = await db.pool.query(
      'SELECT count(DISTINCT xmin::text)::int AS n FROM intent.decision_receipts WHERE receipt_id = ANY($1)',
      [settledAnswers.map((answer) => answer.receiptId as string)],
    );
    expect(writers.rows[0].n).toBe(1);
    const reserved = await db.pool.query(
      "SELECT count(*)::int AS n, sum(amount)::text AS total FROM intent.reservations WHERE policy_id = $1 AND state = 'ACTIVE'",
      [policy.policyId],
    );
    expect(reserved.rows[0]).toEqual({ n: 3, total: '3000000' });
  });

  it("a refused decision in the middle of one policy's rounds fails alone, with its own error, and the others keep their order", async () => {
    const policy = await newPolicy({ dailyBudget: '100.00' });
    const answers = await whileRefusing('reservations', 'NEW.amount = 123456', () =>
      asOneBatch(() =>
        ['100000', '123456', '200000'].map((amount) =>
          preflightPayment(ctx, policy.policyId, intentFor(policy, { amount }), null).then(
            (answer) =>
              `${answer.decision} ${(answer.reservation as { amountAtomic: string }).amountAtomic}`,
            (error: { code?: string }) => `refused ${error.code}`,
          ),
        ),
      ),
    );
    expect(answers).toEqual(['APPROVED 100000', 'refused P0001', 'APPROVED 200000']);
    const reservations = await db.pool.query(
      'SELECT amount::text FROM intent.reservations WHERE policy_id = $1 ORDER BY created_at, amount',
      [policy.policyId],
    );
    expect(reservations.rows.map((row) => row.amount)).toEqual(['100000', '200000']);
  });

  it('a decision the database refuses fails alone: the rest of its batch is decided again and committed', async () => {
    const policies = await Promise.all(Array.from({ length: 5 }, () => newPolicy()));
    const refused = policies[2]!;
    const before = { ...preflightQueue(db.pool).stats };
    const answers = await whileRefusing('decisions', `NEW.policy_id = '${refused.policyId}'`, () =>
      asOneBatch(() =>
        policies.map((policy) =>
          preflightPayment(ctx, policy.policyId, intentFor(policy), null).then(
            (answer) => answer.decision,
            (error: { code?: string }) => `refused ${error.code}`,
          ),
        ),
      ),
    );
    expect(answers).toEqual(['APPROVED', 'APPROVED', 'refused P0001', 'APPROVED', 'APPROVED']);
    expect(preflightQueue(db.pool).stats.retriedAlone - before.retriedAlone).toBe(policies.length);
    // Exactly one decision, reservation and approved call per accepted policy; nothing for the refused one.
    const counts = await db.pool.query(
      `SELECT p AS policy_id,
              (SELECT count(*) FROM intent.decisions d WHERE d.policy_id = p)::int AS decisions,
              (SELECT count(*) FROM intent.reservations r WHERE r.policy_id = p)::int AS reservations,
              (SELECT count(*) FROM intent.approved_calls a WHERE a.policy_id = p)::int AS calls
         FROM unnest($1::text[]) AS p`,
      [policies.map((policy) => policy.policyId)],
    );
    expect(counts.rows.map((row) => [row.decisions, row.reservations, row.calls])).toEqual([
      [1, 1, 1],
      [1, 1, 1],
      [0, 0, 0],
      [1, 1, 1],
      [1, 1, 1],
    ]);
  });
});

describe('reservation indexes (migration 0006)', () => {
  /** The plan PostgreSQL caches for a statement with `now` as a parameter, as PL/pgSQL does after a few calls. */
  async function genericPlan(
    sql: string,
    types: string,
    args: Array<string | Date>,
  ): Promise<string> {
    const client = await db.pool.connect();
    try {
      await client.query('SET plan_cache_mode = force_generic_plan');
      await client.query(`PREPARE probe(${types}) AS ${sql}`);
      const literals = args
        .map((arg) => client.escapeLiteral(arg instanceof Date ? arg.toISOString() : String(arg)))
        .join(', ');
      const plan = await client.query(
        `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE probe(${literals})`,
      );
      return plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    } finally {
      // Closed, not pooled: its session was changed, and DEALLOCATE ALL would also drop pg's own
      // named statements, which the client would still believe prepared on this connection.
      client.release(true);
    }
  }

  it('the lapsed-reservation read of a busy policy touches only lapsed reservations, under a generic plan', async () => {
    const policy = await newPolicy({
      dailyBudget: '1000.00',
      rateLimit: { callsPerHour: 100_000 },
      duplicates: { windowMinutes: 0, keys: ['capability'] },
    });
    const answers = await Promise.all(
      Array.from({ length: 150 }, () =>
        preflightPayment(ctx, policy.policyId, intentFor(policy), null),
      ),
    );
    expect(answers.every((answer) => answer.decision === 'APPROVED')).toBe(true);
    // The statement intent.preflight_window runs (migration 0005), none of the 150 lapsed yet.
    const plan = await genericPlan(
      `SELECT coalesce(sum(r.amount), 0) FROM intent.reservations r
        WHERE r.policy_id = $1 AND r.day = $2 AND r.state = 'ACTIVE' AND r.expires_at <= $3`,
      'text, date, timestamptz',
      [policy.policyId, new Date(clockMs).toISOString().slice(0, 10), new Date(clockMs)],
    );
    expect(plan).toContain('reservations_active_deadline');
    expect(plan).not.toMatch(/Rows Removed by Filter/);
  });

  it('leaves the lapsed-reservation read one index to choose: none other leads with (policy_id, day) over ACTIVE rows', async () => {
    // With reservations_window (policy_id, day, state) beside it, a generic plan could read every
    // ACTIVE reservation of a busy policy's day for each decision (seen at 12,704 rows in a bench).
    const indexes = await db.pool.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'intent' AND tablename = 'reservations' ORDER BY indexname`,
    );
    const leadingWithPolicy = indexes.rows
      .filter((row) => /\(policy_id/.test(row.indexdef))
      .map((row) => [row.indexname, row.indexdef.replace(/^.* USING btree /, '')]);
    expect(leadingWithPolicy).toEqual([
      [
        'reservations_active_deadline',
        "(policy_id, day, expires_at) WHERE ((state = 'ACTIVE'::text) AND (expires_at IS NOT NULL))",
      ],
      ['reservations_settled', "(policy_id, settled_at) WHERE (state = 'CONSUMED'::text)"],
    ]);
  });

  it("the repeat probe has one index to read: no other reads a busy policy's ACTIVE reservations for it (migration 0013)", async () => {
    const policy = await newPolicy({
      dailyBudget: '1000.00',
      rateLimit: { callsPerHour: 100_000 },
      duplicates: { windowMinutes: 0, keys: ['capability'] },
    });
    const answers = await Promise.all(
      Array.from({ length: 150 }, () =>
        preflightPayment(ctx, policy.policyId, intentFor(policy), null),
      ),
    );
    expect(answers.every((answer) => answer.decision === 'APPROVED')).toBe(true);
    const fresh = validIntent(intentFor(policy), new Date(clockMs));
    const client = await db.adminPool.connect();
    try {
      await client.query('BEGIN');
      // Without the probe's own index, any other that could answer it is what the plan takes: the
      // (policy_id, day, expires_at) index of ACTIVE rows read all 150 and filtered on intent_hash
      // (as PL/pgSQL's cached plan did beside it in the bench). Rolled back below.
      await client.query('DROP INDEX intent.reservations_one_active_per_intent');
      await client.query('SET LOCAL enable_seqscan = off');
      const read = await client.query<{ replay: unknown; reserved: string }>(
        'SELECT replay, reserved FROM intent.preflight_window($1, $2, $3, $4::date, $5, NULL, NULL)',
        [
          policy.policyId,
          fresh.intentHash,
          new Date(clockMs),
          utcDay(new Date(clockMs)),
          fresh.provider,
        ],
      );
      expect(read.rows[0]).toEqual({ replay: null, reserved: String(150n * fresh.amountAtomic) });
      // What the deadline index fetched in this transaction: the lapsed read's rows (none lapsed), nothing for the probe.
      const fetched = await client.query<{ rows: string }>(
        `SELECT pg_stat_get_xact_tuples_fetched('intent.reservations_active_deadline'::regclass)::text AS rows`,
      );
      expect(fetched.rows[0]!.rows).toBe('0');
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it("the settlements of a rolling window's boundary hour are read by settlement time (migration 0011)", async () => {
    const policy = await newPolicy();
    const plan = await genericPlan(
      `SELECT coalesce(sum(r.settled_amount), 0), min(r.settled_at) FROM intent.reservations r
        WHERE r.policy_id = $1 AND r.state = 'CONSUMED' AND r.settled_at > $2::timestamptz - interval '24 hours'
          AND r.settled_at < $3::timestamptz + interval '1 hour'`,
      'text, timestamptz, timestamptz',
      [policy.policyId, new Date(clockMs), new Date(clockMs - 86_400_000)],
    );
    expect(plan).toContain('reservations_settled');
    expect(plan).toMatch(/Index Cond: \(\(policy_id = \$1\) AND \(settled_at > /);
  });
});

describe('running window totals (migration 0005)', () => {
  it('the window read from the totals always equals the raw sums, whatever happens to reservations and the clock', async () => {
    const MINUTE = 60_000;
    type Step =
      | { kind: 'preflight'; atMs: number; deadlineSeconds: number }
      | { kind: 'move'; pick: number; state: 'CONSUMED' | 'RELEASED' | 'EXPIRED' }
      | { kind: 'read'; atMs: number }
      | { kind: 'readAnHourAfter'; pick: number; deltaMs: number }
      | { kind: 'readADayAfter'; pick: number; deltaMs: number }
      | { kind: 'readAtDeadline'; pick: number; deltaMs: number };
    // Instants on and around minute and hour boundaries, where an off-by-one would show.
    const minuteStart = Math.floor(NOW_MS / MINUTE) * MINUTE;
    const instant = fc
      .tuple(fc.integer({ min: -20, max: 20 }), fc.constantFrom(-1, 0, 1, 29_999, 30_000))
      .map(([minutes, ms]) => minuteStart + minutes * MINUTE + ms);
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({
        kind: fc.constant('preflight' as const),
        atMs: instant,
        deadlineSeconds: fc.integer({ min: 30, max: 3 * 3600 }),
      }),
      fc.record({
        kind: fc.constant('move' as const),
        pick: fc.nat(),
        state: fc.constantFrom('CONSUMED' as const, 'RELEASED' as const, 'EXPIRED' as const),
      }),
      fc.record({ kind: fc.constant('read' as const), atMs: instant }),
      // Exactly where an approval leaves the hour: its own minute is then the boundary minute.
      fc.record({
        kind: fc.constant('readAnHourAfter' as const),
        pick: fc.nat(),
        deltaMs: fc.constantFrom(-1, 0, 1, -30_000, 30_000),
      }),
      // Exactly where a settlement (settled when approved, below) leaves a rolling 24 hours.
      fc.record({
        kind: fc.constant('readADayAfter' as const),
        pick: fc.nat(),
        deltaMs: fc.constantFrom(-1, 0, 1, -1_800_000, 1_800_000),
      }),
      // Exactly where a reservation lapses.
      fc.record({
        kind: fc.constant('readAtDeadline' as const),
        pick: fc.nat(),
        deltaMs: fc.constantFrom(-1, 0, 1),
      }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('UTC_DAY', 'ROLLING_24H'),
        fc.array(step, { minLength: 4, maxLength: 14 }),
        async (budgetWindow, steps) => {
          const policy = await newPolicy({
            budgetWindow,
            dailyBudget: '1000000.00',
            cooldowns: { sameServiceMinutes: 0 },
            duplicates: { windowMinutes: 0, keys: ['capability'] },
            rateLimit: { callsPerHour: 100_000 },
          });
          const compare = async (atMs: number) => {
            clockMs = atMs;
            const intent = validIntent(intentFor(policy), new Date(atMs));
            const read = await inTransaction((client) =>
              lockAndReadPreflight(client, policy.policyId, intent, new Date(atMs)),
            );
            const reference = await rawWindow(
              db.pool,
              policy.policyId,
              read.policy,
              new Date(atMs),
              intent.provider,
            );
            const tools = await readToolWindow(
              db.pool,
              policy.policyId,
              read.policy,
              new Date(atMs),
            );
            const sums = (window: typeof reference) => ({
              settled: window.settledTodayAtomic,
              reserved: window.reservedTodayAtomic,
              calls: window.approvedCallsLastHour,
            });
            expect(sums(read.window)).toEqual(sums(reference));
            expect(sums(tools)).toEqual(sums(reference));
          };
          const preflightTimes: number[] = [];
          const deadlines: number[] = [];
          for (const next of steps) {
            if (next.kind === 'preflight') {
              clockMs = next.atMs;
              preflightTimes.push(next.atMs);
              deadlines.push((Math.floor(next.atMs / 1000) + next.deadlineSeconds) * 1000);
              await preflightPayment(
                ctx,
                policy.policyId,
                intentFor(policy, {
                  deadline: formatIsoSeconds(Math.floor(next.atMs / 1000) + next.deadlineSeconds),
                }),
                null,
              );
            } else if (next.kind === 'move') {
              const picked = await db.pool.query<{
                reservation_id: string;
                amount: string;
                created_at: Date;
              }>(
                `SELECT reservation_id, amount::text AS amount, created_at FROM intent.reservations WHERE policy_id = $1 AND state = 'ACTIVE'
                ORDER BY reservation_id OFFSET $2 % greatest(1, (SELECT count(*) FROM intent.reservations
                                                                 WHERE policy_id = $1 AND state = 'ACTIVE')) LIMIT 1`,
                [policy.policyId, next.pick],
              );
              const row = picked.rows[0];
              if (row === undefined) continue;
              if (next.state === 'CONSUMED') {
                // A third, two thirds or all of it, settled when it was approved (before its deadline).
                const moved = (BigInt(row.amount) * BigInt(1 + (next.pick % 3))) / 3n;
                await consumeReservation(
                  db.pool,
                  row.reservation_id,
                  [fundingPosting(policy.policyId, moved, `funding:${row.reservation_id}`)],
                  () => row.created_at,
                );
              } else {
                await db.pool.query(
                  'UPDATE intent.reservations SET state = $2 WHERE reservation_id = $1',
                  [row.reservation_id, next.state],
                );
              }
            } else if (next.kind === 'read') {
              await compare(next.atMs);
            } else if (next.kind === 'readAnHourAfter') {
              if (preflightTimes.length > 0)
                await compare(
                  preflightTimes[next.pick % preflightTimes.length]! + 3_600_000 + next.deltaMs,
                );
            } else if (next.kind === 'readADayAfter') {
              if (preflightTimes.length > 0)
                await compare(
                  preflightTimes[next.pick % preflightTimes.length]! + 86_400_000 + next.deltaMs,
                );
            } else if (deadlines.length > 0) {
              await compare(deadlines[next.pick % deadlines.length]! + next.deltaMs);
            }
          }
          await compare(NOW_MS);
          // And the tables themselves equal what they summarise.
          const drift = await db.pool.query(
            `SELECT (SELECT count(*) FROM (
                    SELECT day, sum(amount) FILTER (WHERE state = 'ACTIVE') AS a, sum(settled_amount) FILTER (WHERE state = 'CONSUMED') AS c
                      FROM intent.reservations WHERE policy_id = $1 GROUP BY day) raw
                    FULL JOIN (SELECT day, active, consumed FROM intent.policy_day_totals WHERE policy_id = $1) t USING (day)
                   WHERE coalesce(raw.a, 0) <> coalesce(t.active, 0) OR coalesce(raw.c, 0) <> coalesce(t.consumed, 0))::int AS days,
                  (SELECT count(*) FROM (
                    SELECT intent.call_minute(approved_at) AS minute, count(*) AS n FROM intent.approved_calls WHERE policy_id = $1 GROUP BY 1) raw
                    FULL JOIN (SELECT minute, calls FROM intent.policy_call_minutes WHERE policy_id = $1) m USING (minute)
                   WHERE coalesce(raw.n, 0) <> coalesce(m.calls, 0))::int AS minutes,
                  (SELECT count(*) FROM (
                    SELECT intent.settlement_hour(settled_at) AS hour, sum(settled_amount) AS settled FROM intent.reservations
                     WHERE policy_id = $1 AND state = 'CONSUMED' GROUP BY 1) raw
                    FULL JOIN (SELECT hour, settled FROM intent.policy_settled_hours WHERE policy_id = $1) h USING (hour)
                   WHERE coalesce(raw.settled, 0) <> coalesce(h.settled, 0))::int AS hours`,
            [policy.policyId],
          );
          expect(drift.rows[0]).toEqual({ days: 0, minutes: 0, hours: 0 });
        },
      ),
      { numRuns: 40 },
    );
  });

  it('keeps one counter row per minute, and counts an hour of calls from them exactly', async () => {
    const policy = await newPolicy({
      dailyBudget: '1000000.00',
      cooldowns: { sameServiceMinutes: 0 },
      rateLimit: { callsPerHour: 100_000 },
    });
    // 120 approvals over the last hour, two per minute.
    const minutesUsed = new Set<number>();
    for (let minute = 59; minute >= 0; minute -= 1) {
      for (const offset of [5_000, 35_000]) {
        clockMs = NOW_MS - minute * 60_000 - offset;
        minutesUsed.add(Math.floor(clockMs / 60_000));
        expect(
          (await preflightPayment(ctx, policy.policyId, intentFor(policy), null)).decision,
        ).toBe('APPROVED');
      }
    }
    clockMs = NOW_MS;
    const intent = validIntent(intentFor(policy), new Date(clockMs));
    const read = await inTransaction((client) =>
      lockAndReadPreflight(client, policy.policyId, intent, new Date(clockMs)),
    );
    expect(read.window.approvedCallsLastHour).toBe(120);
    expect(read.window.reservedTodayAtomic).toBe(
      (await rawWindow(db.pool, policy.policyId, read.policy, new Date(clockMs), null))
        .reservedTodayAtomic,
    );
    const minutes = await db.pool.query(
      'SELECT count(*)::int AS n, sum(calls)::int AS calls FROM intent.policy_call_minutes WHERE policy_id = $1',
      [policy.policyId],
    );
    // One row per minute that had calls, however many calls it had.
    expect(minutes.rows[0]).toEqual({ n: minutesUsed.size, calls: 120 });
    expect(minutesUsed.size).toBeLessThanOrEqual(61);
  });
});
