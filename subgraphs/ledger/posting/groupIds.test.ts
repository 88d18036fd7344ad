// Group ids are time-ordered (ledger migration 0012): 'lg_', 12 hex digits of the Unix
// milliseconds the group was made, 12 random hex digits. A later group's id sorts after an earlier
// one's, from post_group, post_groups and reverse_group alike, so the id indexes take new ids at
// their right edge however long the history; ids of one millisecond differ by their random part.
import { randomBytes } from 'node:crypto';
import { isIdOfKind } from '../../../core/canon/id-shapes';
import type { TestDatabase } from '../../../platform/db/testDb';
import { accountId, treasuryAccount } from '../accounts/names';
import { postGroup, postGroups, type PostGroupInput } from './writes';
import { createLedgerTestDatabase, intentId, registerRails, USDT0 } from '../test-support';

let db: TestDatabase;

beforeAll(async () => {
  db = await createLedgerTestDatabase({ subgraphs: ['ledger'] });
  await registerRails(db.pool);
});

afterAll(async () => {
  await db?.drop();
});

function funding(amount: bigint): PostGroupInput {
  return {
    kind: 'FUNDING',
    asset: USDT0,
    entries: [
      { account: treasuryAccount(USDT0), amountAtomic: amount },
      { account: accountId('USER_OBLIGATION', USDT0, '7'), amountAtomic: -amount },
    ],
    idempotencyKey: `ids:${randomBytes(6).toString('hex')}`,
    policyId: '7',
    intentRef: intentId(7),
  };
}

/** The Unix milliseconds an id carries. */
const millisOf = (groupId: string) => Number.parseInt(groupId.slice(3, 15), 16);

test('an id carries the millisecond its group was made, then 48 random bits, in the usual shape', async () => {
  const before = Date.now();
  const id = await postGroup(db.pool, funding(5n));
  const after = Date.now();
  expect(isIdOfKind('ledgerGroup', id)).toBe(true);
  // The server's clock against this process's: the same host's, so within a few milliseconds.
  expect(millisOf(id)).toBeGreaterThanOrEqual(before - 1_000);
  expect(millisOf(id)).toBeLessThanOrEqual(after + 1_000);
  const { rows } = await db.pool.query<{ created_ms: string }>(
    `SELECT floor(extract(epoch FROM created_at) * 1000)::bigint::text AS created_ms
       FROM ledger.groups WHERE group_id = $1`,
    [id],
  );
  // created_at is the transaction's start, the id the moment the group was written: never before.
  expect(millisOf(id)).toBeGreaterThanOrEqual(Number(rows[0]!.created_ms));
});

test('later groups sort after earlier ones, one at a time and in batches', async () => {
  const ids: string[] = [];
  for (let round = 0; round < 5; round += 1) {
    ids.push(await postGroup(db.pool, funding(BigInt(round + 1))));
    await new Promise((resolve) => setTimeout(resolve, 2));
    const batch = await postGroups(db.pool, [funding(11n), funding(12n), funding(13n)]);
    // One batch is written in one moment: its ids share their millisecond or follow it.
    for (const id of batch) expect(millisOf(id)).toBeGreaterThanOrEqual(millisOf(ids.at(-1)!));
    ids.push(batch.sort().at(-1)!);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  expect([...ids].sort()).toEqual(ids);
  expect(new Set(ids).size).toBe(ids.length);
});

test('ids made in the same millisecond differ by their random part', async () => {
  const { rows } = await db.adminPool.query<{ id: string }>(
    `SELECT ledger.new_group_id(timestamptz '2026-11-29 12:00:00.123+00') AS id
       FROM generate_series(1, 2000)`,
  );
  const ids = rows.map((row) => row.id);
  expect(new Set(ids).size).toBe(ids.length);
  const millis = new Date('2026-11-29T12:00:00.123Z').getTime();
  for (const id of ids) {
    expect(isIdOfKind('ledgerGroup', id)).toBe(true);
    expect(millisOf(id)).toBe(millis);
  }
  // 48 random bits: every hex digit of the random part takes many values across 2,000 ids.
  for (let digit = 15; digit < 27; digit += 1)
    expect(new Set(ids.map((id) => id[digit])).size).toBeGreaterThan(10);
});
