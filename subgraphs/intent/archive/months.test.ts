// Decisions partitioned by month of decision id (intent migration 0025): a table converted with
// decisions in it keeps every row and id, and a repeat still replays an approval made before; a
// new decision's id begins with its month and lands in that month; the references that were
// foreign keys refuse a missing decision as they did; the worker's ensure makes months that the
// lookup by id then reads; a month is reached only through the table; and archive detaches whole
// past months, stopping at the first one still in use.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { NOW_MS } from '../../../core/test-support/spend-fixtures';
import { migrate } from '../../../platform/db/migrate';
import { projectRoot } from '../../../platform/paths';
import { createTestDatabase, type TestDatabase } from '../../../platform/db/testDb';
import {
  detachMonthPartitions,
  ensureMonthPartitions,
  monthPartitionsOf,
  monthsKeptOpen,
} from '../../../platform/db/monthPartitions';
import { preflightPayment } from '../preflight/dispatch';
import { intentTestKit, type IntentTestKit } from '../test-support';

const MONTH_BITS = 40n;

/** `YYYY_MM` of a date's UTC month. */
function monthTag(date: Date): string {
  return `${date.getUTCFullYear()}_${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The months from January 1970 to a date's UTC month. */
function monthIndex(date: Date): bigint {
  return BigInt((date.getUTCFullYear() - 1970) * 12 + date.getUTCMonth());
}

async function partitionOf(db: TestDatabase, decisionId: string): Promise<string> {
  const { rows } = await db.adminPool.query<{ part: string }>(
    'SELECT tableoid::regclass::text AS part FROM intent.decisions WHERE decision_id = $1',
    [decisionId],
  );
  return rows[0]!.part;
}

/** A decision written at `at` with the id the preflight would have given it then (history). */
async function historicDecision(db: TestDatabase, at: string): Promise<string> {
  const { rows } = await db.adminPool.query<{ id: string }>(
    `INSERT INTO intent.decisions (decision_id, intent_hash, policy_id, decision, outcome, rule_trace, engine, evaluated_at)
     VALUES (intent.decision_id_floor($1) + nextval('intent.decisions_decision_id_seq'), $2, '7', 'BLOCKED', 'BLOCKED',
             '[]', '{}', $1)
     RETURNING decision_id::text AS id`,
    [at, `0x${randomBytes(32).toString('hex')}`],
  );
  return rows[0]!.id;
}

async function reservationOf(db: TestDatabase, decisionId: string, state: string): Promise<string> {
  const id = `rsv_${randomBytes(12).toString('hex')}`;
  await db.adminPool.query(
    `INSERT INTO intent.reservations (reservation_id, decision_id, intent_hash, policy_id, amount, asset, day, state,
                                      expires_at, created_at, updated_at)
     SELECT $1, d.decision_id, d.intent_hash, d.policy_id, 5, 'eip155:196/erc20:0x1', d.evaluated_at::date, $2,
            d.evaluated_at + interval '1 hour', d.evaluated_at, d.evaluated_at
       FROM intent.decisions d WHERE d.decision_id = $3`,
    [id, state, decisionId],
  );
  return id;
}

async function receiptOf(db: TestDatabase, decisionId: string, state: string): Promise<string> {
  const id = `0x${randomBytes(32).toString('hex')}`;
  await db.adminPool.query(
    `INSERT INTO intent.decision_receipts (receipt_id, decision_id, intent_hash, state, created_at)
     SELECT $1, d.decision_id, d.intent_hash, $2, d.evaluated_at FROM intent.decisions d WHERE d.decision_id = $3`,
    [id, state, decisionId],
  );
  return id;
}

describe('decisions converted with a history in them', () => {
  let db: TestDatabase;
  let rootDir: string;
  let kit: IntentTestKit;
  let before: unknown[] = [];
  let beforeReceipts: unknown[] = [];
  let approved: Record<string, unknown> = {};

  beforeAll(async () => {
    db = await createTestDatabase({ subgraphs: [] });
    kit = intentTestKit(db, () => NOW_MS);
    rootDir = mkdtempSync(path.join(os.tmpdir(), 'intent-before-months-'));
    cpSync(path.join(projectRoot(), 'subgraphs'), rootDir, {
      recursive: true,
      filter: (source) => {
        if (/\.ts$/.test(source)) return false;
        const version = /intent\/migrations\/(\d{4})_[a-z0-9_]+\.sql$/.exec(source)?.[1];
        return version === undefined || Number(version) < 25;
      },
    });
    const migrator = new Pool({ connectionString: db.ownerUrl, max: 1 });
    try {
      await migrate(migrator, { rootDir });
      const policy = await kit.newPolicy({
        duplicates: { windowMinutes: 0, keys: ['capability'] },
      });
      approved = await preflightPayment(kit.ctx, policy.policyId, kit.intentFor(policy), null);
      await preflightPayment(
        kit.ctx,
        policy.policyId,
        kit.intentFor(policy, { amount: '999999999999' }),
        null,
      );
      before = (await db.adminPool.query('SELECT * FROM intent.decisions ORDER BY decision_id'))
        .rows;
      beforeReceipts = (
        await db.adminPool.query('SELECT * FROM intent.decision_receipts ORDER BY decision_id')
      ).rows;
      await migrate(migrator);
    } finally {
      await migrator.end();
    }
  });

  afterAll(async () => {
    await db?.drop();
    if (rootDir) rmSync(rootDir, { recursive: true, force: true });
  });

  test('keeps every receipt, beside its decision, its id claimed', async () => {
    const { rows } = await db.adminPool.query(
      'SELECT * FROM intent.decision_receipts ORDER BY decision_id',
    );
    expect(rows).toEqual(beforeReceipts);
    expect(rows).toHaveLength(2);
    for (const row of rows as { receipt_id: string; decision_id: string }[]) {
      const part = await db.adminPool.query<{ part: string }>(
        'SELECT tableoid::regclass::text AS part FROM intent.decision_receipts WHERE receipt_id = $1',
        [row.receipt_id],
      );
      expect(part.rows[0]!.part).toBe('intent.decision_receipts_plegacy');
      const key = await db.adminPool.query(
        'SELECT decision_id::text FROM intent.receipt_keys WHERE receipt_id = $1',
        [row.receipt_id],
      );
      expect(key.rows).toEqual([{ decision_id: row.decision_id }]);
    }
  });

  test('keeps every decision and its id, in the legacy partition', async () => {
    const { rows } = await db.adminPool.query(
      'SELECT * FROM intent.decisions ORDER BY decision_id',
    );
    expect(rows).toEqual(before);
    expect(rows).toHaveLength(2);
    for (const row of rows as { decision_id: string }[]) {
      expect(BigInt(row.decision_id)).toBeLessThan(1n << MONTH_BITS);
      expect(await partitionOf(db, row.decision_id)).toBe('intent.decisions_plegacy');
    }
  });

  test('a repeat of an approval made before the conversion replays it, writing nothing', async () => {
    // The policy is the approval's: ask as the agent would, by its hash under its policy.
    const { rows } = await db.adminPool.query<{ policy_id: string }>(
      'SELECT policy_id FROM intent.decisions WHERE intent_hash = $1',
      [approved.intentHash],
    );
    const again = await preflightPayment(
      kit.ctx,
      rows[0]!.policy_id,
      null,
      approved.intentHash as string,
    );
    expect(again).toEqual(approved);
    expect(again.decision).toBe('APPROVED');
    const count = await db.adminPool.query('SELECT count(*)::int AS n FROM intent.decisions');
    expect(count.rows[0].n).toBe(2);
  });

  test("a new decision's id goes on past the old ones, in its month", async () => {
    const policy = await kit.newPolicy();
    const answer = await preflightPayment(kit.ctx, policy.policyId, kit.intentFor(policy), null);
    const { rows } = await db.adminPool.query<{ id: string }>(
      'SELECT decision_id::text AS id FROM intent.decisions WHERE intent_hash = $1',
      [answer.intentHash],
    );
    const id = BigInt(rows[0]!.id);
    expect(id >> MONTH_BITS).toBe(monthIndex(new Date()));
    // The sequence went on from the last id made before.
    const last = BigInt((before.at(-1) as { decision_id: string }).decision_id);
    expect(id & ((1n << MONTH_BITS) - 1n)).toBeGreaterThan(last);
    expect(await partitionOf(db, rows[0]!.id)).toBe(`intent.decisions_p${monthTag(new Date())}`);
  });
});

describe('decisions by month', () => {
  let db: TestDatabase;
  let kit: IntentTestKit;
  let owner: Pool;

  beforeAll(async () => {
    db = await createTestDatabase();
    kit = intentTestKit(db, () => NOW_MS);
    owner = new Pool({ connectionString: db.ownerUrl, max: 2 });
    owner.on('error', () => undefined);
  });

  afterAll(async () => {
    await owner?.end();
    await db?.drop();
  });

  test('a decision id begins with its month, grows with time and stays a safe JavaScript integer', async () => {
    const policy = await kit.newPolicy({ duplicates: { windowMinutes: 0, keys: ['capability'] } });
    const ids: bigint[] = [];
    for (let i = 0; i < 3; i += 1) {
      const answer = await preflightPayment(kit.ctx, policy.policyId, kit.intentFor(policy), null);
      const { rows } = await db.pool.query<{ id: string }>(
        'SELECT decision_id::text AS id FROM intent.decisions WHERE intent_hash = $1',
        [answer.intentHash],
      );
      ids.push(BigInt(rows[0]!.id));
      expect(await partitionOf(db, rows[0]!.id)).toBe(`intent.decisions_p${monthTag(new Date())}`);
    }
    expect(ids.map((id) => id >> MONTH_BITS)).toEqual(Array(3).fill(monthIndex(new Date())));
    expect([...ids].sort((a, b) => (a < b ? -1 : 1))).toEqual(ids);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toBeLessThan(BigInt(Number.MAX_SAFE_INTEGER));
    // The bounds are the months' own: the first id of a month, from the month's start.
    const { rows } = await db.pool.query<{ jan: string; feb: string; far: string }>(
      `SELECT intent.decision_id_floor('2027-01-31T23:59:59.999Z')::text AS jan,
              intent.decision_id_floor('2027-02-01T00:00:00Z')::text AS feb,
              intent.decision_id_floor('2652-08-31T00:00:00Z')::text AS far`,
    );
    expect(BigInt(rows[0]!.jan)).toBe(((2027n - 1970n) * 12n) << MONTH_BITS);
    expect(BigInt(rows[0]!.feb) - BigInt(rows[0]!.jan)).toBe(1n << MONTH_BITS);
    expect(BigInt(rows[0]!.far) + (1n << MONTH_BITS)).toBeLessThanOrEqual(
      BigInt(Number.MAX_SAFE_INTEGER) + 1n,
    );
  });

  test('a reservation, approved call or receipt naming no decision is refused, as by the foreign keys', async () => {
    const missing = ((1n << MONTH_BITS) * monthIndex(new Date()) + 999_999_999n).toString();
    const hash = `0x${'ab'.repeat(32)}`;
    const cases: [string, string, unknown[]][] = [
      [
        'reservations_decision_id_fkey',
        `INSERT INTO intent.reservations (reservation_id, decision_id, intent_hash, policy_id, amount, asset, day, state,
                                          expires_at, created_at, updated_at)
         VALUES ($1, $2, $3, '7', 5, 'a', now()::date, 'ACTIVE', now() + interval '1 hour', now(), now())`,
        [`rsv_${randomBytes(12).toString('hex')}`, missing, hash],
      ],
      [
        'approved_calls_decision_id_fkey',
        `INSERT INTO intent.approved_calls (decision_id, policy_id, intent_hash, provider, agent_id, capability,
                                            recipient, amount, item_hash, endpoint, approved_at)
         VALUES ($1, '7', $2, 'p', 'a', 'c', 'r', 5, 'i', 'e', now())`,
        [missing, hash],
      ],
      [
        'decision_receipts_decision_id_fkey',
        `INSERT INTO intent.decision_receipts (receipt_id, decision_id, intent_hash, state, created_at)
         VALUES ($1, $2, $3, 'PENDING', now())`,
        [`0x${randomBytes(32).toString('hex')}`, missing, hash],
      ],
    ];
    // As the owner (whom no grant stops): the database itself refuses.
    for (const [constraint, sql, params] of cases)
      await expect(owner.query(sql, params)).rejects.toMatchObject({ code: '23503', constraint });
    // A decision that exists is taken, in any month, the legacy ids' included.
    const past = await historicDecision(db, '2020-06-15T00:00:00Z');
    await expect(receiptOf(db, past, 'ANCHORED')).resolves.toMatch(/^0x/);
  });

  test('a receipt lives beside its decision; a receipt id is taken once, across months, and kept', async () => {
    const policy = await kit.newPolicy();
    const answer = await preflightPayment(kit.ctx, policy.policyId, kit.intentFor(policy), null);
    const { rows } = await db.adminPool.query<{ id: string; receipt: string; part: string }>(
      `SELECT r.decision_id::text AS id, r.receipt_id AS receipt, r.tableoid::regclass::text AS part
         FROM intent.decision_receipts r JOIN intent.decisions d ON d.decision_id = r.decision_id
        WHERE d.intent_hash = $1`,
      [answer.intentHash],
    );
    expect(rows).toEqual([
      {
        id: expect.any(String),
        receipt: answer.receiptId,
        part: `intent.decision_receipts_p${monthTag(new Date())}`,
      },
    ]);
    expect(await partitionOf(db, rows[0]!.id)).toBe(`intent.decisions_p${monthTag(new Date())}`);
    // The same receipt id for a decision of another month: refused by the key, as the owner.
    const past = await historicDecision(db, '2020-07-15T00:00:00Z');
    await expect(
      owner.query(
        `INSERT INTO intent.decision_receipts (receipt_id, decision_id, intent_hash, state, created_at)
         VALUES ($1, $2, $3, 'PENDING', now())`,
        [answer.receiptId, past, `0x${'cd'.repeat(32)}`],
      ),
    ).rejects.toMatchObject({ code: '23505', constraint: 'receipt_keys_pkey' });
    // A second receipt for one decision: refused by the primary key (its month's index).
    await expect(
      owner.query(
        `INSERT INTO intent.decision_receipts (receipt_id, decision_id, intent_hash, state, created_at)
         VALUES ($1, $2, $3, 'PENDING', now())`,
        [`0x${randomBytes(32).toString('hex')}`, rows[0]!.id, `0x${'cd'.repeat(32)}`],
      ),
    ).rejects.toMatchObject({
      code: '23505',
      constraint: `decision_receipts_p${monthTag(new Date())}_pkey`,
    });
    // A receipt keeps its id and its decision.
    await expect(
      owner.query('UPDATE intent.decision_receipts SET receipt_id = $2 WHERE receipt_id = $1', [
        answer.receiptId,
        `0x${randomBytes(32).toString('hex')}`,
      ]),
    ).rejects.toMatchObject({ code: '23514' });
    // The lookup by decision id finds it in its month.
    const found = await db.pool.query('SELECT receipt_id FROM intent.month_decision_receipt($1)', [
      rows[0]!.id,
    ]);
    expect(found.rows).toEqual([{ receipt_id: answer.receiptId }]);
  });

  test("the worker's ensure makes the decisions' months once, and the lookup by id reads them", async () => {
    const at = new Date('2072-03-10T00:00:00Z');
    const made = await ensureMonthPartitions(db.pool, at, 1);
    expect(made.filter((name) => name.startsWith('intent.')).sort()).toEqual([
      'intent.decision_receipts_p2072_03',
      'intent.decision_receipts_p2072_04',
      'intent.decisions_p2072_03',
      'intent.decisions_p2072_04',
    ]);
    expect(await ensureMonthPartitions(db.pool, at, 1)).toEqual([]);
    const id = await historicDecision(db, '2072-04-30T23:59:59Z');
    expect(await partitionOf(db, id)).toBe('intent.decisions_p2072_04');
    const { rows } = await db.pool.query<{ id: string; policy: string }>(
      'SELECT decision_id::text AS id, policy_id AS policy FROM intent.month_decision($1)',
      [id],
    );
    expect(rows).toEqual([{ id, policy: '7' }]);
    // An id in no month made (one in 2090) is in the DEFAULT partition, and found there.
    const far = await historicDecision(db, '2090-01-01T00:00:00Z');
    expect(await partitionOf(db, far)).toBe('intent.decisions_pdefault');
    expect((await db.pool.query('SELECT 1 FROM intent.month_decision($1)', [far])).rowCount).toBe(
      1,
    );
    expect((await db.pool.query('SELECT 1 FROM intent.month_decision($1)', ['42'])).rowCount).toBe(
      0,
    );
    // The service reads a month, never writes it.
    await expect(db.pool.query('SELECT * FROM intent.decisions_p2072_04')).resolves.toMatchObject({
      rowCount: 1,
    });
    await expect(
      db.pool.query('DELETE FROM intent.decisions_p2072_04 WHERE decision_id = $1', [id]),
    ).rejects.toThrow(/permission denied/);
    await expect(
      db.pool.query('UPDATE intent.decisions SET policy_id = $2 WHERE decision_id = $1', [id, '8']),
    ).rejects.toThrow(/permission denied/);
  });

  test('archive detaches whole past months, oldest first, and stops at the first month still in use', async () => {
    await ensureMonthPartitions(db.pool, new Date('2021-01-10T00:00:00Z'), 2);
    const jan = await historicDecision(db, '2021-01-20T00:00:00Z');
    await receiptOf(db, jan, 'ANCHORED');
    await reservationOf(db, jan, 'RELEASED');
    const feb = await historicDecision(db, '2021-02-20T00:00:00Z');
    const febReceipt = await receiptOf(db, feb, 'PENDING');
    const mar = await historicDecision(db, '2021-03-20T00:00:00Z');
    const marReservation = await reservationOf(db, mar, 'ACTIVE');
    // The service may not detach.
    await expect(
      detachMonthPartitions(db.pool, 'intent.decisions', new Date('2021-04-01T00:00:00Z')),
    ).rejects.toMatchObject({ code: '42501' });
    // February's receipt is not anchored: January goes, February and later stay.
    expect(
      await detachMonthPartitions(owner, 'intent.decisions', new Date('2021-04-01T00:00:00Z')),
    ).toEqual(['intent.decision_receipts_p2021_01', 'intent.decisions_p2021_01']);
    expect(
      await monthsKeptOpen(owner, new Date('2021-04-01T00:00:00Z'), 'intent.decisions'),
    ).toEqual(['intent.decisions_p2021_02', 'intent.decisions_p2021_03']);
    // The detached month is a plain table of its own, with its row; the table no longer reads it.
    expect((await db.adminPool.query('SELECT 1 FROM intent.decisions_p2021_01')).rowCount).toBe(1);
    expect(
      (await db.adminPool.query('SELECT 1 FROM intent.decisions WHERE decision_id = $1', [jan]))
        .rowCount,
    ).toBe(0);
    expect(await monthPartitionsOf(db.pool, 'intent.decisions')).not.toContain(
      'intent.decisions_p2021_01',
    );
    // Anchored, February goes; March's reservation is ACTIVE, so March stays.
    await db.adminPool.query(
      "UPDATE intent.decision_receipts SET state = 'ANCHORED' WHERE receipt_id = $1",
      [febReceipt],
    );
    expect(
      await detachMonthPartitions(owner, 'intent.decisions', new Date('2021-04-01T00:00:00Z')),
    ).toEqual(['intent.decision_receipts_p2021_02', 'intent.decisions_p2021_02']);
    // Ended, March goes too; never the current month nor a later one.
    await db.adminPool.query(
      "UPDATE intent.reservations SET state = 'EXPIRED', updated_at = expires_at WHERE reservation_id = $1",
      [marReservation],
    );
    expect(
      await detachMonthPartitions(owner, 'intent.decisions', new Date('2099-01-01T00:00:00Z')),
    ).toEqual(['intent.decision_receipts_p2021_03', 'intent.decisions_p2021_03']);
    // The lookup by id was written again without the detached months; a decision made now is read.
    const policy = await kit.newPolicy();
    const answer = await preflightPayment(kit.ctx, policy.policyId, kit.intentFor(policy), null);
    const { rows } = await db.pool.query<{ id: string }>(
      `SELECT m.decision_id::text AS id FROM intent.decisions d, intent.month_decision(d.decision_id) m
        WHERE d.intent_hash = $1`,
      [answer.intentHash],
    );
    expect(rows).toHaveLength(1);
    expect((await db.pool.query('SELECT 1 FROM intent.month_decision($1)', [mar])).rowCount).toBe(
      0,
    );
  });
});
