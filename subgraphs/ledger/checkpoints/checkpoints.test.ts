// Balance checkpoints (ledger migration 0011): every balance the ledger reads (balance_of,
// account_balances, kind_balances, trial_balance, the treasury snapshot) is a checkpoint plus the
// entries after it, and must equal the sum of every entry, whatever was posted around the
// checkpoints, concurrently or not; a transaction still inserting entries holds the horizon back
// (its entries are never left behind a checkpoint); and only the checkpoint functions write it.
import fc from 'fast-check';
import type { PoolClient } from 'pg';
import type { TestDatabase } from '../../../platform/db/testDb';
import { ACCOUNT_KINDS, accountId } from '../accounts/names';
import { postGroup, type LedgerEntryInput, type PostGroupInput } from '../posting/writes';
import { createLedgerTestDatabase, registerRails, USDC, USDT0 } from '../test-support';
import {
  advanceCheckpoint,
  checkpointBalances,
  checkpointDue,
  checkpointOverdue,
  checkpointState,
  DEFAULT_CHECKPOINT_POLICY,
} from './checkpoints';

const ASSETS = [USDT0, USDC] as const;
const REFS = ['float', '7', 'domains.example'] as const;
const CONNECTIONS = 6;

let db: TestDatabase;
let nextKey = 0;

beforeAll(async () => {
  db = await createLedgerTestDatabase({ subgraphs: ['ledger'], poolSize: CONNECTIONS + 2 });
  await registerRails(db.pool);
});

afterAll(async () => {
  await db?.drop();
});

const groupArbitrary = fc
  .record({
    asset: fc.constantFrom(...ASSETS),
    lines: fc.array(
      fc.record({
        kind: fc.constantFrom(...ACCOUNT_KINDS),
        ref: fc.constantFrom(...REFS),
        amount: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).filter((n) => n !== 0n),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  })
  .filter(({ lines }) => lines.reduce((sum, line) => sum + line.amount, 0n) !== 0n)
  .map(({ asset, lines }) => {
    const entries: LedgerEntryInput[] = lines.map((line) => ({
      account: accountId(line.kind, asset, line.ref),
      amountAtomic: line.amount,
    }));
    const sum = entries.reduce((total, entry) => total + entry.amountAtomic, 0n);
    entries.push({ account: accountId('TREASURY', asset, 'float'), amountAtomic: -sum });
    return { kind: 'TREASURY_TRANSFER' as const, asset, entries };
  });

type Step =
  | {
      readonly op: 'post';
      readonly groups: Array<Pick<PostGroupInput, 'kind' | 'asset' | 'entries'>>;
    }
  | { readonly op: 'checkpoint' };

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .array(groupArbitrary, { minLength: 1, maxLength: 8 })
      .map((groups) => ({ op: 'post' as const, groups })),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'checkpoint' as const }) },
);

/** Every figure the views give, beside the same figure summed from every entry. */
async function assertViewsMatchEntries(): Promise<void> {
  const accounts = await db.pool.query<{ view: string; raw: string }>(
    `SELECT json_build_array(b.balance::text, b.entry_count::text, b.last_entry_seq::text, ledger.balance_of(b.account_id)::text)::text AS view,
            json_build_array(r.balance::text, r.entry_count::text, r.last_entry_seq::text, r.balance::text)::text AS raw
       FROM ledger.account_balances b
       CROSS JOIN LATERAL (SELECT coalesce(sum(e.amount), 0) AS balance, count(*) AS entry_count, max(e.seq) AS last_entry_seq
                             FROM ledger.entries e WHERE e.account_id = b.account_id) r`,
  );
  for (const row of accounts.rows) expect(row.view).toBe(row.raw);
  const trial = await db.pool.query<{ view: string; raw: string }>(
    `SELECT json_build_array(t.asset, t.debits::text, t.credits::text, t.net::text, t.entry_count::text)::text AS view,
            json_build_array(t.asset, r.debits::text, r.credits::text, r.net::text, r.entry_count::text)::text AS raw
       FROM ledger.trial_balance t
       CROSS JOIN LATERAL (SELECT coalesce(sum(e.amount) FILTER (WHERE e.amount > 0), 0) AS debits,
                                  coalesce(-sum(e.amount) FILTER (WHERE e.amount < 0), 0) AS credits,
                                  coalesce(sum(e.amount), 0) AS net, count(e.seq) AS entry_count
                             FROM ledger.entries e WHERE e.asset = t.asset) r`,
  );
  expect(trial.rows).toHaveLength(ASSETS.length);
  for (const row of trial.rows) expect(row.view).toBe(row.raw);
  const kinds = await db.pool.query<{ view: string | null; raw: string | null }>(
    `WITH raw AS (SELECT a.asset, a.kind, sum(e.amount::numeric) AS balance, count(*) AS entry_count
                    FROM ledger.entries e JOIN ledger.accounts a ON a.account_id = e.account_id
                   GROUP BY a.asset, a.kind)
     SELECT json_build_array(v.asset, v.kind, v.balance::text, v.entry_count::text)::text AS view,
            json_build_array(r.asset, r.kind, r.balance::text, r.entry_count::text)::text AS raw
       FROM ledger.kind_balances v FULL JOIN raw r ON r.asset = v.asset AND r.kind = v.kind`,
  );
  for (const row of kinds.rows) expect(row.view).toBe(row.raw);
}

async function post(groups: Array<Pick<PostGroupInput, 'kind' | 'asset' | 'entries'>>) {
  await Promise.all(
    groups.map((group) =>
      postGroup(db.pool, { ...group, idempotencyKey: `checkpoint:${nextKey++}` }),
    ),
  );
}

/** One group: `amount` into the asset's treasury float, out of an owner's obligation. */
async function postToFloat(asset: string, amount: bigint): Promise<void> {
  await post([
    {
      kind: 'TREASURY_TRANSFER',
      asset,
      entries: [
        { account: accountId('TREASURY', asset, 'float'), amountAtomic: amount },
        { account: accountId('USER_OBLIGATION', asset, '7'), amountAtomic: -amount },
      ],
    },
  ]);
}

describe('the balances read through a checkpoint', () => {
  it('equal the sums of every entry, with checkpoints taken between postings and during them', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArbitrary, { minLength: 4, maxLength: 16 }), async (steps) => {
        // A checkpoint step runs beside the next posting step, not after it.
        for (let i = 0; i < steps.length; i += 1) {
          const step = steps[i]!;
          if (step.op === 'post') await post(step.groups);
          else {
            const next = steps[i + 1];
            const beside = next?.op === 'post' ? post(next.groups) : Promise.resolve();
            if (next?.op === 'post') i += 1;
            await Promise.all([advanceCheckpoint(db.pool, 5_000), beside]);
          }
        }
        await assertViewsMatchEntries();
      }),
      { numRuns: 25 },
    );
    const state = await checkpointState(db.pool);
    expect(state.throughSeq).toBeGreaterThan(0n);
    await advanceCheckpoint(db.pool, 5_000);
    expect((await checkpointState(db.pool)).throughSeq).toBe(state.lastSeq);
    await assertViewsMatchEntries();
  });

  it('give the treasury snapshot the float balance the entries sum to', async () => {
    await postToFloat(USDT0, 1_000n);
    await advanceCheckpoint(db.pool, 5_000);
    await postToFloat(USDT0, 7n);
    const { rows } = await db.pool.query<{ ledger: string; raw: string }>(
      `SELECT (ledger.record_treasury_snapshot($1, $2, 0, 1)).ledger_balance::text AS ledger,
              (SELECT coalesce(sum(amount), 0) FROM ledger.entries WHERE account_id = $3)::text AS raw`,
      [USDT0, `0x${'ab'.repeat(20)}`, accountId('TREASURY', USDT0, 'float')],
    );
    expect(rows[0]!.ledger).toBe(rows[0]!.raw);
  });
});

describe('the checkpoint horizon', () => {
  async function openPosting(): Promise<PoolClient> {
    const client = await db.pool.connect();
    await client.query('BEGIN');
    await postGroup(client, {
      kind: 'TREASURY_TRANSFER',
      asset: USDC,
      entries: [
        { account: accountId('TREASURY', USDC, 'float'), amountAtomic: 55n },
        { account: accountId('USER_OBLIGATION', USDC, 'late'), amountAtomic: -55n },
      ],
      idempotencyKey: `late:${nextKey++}`,
    });
    return client;
  }

  it('is not marked while a transaction inserting entries is open, and nothing moves', async () => {
    const open = await openPosting();
    try {
      const before = await checkpointState(db.pool);
      const busy = await advanceCheckpoint(db.pool, 100);
      expect(busy).toEqual({
        marked: false,
        from: before.throughSeq,
        throughSeq: before.throughSeq,
      });
      expect((await checkpointState(db.pool)).throughSeq).toBe(before.throughSeq);
    } finally {
      await open.query('ROLLBACK');
      open.release();
    }
  });

  it('waits for that transaction, so the entries it commits late are counted, never left behind', async () => {
    // A posting opened first draws the lower seqs; one committed after it draws higher ones.
    const open = await openPosting();
    const advanced = advanceCheckpoint(db.pool, 5_000);
    try {
      await new Promise((resolve) => setTimeout(resolve, 150));
      await open.query('COMMIT');
    } finally {
      open.release();
    }
    const done = await advanced;
    expect(done.marked).toBe(true);
    const late = await db.pool.query<{ max: string }>(
      `SELECT max(seq)::text AS max FROM ledger.entries WHERE account_id = $1`,
      [accountId('USER_OBLIGATION', USDC, 'late')],
    );
    expect(done.throughSeq).toBeGreaterThanOrEqual(BigInt(late.rows[0]!.max));
    const counted = await db.pool.query<{ balance: string }>(
      'SELECT balance::text FROM ledger.account_checkpoints WHERE account_id = $1',
      [accountId('USER_OBLIGATION', USDC, 'late')],
    );
    expect(counted.rows[0]!.balance).toBe('-55');
    await assertViewsMatchEntries();
  });

  it('restores the caller’s lock timeout after a mark that was not granted', async () => {
    const open = await openPosting();
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query("SET LOCAL lock_timeout = '7s'");
      const marked = await client.query<{ seq: string | null }>(
        'SELECT ledger.mark_checkpoint_horizon(20)::text AS seq',
      );
      expect(marked.rows[0]!.seq).toBeNull();
      const setting = await client.query<{ lock_timeout: string }>('SHOW lock_timeout');
      expect(setting.rows[0]!.lock_timeout).toBe('7s');
      await client.query('ROLLBACK');
    } finally {
      client.release();
      await open.query('ROLLBACK');
      open.release();
    }
  });

  it('is refused (55000) while the entries identity caches seqs, which could hand a later insert a lower one', async () => {
    await db.adminPool.query('ALTER SEQUENCE ledger.entries_seq_seq CACHE 20');
    try {
      await expect(
        db.pool.query('SELECT ledger.mark_checkpoint_horizon(50)'),
      ).rejects.toMatchObject({ code: '55000' });
    } finally {
      await db.adminPool.query('ALTER SEQUENCE ledger.entries_seq_seq CACHE 1');
    }
    expect((await advanceCheckpoint(db.pool, 5_000)).marked).toBe(true);
  });

  it('refuses a lock timeout out of bounds (22023)', async () => {
    for (const timeout of [0, -1, 10_001])
      await expect(
        db.pool.query('SELECT ledger.mark_checkpoint_horizon($1)', [timeout]),
      ).rejects.toMatchObject({ code: '22023' });
  });
});

describe('the worker’s checkpoint step', () => {
  it('is due after enough new entries, or after long enough with some; overdue at twice that age', () => {
    const policy = { ...DEFAULT_CHECKPOINT_POLICY, minEntries: 10, maxAgeMs: 60_000 };
    const takenAt = new Date('2026-11-29T10:00:00Z');
    const at = (ms: number) => new Date(takenAt.getTime() + ms);
    const state = (through: bigint, last: bigint) => ({
      throughSeq: through,
      takenAt,
      lastSeq: last,
    });
    expect(checkpointDue(state(5n, 5n), policy, at(3_600_000))).toBe(false);
    expect(checkpointDue(state(5n, 14n), policy, at(1_000))).toBe(false);
    expect(checkpointDue(state(5n, 15n), policy, at(1_000))).toBe(true);
    expect(checkpointDue(state(5n, 6n), policy, at(59_999))).toBe(false);
    expect(checkpointDue(state(5n, 6n), policy, at(60_000))).toBe(true);
    expect(checkpointOverdue(state(5n, 6n), at(119_999), policy)).toBe(false);
    expect(checkpointOverdue(state(5n, 6n), at(120_000), policy)).toBe(true);
  });

  it('advances the checkpoint when due and leaves it when not', async () => {
    await postToFloat(USDT0, 3n);
    const policy = { ...DEFAULT_CHECKPOINT_POLICY, minEntries: 1_000_000, maxAgeMs: 3_600_000 };
    const now = new Date();
    expect((await checkpointBalances(db.pool, now, policy)).kind).toBe('NOT_DUE');
    const due = await checkpointBalances(db.pool, now, { ...policy, minEntries: 1 });
    expect(due.kind).toBe('ADVANCED');
    const state = await checkpointState(db.pool);
    expect(state.throughSeq).toBe(state.lastSeq);
    expect((await checkpointBalances(db.pool, now, { ...policy, minEntries: 1 })).kind).toBe(
      'NOT_DUE',
    );
    await assertViewsMatchEntries();
  });
});
