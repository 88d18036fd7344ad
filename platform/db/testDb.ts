// Test databases: each test file gets a fresh database on the server named by DATABASE_URL (set by
// the developer, or by jest's global setup, which starts an embedded PostgreSQL when it is unset),
// migrated, and dropped again afterwards.
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { migrate, type MigrationSet } from './migrate';

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  readonly pool: Pool;
  drop(): Promise<void>;
}

export function serverUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) {
    throw new Error('DATABASE_URL is not set: run tests through jest (its global setup starts an embedded PostgreSQL)');
  }
  return url;
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Creates a fresh database (migrated for `subgraphs`, default every set; `[]` for none). */
export async function createTestDatabase(
  options: { subgraphs?: readonly MigrationSet[]; poolSize?: number } = {},
): Promise<TestDatabase> {
  const server = serverUrl();
  const name = `test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new Pool({ connectionString: server, max: 1 });
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(server, name);
  const pool = new Pool({ connectionString: url, max: options.poolSize ?? 10 });
  // drop() ends the database WITH (FORCE): a connection still closing then reports 57P01, which is
  // expected here and must not surface as an unhandled 'error' event that kills the test worker.
  pool.on('error', () => undefined);
  if (!options.subgraphs || options.subgraphs.length > 0) {
    await migrate(pool, { subgraphs: options.subgraphs });
  }
  let dropped = false;
  return {
    url,
    name,
    pool,
    async drop() {
      if (dropped) return;
      dropped = true;
      await pool.end();
      const dropper = new Pool({ connectionString: server, max: 1 });
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}
