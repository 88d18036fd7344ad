// The ledger's groups and entries partitioned by month of group id (ledger migration 0014): a
// ledger converted with a history keeps every group, entry, seq and balance, and its keys; a
// posting lands in its month, a group and its entries in the same one; the idempotency key and
// "reversed once" hold across months (ledger.group_keys), also against the owner's direct writes;
// a payment's groups must exist; a month is reached only through its table; and archive detaches
// whole past months, groups with their entries, only once the balance checkpoint holds them, with
// every balance and the trial balance unchanged.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Pool, type PoolClient } from 'pg';
import { migrate } from '../../../platform/db/migrate';
import { projectRoot } from '../../../platform/paths';
import type { TestDatabase } from '../../../platform/db/testDb';
import { withTransaction } from '../../../platform/db/transaction';
import {
  detachMonthPartitions,
  ensureMonthPartitions,
  monthPartitionsOf,
  monthsKeptOpen,
} from '../../../platform/db/monthPartitions';
import { accountId, treasuryAccount } from '../accounts/names';
import { accountBalance } from '../accounts/reads';
import { advanceCheckpoint } from '../checkpoints/checkpoints';
import { postFunding } from '../posting/groupKinds';
import { claimPayment } from '../servicePayments/writes';
import { reverseGroup } from '../posting/writes';
import { createLedgerTestDatabase, intentId, registerRails, USDT0 } from '../test-support';

const treasury = treasuryAccount(USDT0);
const obligation = accountId('USER_OBLIGATION', USDT0, '7');

function key(label: string): string {
  return `${label}:${randomBytes(6).toString('hex')}`;
}

function fund(db: TestDatabase, amountAtomic: bigint, idempotencyKey = key('funding')) {
  return postFunding(db.pool, {
    asset: USDT0,
    amountAtomic,
    policyId: '7',
    intentRef: intentId(1),
    idempotencyKey,
  });
}

/** `YYYY_MM` of a date's UTC month. */
function monthTag(date: Date): string {
  return `${date.getUTCFullYear()}_${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The partitions a group's row and its entries' rows live in. */
async function partitionsOf(db: TestDatabase, groupId: string): Promise<string[]> {
  const { rows } = await db.adminPool.query<{ part: string }>(
    `SELECT tableoid::regclass::text AS part FROM ledger.groups WHERE group_id = $1
     UNION ALL
     SELECT DISTINCT tableoid::regclass::text FROM ledger.entries WHERE group_id = $1`,
    [groupId],
  );
  return rows.map((row) => row.part);
}

/**
 * A funding group made at `at`, as the ledger would have made it then (its id from
 * ledger.new_group_id, its key claimed), written by the owner: history for a past month.
 */
async function historicFunding(
  client: PoolClient,
  at: string,
  amount: bigint,
  idempotencyKey = key('history'),
): Promise<string> {
  const { rows } = await client.query<{ id: string }>(
    'SELECT ledger.new_group_id($1::timestamptz) AS id',
    [at],
  );
  const id = rows[0]!.id;
  await client.query('INSERT INTO ledger.group_keys (idempotency_key, group_id) VALUES ($1, $2)', [
    idempotencyKey,
    id,
  ]);
  await client.query(
    `INSERT INTO ledger.groups (group_id, kind, asset, entry_count, idempotency_key, policy_id, created_at)
     VALUES ($1, 'FUNDING', $2, 2, $3, '7', $4)`,
    [id, USDT0, idempotencyKey, at],
  );
  await client.query(
    `INSERT INTO ledger.entries (group_id, entry_no, account_id, asset, amount, entry_count)
     VALUES ($1, 1, $2, $4, $5, 2), ($1, 2, $3, $4, $6, 2)`,
    [id, treasury, obligation, USDT0, amount.toString(), (-amount).toString()],
  );
  return id;
}

async function trialNet(
  db: TestDatabase,
): Promise<{ net: bigint; debits: bigint; entries: bigint }> {
  const { rows } = await db.pool.query<{ net: string; debits: string; entries: string }>(
    'SELECT net::text, debits::text, entry_count::text AS entries FROM ledger.trial_balance WHERE asset = $1',
    [USDT0],
  );
  return {
    net: BigInt(rows[0]!.net),
    debits: BigInt(rows[0]!.debits),
    entries: BigInt(rows[0]!.entries),
  };
}

describe('a ledger converted with a history in it', () => {
  let db: TestDatabase;
  let rootDir: string;
  const before: { groups: unknown[]; entries: unknown[]; treasury: bigint } = {
    groups: [],
    entries: [],
    treasury: 0n,
  };
  let reversed = '';
  const firstKey = key('first');

  beforeAll(async () => {
    db = await createLedgerTestDatabase({ subgraphs: [] });
    rootDir = mkdtempSync(path.join(os.tmpdir(), 'ledger-before-months-'));
    cpSync(
      path.join(projectRoot(), 'subgraphs', 'ledger', 'migrations'),
      path.join(rootDir, 'ledger', 'migrations'),
      {
        recursive: true,
        filter: (source) => {
          const version = /(\d{4})_[a-z0-9_]+\.sql$/.exec(source)?.[1];
          return version === undefined || Number(version) < 14;
        },
      },
    );
    const migrator = new Pool({ connectionString: db.ownerUrl, max: 1 });
    try {
      await migrate(migrator, { subgraphs: ['ledger'], rootDir });
      await registerRails(db.pool);
      reversed = await fund(db, 100n, firstKey);
      await fund(db, 25n);
      await reverseGroup(db.pool, {
        groupId: reversed,
        reason: 'posted twice',
        idempotencyKey: 'reversal:first',
      });
      await fund(db, 7n);
      before.groups = (await db.adminPool.query('SELECT * FROM ledger.groups ORDER BY seq')).rows;
      before.entries = (await db.adminPool.query('SELECT * FROM ledger.entries ORDER BY seq')).rows;
      before.treasury = await accountBalance(db.pool, treasury);
      await migrate(migrator, { subgraphs: ['ledger'] });
    } finally {
      await migrator.end();
    }
  });

  afterAll(async () => {
    await db?.drop();
    if (rootDir) rmSync(rootDir, { recursive: true, force: true });
  });

  test('keeps every group, entry, seq and balance, now in their month', async () => {
    const groups = await db.adminPool.query('SELECT * FROM ledger.groups ORDER BY seq');
    const entries = await db.adminPool.query('SELECT * FROM ledger.entries ORDER BY seq');
    expect(groups.rows).toEqual(before.groups);
    expect(entries.rows).toEqual(before.entries);
    expect(groups.rows).toHaveLength(4);
    expect(await accountBalance(db.pool, treasury)).toBe(before.treasury);
    expect(before.treasury).toBe(32n);
    const month = `_p${monthTag(new Date())}`;
    for (const group of groups.rows as { group_id: string }[])
      expect(await partitionsOf(db, group.group_id)).toEqual([
        `ledger.groups${month}`,
        `ledger.entries${month}`,
      ]);
    // The seqs go on after the last one.
    const next = await fund(db, 1n);
    const { rows } = await db.adminPool.query<{ seq: string }>(
      'SELECT seq::text FROM ledger.groups WHERE group_id = $1',
      [next],
    );
    const last = (groups.rows.at(-1) as { seq: string }).seq;
    expect(BigInt(rows[0]!.seq)).toBeGreaterThan(BigInt(last));
  });

  test('analyzes the months holding rows and leaves the empty ones never analyzed', async () => {
    // Never analyzed, an empty month is planned as holding some pages, so the posting path's
    // cached lookups read it by index as it fills; analyzed empty, they would scan it.
    const { rows } = await db.adminPool.query<{ part: string; analyzed: boolean }>(
      `SELECT c.relname AS part, c.reltuples >= 0 AS analyzed
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent IN ('ledger.groups'::regclass, 'ledger.entries'::regclass)`,
    );
    const month = `_p${monthTag(new Date())}`;
    expect(
      rows
        .filter((row) => row.analyzed)
        .map((row) => row.part)
        .sort(),
    ).toEqual([`entries${month}`, `groups${month}`]);
    expect(rows.length).toBeGreaterThan(2);
  });

  test('keeps the keys: a replay returns the first group, a second reversal is refused', async () => {
    expect(await fund(db, 100n, firstKey)).toBe(reversed);
    await expect(fund(db, 99n, firstKey)).rejects.toMatchObject({
      code: 'LEDGER_IDEMPOTENCY_CONFLICT',
    });
    await expect(
      reverseGroup(db.pool, { groupId: reversed, reason: 'again', idempotencyKey: key('again') }),
    ).rejects.toMatchObject({ code: 'LEDGER_ALREADY_REVERSED' });
  });
});

describe('the ledger by month', () => {
  let db: TestDatabase;
  let owner: Pool;

  beforeAll(async () => {
    // The policies' and the decisions' schemas too: the worker's ensure makes their months as well.
    db = await createLedgerTestDatabase({ subgraphs: ['ledger', 'policy', 'intent'] });
    await registerRails(db.pool);
    owner = new Pool({ connectionString: db.ownerUrl, max: 2 });
    owner.on('error', () => undefined);
    await fund(db, 1_000n);
  });

  afterAll(async () => {
    await owner?.end();
    await db?.drop();
  });

  test('a posting lands in its month, the group with its entries', async () => {
    const id = await fund(db, 5n);
    const month = monthTag(new Date());
    expect(await partitionsOf(db, id)).toEqual([
      `ledger.groups_p${month}`,
      `ledger.entries_p${month}`,
    ]);
    const groups = await monthPartitionsOf(db.pool, 'ledger.groups');
    const entries = await monthPartitionsOf(db.pool, 'ledger.entries');
    expect(groups.at(-1)).toBe('ledger.groups_pdefault');
    expect(entries.map((name) => name.replace('entries', 'groups'))).toEqual(groups);
  });

  test("the worker's ensure makes months of groups and entries in pairs, once", async () => {
    const at = new Date('2069-02-10T00:00:00Z');
    const made = await ensureMonthPartitions(db.pool, at, 1);
    expect(
      made
        .filter((name) => name.startsWith('ledger.groups') || name.startsWith('ledger.entries'))
        .sort(),
    ).toEqual([
      'ledger.entries_p2069_02',
      'ledger.entries_p2069_03',
      'ledger.groups_p2069_02',
      'ledger.groups_p2069_03',
    ]);
    expect(await ensureMonthPartitions(db.pool, at, 1)).toEqual([]);
    // The service may read a month, never write it; and a month is guarded as its table is.
    await expect(db.pool.query('SELECT * FROM ledger.groups_p2069_02')).resolves.toMatchObject({
      rowCount: 0,
    });
    await expect(
      db.pool.query(
        "INSERT INTO ledger.group_keys (idempotency_key, group_id) VALUES ('k', 'lg_000000000000000000000001')",
      ),
    ).rejects.toThrow(/permission denied/);
    await expect(
      db.pool.query(
        "INSERT INTO ledger.entries_p2069_02 (group_id, entry_no, seq, account_id, asset, amount, entry_count) VALUES ('lg_x', 1, 1, 'a', 'b', 1, 2)",
      ),
    ).rejects.toThrow(/permission denied/);
    const id = await withTransaction(db.adminPool, (client) =>
      historicFunding(client, '2069-02-11T00:00:00Z', 3n),
    );
    expect(await partitionsOf(db, id)).toEqual([
      'ledger.groups_p2069_02',
      'ledger.entries_p2069_02',
    ]);
    const admin = await db.adminPool.connect();
    try {
      await admin.query("SET session_replication_role = 'replica'");
      for (const statement of [
        'UPDATE ledger.entries_p2069_02 SET amount = 1 WHERE entry_no = 1',
        'DELETE FROM ledger.groups_p2069_02',
        'TRUNCATE ledger.entries_p2069_02',
        'UPDATE ledger.group_keys SET group_id = group_id',
      ])
        await expect(admin.query(statement)).rejects.toThrow(/LEDGER_APPEND_ONLY/);
    } finally {
      await admin.query("SET session_replication_role = 'origin'");
      admin.release();
    }
  });

  test('keys hold across months, also against the owner writing groups directly', async () => {
    const taken = key('taken');
    const first = await fund(db, 10n, taken);
    // Another month, the same key, balanced: refused at COMMIT, as the unique key refused it.
    const reuse = withTransaction(db.adminPool, async (client) => {
      const { rows } = await client.query<{ id: string }>(
        "SELECT ledger.new_group_id('2069-03-01T00:00:00Z') AS id",
      );
      await client.query(
        `INSERT INTO ledger.groups (group_id, kind, asset, entry_count, idempotency_key)
         VALUES ($1, 'FUNDING', $2, 2, $3)`,
        [rows[0]!.id, USDT0, taken],
      );
      await client.query(
        `INSERT INTO ledger.entries (group_id, entry_no, account_id, asset, amount, entry_count)
         VALUES ($1, 1, $2, $4, 4, 2), ($1, 2, $3, $4, -4, 2)`,
        [rows[0]!.id, treasury, obligation, USDT0],
      );
    });
    await expect(reuse).rejects.toMatchObject({ code: '23505', constraint: 'group_keys_pkey' });
    // Without claiming a key at all: refused the same way.
    const unclaimed = withTransaction(db.adminPool, async (client) => {
      const { rows } = await client.query<{ id: string }>(
        "SELECT ledger.new_group_id('2069-03-02T00:00:00Z') AS id",
      );
      await client.query(
        `INSERT INTO ledger.groups (group_id, kind, asset, entry_count, idempotency_key)
         VALUES ($1, 'FUNDING', $2, 2, $3)`,
        [rows[0]!.id, USDT0, key('unclaimed')],
      );
      await client.query(
        `INSERT INTO ledger.entries (group_id, entry_no, account_id, asset, amount, entry_count)
         VALUES ($1, 1, $2, $4, 4, 2), ($1, 2, $3, $4, -4, 2)`,
        [rows[0]!.id, treasury, obligation, USDT0],
      );
    });
    await expect(unclaimed).rejects.toMatchObject({ code: '23505', constraint: 'group_keys_pkey' });
    expect(await fund(db, 10n, taken)).toBe(first);

    // A group of a past month is reversed this month, once.
    const old = await withTransaction(db.adminPool, (client) =>
      historicFunding(client, '2069-03-05T00:00:00Z', 8n),
    );
    const reversal = await reverseGroup(db.pool, {
      groupId: old,
      reason: 'wrong month',
      idempotencyKey: 'reversal:old',
    });
    expect(await partitionsOf(db, reversal)).toEqual([
      `ledger.groups_p${monthTag(new Date())}`,
      `ledger.entries_p${monthTag(new Date())}`,
    ]);
    expect(
      await reverseGroup(db.pool, {
        groupId: old,
        reason: 'wrong month',
        idempotencyKey: 'reversal:old',
      }),
    ).toBe(reversal);
    await expect(
      reverseGroup(db.pool, { groupId: old, reason: 'again', idempotencyKey: 'reversal:again' }),
    ).rejects.toMatchObject({ code: 'LEDGER_ALREADY_REVERSED' });
  });

  test("a payment's groups must exist when they are set", async () => {
    const { payment } = await claimPayment(
      db.pool,
      {
        network: 'eip155:196',
        asset: '0x00000000000000000000000000000000000000c4',
        payer: `0x${randomBytes(20).toString('hex')}`,
        nonce: `0x${randomBytes(32).toString('hex')}`,
        payTo: `0x${'11'.repeat(20)}`,
        amountAtomic: 10_000n,
        validBefore: 2_000_000_000n,
        route: 'GET /ping_service',
        requestDigest: 'a'.repeat(64),
      },
      30_000,
    );
    const existing = await fund(db, 3n);
    const set = (group: string) =>
      db.adminPool.query(
        'UPDATE ledger.service_payments SET clear_group_id = $2 WHERE payment_id = $1',
        [payment.paymentId, group],
      );
    await expect(set('lg_000000000000000000000001')).rejects.toMatchObject({
      code: '23503',
      constraint: 'service_payments_clear_group_id_fkey',
    });
    await expect(set(existing)).resolves.toMatchObject({ rowCount: 1 });
  });

  test('archive detaches whole past months with their entries, only once the checkpoint holds them, the books unchanged', async () => {
    await ensureMonthPartitions(db.pool, new Date('2020-01-10T00:00:00Z'), 1);
    const january = key('january');
    await withTransaction(db.adminPool, async (client) => {
      await historicFunding(client, '2020-01-20T00:00:00Z', 40n, january);
      await historicFunding(client, '2020-02-20T00:00:00Z', 2n);
    });
    await advanceCheckpoint(db.pool);
    // A February group written after the checkpoint: February stays open.
    await withTransaction(db.adminPool, (client) =>
      historicFunding(client, '2020-02-21T00:00:00Z', 1n),
    );
    const books = {
      treasury: await accountBalance(db.pool, treasury),
      trial: await trialNet(db),
    };
    expect(books.trial.net).toBe(0n);

    await expect(
      detachMonthPartitions(db.pool, 'ledger.groups', new Date('2020-03-01T00:00:00Z')),
    ).rejects.toThrow(/permission denied/);
    expect(
      await detachMonthPartitions(owner, 'ledger.groups', new Date('2020-03-01T00:00:00Z')),
    ).toEqual(['ledger.entries_p2020_01', 'ledger.groups_p2020_01']);
    expect(await monthsKeptOpen(owner, new Date('2020-03-01T00:00:00Z'))).toEqual([
      'ledger.groups_p2020_02',
    ]);
    // The balances read the checkpoint plus the entries after it: unchanged.
    expect(await accountBalance(db.pool, treasury)).toBe(books.treasury);
    expect(await trialNet(db)).toEqual(books.trial);
    // The detached month is a table of its own; its key is still a key used.
    const { rows } = await db.adminPool.query<{ n: string }>(
      'SELECT count(*)::text AS n FROM ledger.groups_p2020_01',
    );
    expect(rows[0]!.n).toBe('1');
    await expect(fund(db, 40n, january)).rejects.toMatchObject({
      code: 'LEDGER_IDEMPOTENCY_CONFLICT',
      message: expect.stringMatching(/whose month is archived/),
    });

    // Once the checkpoint has passed February, it goes too; never this month.
    await advanceCheckpoint(db.pool);
    expect(
      await detachMonthPartitions(owner, 'ledger.groups', new Date('2099-01-01T00:00:00Z')),
    ).toEqual(expect.arrayContaining(['ledger.entries_p2020_02', 'ledger.groups_p2020_02']));
    const left = await monthPartitionsOf(db.pool, 'ledger.groups');
    expect(left).toContain(`ledger.groups_p${monthTag(new Date())}`);
    expect(await accountBalance(db.pool, treasury)).toBe(books.treasury);
    expect(await trialNet(db)).toEqual(books.trial);
  });
});
