// Claims against a real database: a worker's claim picks and locks in one statement, so what one
// claim holds no other claim gets; the lock is tried only on the picked rows (the LIMIT's), never
// on a row the claim does not take; an intent another claim holds is skipped, and once moved on
// it is no longer picked.
import { newConsumerIntentId } from '../../../../core/canon/ids';
import { createTestDatabase, type TestDatabase } from '../../../../platform/db/testDb';
import { insertConsumerIntent } from '../store';
import { transitionConsumerIntent } from '../transition';
import { CONSUMER_JOB_LOCK_NAMESPACE, claimIntents } from './claims';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const t0 = new Date('2026-11-24T10:00:00Z');

/** `count` new intents in CREATED, each a second after the one before (claims take the oldest). */
async function newIntents(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n += 1) {
    const { row } = await insertConsumerIntent(db.pool, {
      intentId: newConsumerIntentId(),
      policyId: '777',
      wallet: '0x' + 'cd'.repeat(20),
      capability: 'domains.check',
      provider: 'spendctl-domains',
      category: 'domains',
      params: { domain: `claim-${n}.test` },
      idempotencyKey: null,
      now: new Date(t0.getTime() + n * 1000),
    });
    ids.push(row.intentId);
  }
  return ids;
}

/** Whether another session could take the job lock of `intentId` now (it lets go at once). */
async function lockFree(intentId: string): Promise<boolean> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ ok: boolean }>(
      'SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS ok',
      [CONSUMER_JOB_LOCK_NAMESPACE, intentId],
    );
    return rows[0]!.ok;
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

/** A claim of `intentIds` still in CREATED, at most `limit` of them. */
const claimCreated = (intentIds: readonly string[], limit: number) =>
  claimIntents(db.pool, { states: ['CREATED'], intentIds, limit });

test('two claims at once share nothing, and each holds exactly the intents it returns', async () => {
  const ids = await newIntents(6);
  const [first, second] = await Promise.all([claimCreated(ids, 4), claimCreated(ids, 4)]);
  try {
    const both = [...first.intentIds, ...second.intentIds];
    expect(new Set(both).size).toBe(both.length);
    expect(both.length).toBeGreaterThanOrEqual(4);
    for (const id of both) expect(await lockFree(id)).toBe(false);
    for (const id of ids.filter((id) => !both.includes(id))) expect(await lockFree(id)).toBe(true);
  } finally {
    await first.release();
    await second.release();
  }
  for (const id of ids) expect(await lockFree(id)).toBe(true);
});

test('the lock is tried on the picked rows only: past the limit nothing is held', async () => {
  const ids = await newIntents(5);
  const claim = await claimCreated(ids, 2);
  try {
    expect(claim.intentIds).toEqual(ids.slice(0, 2));
    for (const id of ids.slice(2)) expect(await lockFree(id)).toBe(true);
  } finally {
    await claim.release();
  }
});

test('an intent another claim holds is skipped without a lock, and once moved on is not picked', async () => {
  const [kept, moved] = await newIntents(2);
  // Another worker holds `moved` while it moves it on; this claim's pick still sees it in CREATED.
  const other = await claimCreated([moved!], 1);
  expect(other.intentIds).toEqual([moved]);
  const claim = await claimCreated([kept!, moved!], 2);
  try {
    expect(claim.intentIds).toEqual([kept]);
  } finally {
    await claim.release();
  }
  expect(
    await transitionConsumerIntent(db.pool, moved!, 'CREATED', 'CANCELLED', { now: t0 }),
  ).not.toBeNull();
  await other.release();
  const after = await claimCreated([kept!, moved!], 2);
  try {
    expect(after.intentIds).toEqual([kept]);
  } finally {
    await after.release();
  }
  expect(await lockFree(moved!)).toBe(true);
});
