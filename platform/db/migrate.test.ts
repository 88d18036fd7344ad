// The migration runner against a real PostgreSQL, with throwaway migration folders (rootDir) so
// the cases do not depend on the subgraphs' own SQL. Migrations run as the owner role's login; the
// service role's pool (db.pool) reads what they made through the default privileges.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import { MigrationError, migrate } from './migrate';
import { createTestDatabase, type TestDatabase } from './testDb';

let db: TestDatabase;
let owner: Pool;
let rootDir: string;

function writeMigration(file: string, sql: string): void {
  const dir = path.join(rootDir, 'catalog', 'migrations');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, file), sql);
}

async function recorded(pool: Pool): Promise<Array<{ version: number; name: string }>> {
  const result = await pool.query<{ version: number; name: string }>(
    "SELECT version, name FROM public.schema_migrations WHERE subgraph = 'catalog' ORDER BY version",
  );
  return result.rows;
}

beforeEach(async () => {
  db = await createTestDatabase({ subgraphs: [] });
  owner = new Pool({ connectionString: db.ownerUrl, max: 2 });
  // db.drop() ends the database WITH (FORCE): a connection still closing then reports 57P01 (as
  // testDb.ts says for its own pools), which must not surface as an unhandled 'error' event.
  owner.on('error', () => undefined);
  rootDir = mkdtempSync(path.join(os.tmpdir(), 'migrations-'));
  // Not idempotent on purpose: a second application would fail or duplicate the row.
  writeMigration(
    '0001_items.sql',
    'CREATE SCHEMA catalog; CREATE TABLE catalog.items (id int PRIMARY KEY, name text NOT NULL);',
  );
  writeMigration('0002_seed.sql', "INSERT INTO catalog.items VALUES (1, 'first');");
});

afterEach(async () => {
  await owner.end();
  await db.drop();
  rmSync(rootDir, { recursive: true, force: true });
});

test('applies pending migrations in order, and a second run is a no-op', async () => {
  const first = await migrate(owner, { subgraphs: ['catalog'], rootDir });
  expect(first.applied.map((m) => `${m.version}_${m.name}`)).toEqual(['1_items', '2_seed']);

  const second = await migrate(owner, { subgraphs: ['catalog'], rootDir });
  expect(second.applied).toEqual([]);
  expect((await db.pool.query('SELECT count(*)::int AS n FROM catalog.items')).rows[0].n).toBe(1);
  expect(await recorded(owner)).toEqual([
    { version: 1, name: 'items' },
    { version: 2, name: 'seed' },
  ]);
});

test('two concurrent runs on one fresh database apply each migration exactly once', async () => {
  // The sleep keeps the first runner inside the lock while the second one arrives.
  writeMigration(
    '0001_items.sql',
    'SELECT pg_sleep(0.3); CREATE SCHEMA catalog; CREATE TABLE catalog.items (id int PRIMARY KEY, name text NOT NULL);',
  );
  const other = new Pool({ connectionString: db.ownerUrl, max: 2 });
  other.on('error', () => undefined);
  try {
    const results = await Promise.all([
      migrate(owner, { subgraphs: ['catalog'], rootDir }),
      migrate(other, { subgraphs: ['catalog'], rootDir }),
    ]);
    const applied = results.flatMap((result) => result.applied.map((m) => m.version)).sort();
    expect(applied).toEqual([1, 2]);
    // One runner did everything, the other found nothing left to do.
    expect(results.map((result) => result.applied.length).sort()).toEqual([0, 2]);
    expect((await db.pool.query('SELECT count(*)::int AS n FROM catalog.items')).rows[0].n).toBe(1);
    expect(await recorded(owner)).toHaveLength(2);
  } finally {
    await other.end();
  }
});

test('refuses a migration that was edited after it ran', async () => {
  await migrate(owner, { subgraphs: ['catalog'], rootDir });
  writeMigration('0002_seed.sql', "INSERT INTO catalog.items VALUES (1, 'edited');");

  const run = migrate(owner, { subgraphs: ['catalog'], rootDir });
  await expect(run).rejects.toThrow(MigrationError);
  await expect(migrate(owner, { subgraphs: ['catalog'], rootDir })).rejects.toThrow(
    /catalog migration 2 \(seed\) changed after it was applied/,
  );
  expect((await db.pool.query('SELECT name FROM catalog.items')).rows).toEqual([{ name: 'first' }]);
});

test('a failing migration rolls back completely and is not recorded; fixed, it applies', async () => {
  writeMigration('0003_broken.sql', 'CREATE TABLE catalog.partial (id int); SELECT 1 / 0;');

  await expect(migrate(owner, { subgraphs: ['catalog'], rootDir })).rejects.toThrow(
    /catalog migration 3 \(broken\) failed: division by zero/,
  );
  expect((await db.pool.query("SELECT to_regclass('catalog.partial') AS t")).rows[0].t).toBeNull();
  expect((await recorded(owner)).map((row) => row.version)).toEqual([1, 2]);

  writeMigration('0003_broken.sql', 'CREATE TABLE catalog.partial (id int);');
  const fixed = await migrate(owner, { subgraphs: ['catalog'], rootDir });
  expect(fixed.applied.map((m) => m.version)).toEqual([3]);
  expect((await db.pool.query("SELECT to_regclass('catalog.partial') AS t")).rows[0].t).toBe(
    'catalog.partial',
  );
});

test('the advisory lock is released after a failure, so the next run is not blocked', async () => {
  writeMigration('0003_broken.sql', 'SELECT 1 / 0;');
  await expect(migrate(owner, { subgraphs: ['catalog'], rootDir })).rejects.toThrow(MigrationError);
  const locks = await db.pool.query(
    "SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.locktype = 'advisory' AND d.datname = current_database()",
  );
  expect(locks.rows[0].n).toBe(0);
});
