// Why job claims hold transaction-scoped advisory locks (platform/db/lockHolder.ts), shown through
// a real PgBouncer in transaction mode: a session lock taken by one client stays on the pooled
// server connection after its transaction, so the next client handed that connection "takes" the
// same lock again and both believe they hold it (a healthy payment would then be parked as
// ambiguous by the second). A lock holder keeps its transaction, and so its server connection, to
// itself: a second holder is refused while the first works, and takes the lock once the first
// commits or its client dies.
import { Pool, type PoolClient } from 'pg';
import { openLockHolder } from '../../platform/db';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../platform/db/testDb';
import { startPgBouncer, type PgBouncer } from '../support/fleet';

jest.setTimeout(60_000);

let db: TestDatabase;
let bouncer: PgBouncer;
/** A PgBouncer with one server connection for the whole pool. */
let narrow: PgBouncer;
const pools: Pool[] = [];

function pooled(max: number, through: PgBouncer = bouncer): Pool {
  const pool = new Pool({ connectionString: through.through(db.url), max });
  pool.on('error', () => undefined);
  pools.push(pool);
  return pool;
}

beforeAll(async () => {
  db = await createTestDatabase({ subgraphs: [] });
  bouncer = await startPgBouncer(serverUrl(), [db.logins.service]);
  narrow = await startPgBouncer(serverUrl(), [db.logins.service], { poolSize: 1 });
});

afterAll(async () => {
  for (const pool of pools) await pool.end().catch(() => undefined);
  await bouncer?.stopAndClean();
  await narrow?.stopAndClean();
  await db?.drop();
});

test('behind PgBouncer a session advisory lock is taken twice: two clients, one server connection', async () => {
  const pool = pooled(2, narrow);
  const first = await pool.connect();
  const second = await pool.connect();
  expect(await tryLock(first, 'pg_try_advisory_lock(4242)')).toBe(true);
  // Between transactions the server connection went back to PgBouncer, which lends it on.
  expect(await tryLock(second, 'pg_try_advisory_lock(4242)')).toBe(true);
  first.release();
  second.release();
});

test('a lock holder is refused to every other holder while it works, and frees the lock on commit', async () => {
  const pool = pooled(4);
  const first = await openLockHolder(pool);
  const second = await openLockHolder(pool);
  expect(await first.tryLock({ namespace: 7, name: 'ci_a' })).toBe(true);
  expect(await second.tryLock({ namespace: 7, name: 'ci_a' })).toBe(false);
  expect(await second.tryLock({ namespace: 7, name: 'ci_b' })).toBe(true);
  await first.release();
  await second.release();
  const third = await openLockHolder(pool);
  expect(await third.tryLock({ namespace: 7, name: 'ci_a' })).toBe(true);
  await third.release();
});

test('a holder whose client dies mid-work frees its lock: PgBouncer drops the server connection', async () => {
  const crashing = pooled(1);
  const holder = await openLockHolder(crashing);
  expect(await holder.tryLock({ key: 99 })).toBe(true);
  const other = pooled(1);
  const waiting = await openLockHolder(other);
  expect(await waiting.tryLock({ key: 99 })).toBe(false);
  await waiting.release();
  holder.client.on('error', () => undefined); // the cut below is the point
  // What a SIGKILL does to the socket: gone without a word.
  (
    holder.client as unknown as { connection: { stream: { destroy(): void } } }
  ).connection.stream.destroy();
  await holder.release(); // its COMMIT fails: the connection is discarded, not pooled
  const deadline = Date.now() + 10_000;
  for (;;) {
    const next = await openLockHolder(other);
    const taken = await next.tryLock({ key: 99 });
    await next.release();
    if (taken) break;
    if (Date.now() > deadline) throw new Error('the dead holder still holds its lock');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

async function tryLock(client: PoolClient, call: string): Promise<boolean> {
  const { rows } = await client.query<{ ok: boolean }>(`SELECT ${call} AS ok`);
  return rows[0].ok;
}
