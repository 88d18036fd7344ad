// The append-only logs partitioned by month (ledger migration 0013, policy migrations 0015-0016): a log
// converted with rows in it keeps them, their ids and its guard; writes land in their month's
// partition, or in the DEFAULT one when their month is not made; the worker's ensure makes the
// coming months once, side by side safely, and leaves a month whose rows sit in the DEFAULT
// partition alone; a month made later is guarded like the rest and reached only through its log;
// detach takes whole past months out (never the current one), keeps their rows in a table of their
// own, and only the owner may call it.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import { migrate } from './migrate';
import { projectRoot } from '../paths';
import { createTestDatabase, type TestDatabase } from './testDb';
import {
  detachMonthPartitions,
  ensureMonthPartitions,
  MONTHS_AHEAD,
  monthPartitionsOf,
} from './monthPartitions';

/**
 * createTestDatabase, with idle clients' errors swallowed: drop() FORCE-drops the database while a
 * pool may still be closing sockets.
 */
async function testDatabase(
  options: Parameters<typeof createTestDatabase>[0],
): Promise<TestDatabase> {
  const db = await createTestDatabase(options);
  db.pool.on('error', () => undefined);
  return db;
}

/** `YYYY_MM` of a date's UTC month, `months` later. */
function monthTag(date: Date, months = 0): string {
  const d = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1));
  return `${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The partition each operator action's row lives in, by actor. */
async function partitionOfActions(db: TestDatabase): Promise<Record<string, string>> {
  const { rows } = await db.adminPool.query<{ actor: string; part: string }>(
    'SELECT actor, tableoid::regclass::text AS part FROM ledger.operator_actions ORDER BY action_id',
  );
  return Object.fromEntries(rows.map((row) => [row.actor, row.part]));
}

async function insertAction(pool: Pool, actor: string, at?: string): Promise<string> {
  const { rows } = await pool.query<{ action_id: string }>(
    at === undefined
      ? `INSERT INTO ledger.operator_actions (actor, action, payload, result)
         VALUES ($1, 'TREASURY_TRANSFER', '{}', '{"ok":true}') RETURNING action_id::text`
      : `INSERT INTO ledger.operator_actions (actor, action, payload, result, at)
         VALUES ($1, 'TREASURY_TRANSFER', '{}', '{"ok":true}', $2) RETURNING action_id::text`,
    at === undefined ? [actor] : [actor, at],
  );
  return rows[0]!.action_id;
}

describe('logs converted with rows in them', () => {
  let db: TestDatabase;
  let rootDir: string;

  beforeAll(async () => {
    db = await testDatabase({ subgraphs: [] });
    // The ledger and policies as they were before the logs were partitioned, with a history.
    rootDir = mkdtempSync(path.join(os.tmpdir(), 'logs-before-partitions-'));
    const firstPartitioned = { ledger: 13, policy: 15 } as const;
    for (const [set, first] of Object.entries(firstPartitioned)) {
      cpSync(
        path.join(projectRoot(), 'subgraphs', set, 'migrations'),
        path.join(rootDir, set, 'migrations'),
        {
          recursive: true,
          filter: (source) => {
            const version = /(\d{4})_[a-z0-9_]+\.sql$/.exec(source)?.[1];
            return version === undefined || Number(version) < first;
          },
        },
      );
    }
    const migrator = new Pool({ connectionString: db.ownerUrl, max: 1 });
    try {
      await migrate(migrator, { subgraphs: ['ledger', 'policy'], rootDir });
      // The history, written as the superuser (the rows' times are set, as when they were made).
      await db.adminPool.query(
        `INSERT INTO ledger.operator_actions (actor, action, payload, result, at) VALUES
           ('two-years-ago', 'REVERSE_GROUP', '{"g":1}', '{"ok":true}', now() - interval '2 years'),
           ('last-month', 'TREASURY_TRANSFER', '{"g":2}', '{"ok":false}', now() - interval '1 month'),
           ('today', 'TREASURY_TRANSFER', '{"g":3}', '{"ok":true}', now())`,
      );
      await db.adminPool.query(
        `INSERT INTO policy.escalation_events (kind, detail, at)
         VALUES ('REPLY_UNKNOWN_CODE', 'last year', now() - interval '1 year')`,
      );
      await db.adminPool.query(
        `INSERT INTO policy.policy_changes (policy_id, version, change, actor, at)
         VALUES (7, 1, 'CREATED', 'owner', now() - interval '3 months'), (7, 2, 'UPDATED', 'owner', now())`,
      );
      await migrate(migrator, { subgraphs: ['ledger', 'policy'] });
    } finally {
      await migrator.end();
    }
  });

  afterAll(async () => {
    await db?.drop();
    if (rootDir) rmSync(rootDir, { recursive: true, force: true });
  });

  test('keeps every row in its month, the ids going on from the last, and the guard', async () => {
    const now = new Date();
    const { rows } = await db.adminPool.query<{
      action_id: string;
      actor: string;
      payload: unknown;
    }>('SELECT action_id::text, actor, payload FROM ledger.operator_actions ORDER BY action_id');
    expect(rows).toEqual([
      { action_id: '1', actor: 'two-years-ago', payload: { g: 1 } },
      { action_id: '2', actor: 'last-month', payload: { g: 2 } },
      { action_id: '3', actor: 'today', payload: { g: 3 } },
    ]);
    expect(await insertAction(db.pool, 'after')).toBe('4');
    const parts = await partitionOfActions(db);
    // The old month ids are the rows' own months (computed by the server, as the rows' times were).
    const { rows: months } = await db.adminPool.query<{ two: string; last: string }>(
      `SELECT to_char((now() - interval '2 years') AT TIME ZONE 'UTC', 'YYYY_MM') AS two,
              to_char((now() - interval '1 month') AT TIME ZONE 'UTC', 'YYYY_MM') AS last`,
    );
    expect(parts).toEqual({
      'two-years-ago': `ledger.operator_actions_p${months[0]!.two}`,
      'last-month': `ledger.operator_actions_p${months[0]!.last}`,
      today: `ledger.operator_actions_p${monthTag(now)}`,
      after: `ledger.operator_actions_p${monthTag(now)}`,
    });
    // Every month from the oldest row's through three ahead is made, and the DEFAULT partition.
    const made = await monthPartitionsOf(db.pool, 'ledger.operator_actions');
    expect(made).toHaveLength(24 + MONTHS_AHEAD + 1 + 1);
    expect(made.at(-1)).toBe('ledger.operator_actions_pdefault');
    expect(made.at(-2)).toBe(`ledger.operator_actions_p${monthTag(now, MONTHS_AHEAD)}`);
    // Append-only still: the service may not change a row, and the owner's change is refused.
    await expect(db.pool.query("UPDATE ledger.operator_actions SET actor = 'x'")).rejects.toThrow(
      /permission denied/,
    );
    await expect(
      db.adminPool.query("UPDATE ledger.operator_actions SET actor = 'x'"),
    ).rejects.toThrow(/LEDGER_APPEND_ONLY/);
    await expect(db.adminPool.query('DELETE FROM ledger.operator_actions')).rejects.toThrow(
      /LEDGER_APPEND_ONLY/,
    );
    await expect(db.adminPool.query('TRUNCATE ledger.operator_actions')).rejects.toThrow(
      /LEDGER_APPEND_ONLY/,
    );
  });

  test("the policies' logs keep their rows, their months and their sequences too", async () => {
    const { rows: months } = await db.adminPool.query<{ year: string; three: string }>(
      `SELECT to_char((now() - interval '1 year') AT TIME ZONE 'UTC', 'YYYY_MM') AS year,
              to_char((now() - interval '3 months') AT TIME ZONE 'UTC', 'YYYY_MM') AS three`,
    );
    const { rows: events } = await db.adminPool.query<{
      seq: string;
      detail: string;
      part: string;
    }>('SELECT seq::text, detail, tableoid::regclass::text AS part FROM policy.escalation_events');
    expect(events).toEqual([
      { seq: '1', detail: 'last year', part: `policy.escalation_events_p${months[0]!.year}` },
    ]);
    const { rows: changes } = await db.adminPool.query<{
      seq: string;
      change: string;
      part: string;
    }>(
      'SELECT seq::text, change, tableoid::regclass::text AS part FROM policy.policy_changes ORDER BY seq',
    );
    expect(changes).toEqual([
      { seq: '1', change: 'CREATED', part: `policy.policy_changes_p${months[0]!.three}` },
      { seq: '2', change: 'UPDATED', part: `policy.policy_changes_p${monthTag(new Date())}` },
    ]);
    const { rows: next } = await db.pool.query<{ seq: string }>(
      `INSERT INTO policy.policy_changes (policy_id, version, change, actor, at)
       VALUES (7, 3, 'PAUSED', 'owner', now()) RETURNING seq::text`,
    );
    expect(next[0]!.seq).toBe('3');
    await expect(
      db.adminPool.query("UPDATE policy.policy_changes SET actor = 'x'"),
    ).rejects.toThrow(/append-only/);
  });
});

describe('month partitions at work', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    // Every schema with months: the worker's ensure makes them all.
    db = await testDatabase({ subgraphs: ['ledger', 'policy', 'intent'] });
  });

  afterAll(async () => {
    await db?.drop();
  });

  test("a write lands in its month's partition, and in the DEFAULT one when its month is not made", async () => {
    await insertAction(db.pool, 'now');
    await insertAction(db.pool, 'far-future', '2071-05-09T10:00:00Z');
    await insertAction(db.pool, 'far-past', '1999-12-31T23:59:59Z');
    const parts = await partitionOfActions(db);
    expect(parts).toEqual({
      now: `ledger.operator_actions_p${monthTag(new Date())}`,
      'far-future': 'ledger.operator_actions_pdefault',
      'far-past': 'ledger.operator_actions_pdefault',
    });
  });

  test("the worker's ensure makes the coming months once, side by side, past any month the DEFAULT partition holds", async () => {
    // 2071-05 has a row in the DEFAULT partition (the test above): that month stays there.
    const at = new Date('2071-04-15T00:00:00Z');
    const [first, second] = await Promise.all([
      ensureMonthPartitions(db.pool, at),
      ensureMonthPartitions(db.pool, at),
    ]);
    const made = [...first!, ...second!].sort();
    expect(made).toEqual([
      'intent.decision_receipts_p2071_04',
      'intent.decision_receipts_p2071_05',
      'intent.decision_receipts_p2071_06',
      'intent.decision_receipts_p2071_07',
      'intent.decisions_p2071_04',
      'intent.decisions_p2071_05',
      'intent.decisions_p2071_06',
      'intent.decisions_p2071_07',
      'ledger.entries_p2071_04',
      'ledger.entries_p2071_05',
      'ledger.entries_p2071_06',
      'ledger.entries_p2071_07',
      'ledger.groups_p2071_04',
      'ledger.groups_p2071_05',
      'ledger.groups_p2071_06',
      'ledger.groups_p2071_07',
      'ledger.operator_actions_p2071_04',
      'ledger.operator_actions_p2071_06',
      'ledger.operator_actions_p2071_07',
      'ledger.service_payments_p2071_04',
      'ledger.service_payments_p2071_05',
      'ledger.service_payments_p2071_06',
      'ledger.service_payments_p2071_07',
      'policy.escalation_events_p2071_04',
      'policy.escalation_events_p2071_05',
      'policy.escalation_events_p2071_06',
      'policy.escalation_events_p2071_07',
      'policy.policy_changes_p2071_04',
      'policy.policy_changes_p2071_05',
      'policy.policy_changes_p2071_06',
      'policy.policy_changes_p2071_07',
    ]);
    expect(await ensureMonthPartitions(db.pool, at)).toEqual([]);
    // A row of a month made now goes there; the held month's still to the DEFAULT partition.
    await insertAction(db.pool, 'june-2071', '2071-06-01T00:00:00Z');
    await insertAction(db.pool, 'may-2071', '2071-05-31T23:59:59.999Z');
    const parts = await partitionOfActions(db);
    expect(parts['june-2071']).toBe('ledger.operator_actions_p2071_06');
    expect(parts['may-2071']).toBe('ledger.operator_actions_pdefault');
    await expect(ensureMonthPartitions(db.pool, at, 25)).rejects.toThrow(RangeError);
  });

  test('a month made later is guarded like the rest and reached only through its log', async () => {
    await insertAction(db.pool, 'july-2071', '2071-07-04T12:00:00Z');
    // Even a session that skips ordinary triggers (replica) meets the guard: it fires ALWAYS.
    const admin = await db.adminPool.connect();
    try {
      await admin.query("SET session_replication_role = 'replica'");
      await expect(
        admin.query("UPDATE ledger.operator_actions SET actor = 'x' WHERE actor = 'july-2071'"),
      ).rejects.toThrow(/LEDGER_APPEND_ONLY/);
      await expect(
        admin.query("DELETE FROM ledger.operator_actions_p2071_07 WHERE actor = 'july-2071'"),
      ).rejects.toThrow(/LEDGER_APPEND_ONLY/);
    } finally {
      await admin.query("SET session_replication_role = 'origin'");
      admin.release();
    }
    await expect(db.pool.query('SELECT * FROM ledger.operator_actions_p2071_07')).rejects.toThrow(
      /permission denied/,
    );
    await expect(db.pool.query('SELECT * FROM policy.escalation_events_p2071_07')).rejects.toThrow(
      /permission denied/,
    );
    // The escalation log keeps its foreign key and its guard on a month made later.
    await expect(
      db.pool.query(
        "INSERT INTO policy.escalation_events (poll_ref, kind, at) VALUES ('esc_nobody', 'CREATED', '2071-07-01T00:00:00Z')",
      ),
    ).rejects.toThrow(/foreign key/);
    await db.pool.query(
      "INSERT INTO policy.escalation_events (kind, detail, at) VALUES ('REPLY_UNKNOWN_CODE', 'july', '2071-07-01T00:00:00Z')",
    );
    await expect(
      db.adminPool.query("UPDATE policy.escalation_events SET detail = 'x' WHERE detail = 'july'"),
    ).rejects.toThrow(/append-only/);
  });

  test('detach takes whole past months out, never the current one, keeps their rows, and is the owner’s alone', async () => {
    const now = new Date();
    await insertAction(db.pool, 'this-month');
    // Two past months, made as the worker would have made them then.
    await ensureMonthPartitions(db.pool, new Date(Date.UTC(2020, 0, 10)), 1);
    await insertAction(db.pool, 'jan-2020', '2020-01-20T00:00:00Z');
    await insertAction(db.pool, 'feb-2020', '2020-02-20T00:00:00Z');
    await expect(
      detachMonthPartitions(db.pool, 'ledger.operator_actions', new Date('2020-03-01T00:00:00Z')),
    ).rejects.toThrow(/permission denied/);

    const owner = new Pool({ connectionString: db.ownerUrl, max: 1 });
    try {
      // Before 2020-02-15: only January ends by then.
      expect(
        await detachMonthPartitions(
          owner,
          'ledger.operator_actions',
          new Date('2020-02-15T00:00:00Z'),
        ),
      ).toEqual(['ledger.operator_actions_p2020_01']);
      // Before a date far ahead: every month before the current one, and nothing after it.
      const detached = await detachMonthPartitions(
        owner,
        'ledger.operator_actions',
        new Date('2099-01-01T00:00:00Z'),
      );
      // (this database's months before the current one are the two made above)
      expect(detached).toEqual(['ledger.operator_actions_p2020_02']);
    } finally {
      await owner.end();
    }
    const left = await monthPartitionsOf(db.pool, 'ledger.operator_actions');
    expect(left[0]).toBe(`ledger.operator_actions_p${monthTag(now)}`);
    expect(left).toContain('ledger.operator_actions_pdefault');
    // The log no longer shows the detached months; their rows are in tables of their own.
    const actors = Object.keys(await partitionOfActions(db));
    expect(actors).toContain('this-month');
    expect(actors).not.toContain('jan-2020');
    expect(actors).not.toContain('feb-2020');
    const { rows } = await db.adminPool.query<{ actor: string }>(
      'SELECT actor FROM ledger.operator_actions_p2020_01 UNION ALL SELECT actor FROM ledger.operator_actions_p2020_02 ORDER BY 1',
    );
    expect(rows.map((row) => row.actor)).toEqual(['feb-2020', 'jan-2020']);
    // Anything else is refused by name.
    const owner2 = new Pool({ connectionString: db.ownerUrl, max: 1 });
    try {
      await expect(
        owner2.query("SELECT ledger.detach_month_partitions('ledger.groups', now())"),
      ).rejects.toThrow(/PARTITION_TABLE_UNKNOWN/);
      // Each schema's functions keep to their own logs.
      await expect(
        owner2.query(
          "SELECT ledger.ensure_month_partitions('policy.policy_changes', now(), now())",
        ),
      ).rejects.toThrow(/PARTITION_TABLE_UNKNOWN/);
      await expect(
        owner2.query(
          "SELECT ledger.ensure_month_partitions('ledger.operator_actions', now(), now() + interval '11 years')",
        ),
      ).rejects.toThrow(/PARTITION_RANGE_INVALID/);
    } finally {
      await owner2.end();
    }
  });
});
