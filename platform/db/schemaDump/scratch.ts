// A throwaway database for the schema dump: made on the server named by a superuser URL (or on an
// embedded PostgreSQL started for the purpose), migrated with every set as the owner role, and
// dropped afterwards. The group roles stay, as after any migration; the embedded server goes whole.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Pool } from 'pg';
import { startEmbeddedPostgres } from '../embedded';
import { migrate } from '../migrate';
import { prepareDatabaseRoles, ROLE_LIFECYCLE_LOCK_KEY } from '../roles';
import { withDatabase } from '../url';
import { SchemaDumpError } from './pgDump';

export interface ScratchDatabase {
  /** The server's superuser on the scratch database: pg_dump sees every object and grant. */
  readonly url: string;
  /** e.g. 15 */
  readonly serverMajor: number;
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

/** Runs `work` on a freshly migrated scratch database of the server at `serverUrl`. */
async function onServer<T>(
  serverUrl: string,
  progress: (line: string) => void,
  work: (scratch: ScratchDatabase) => Promise<T>,
): Promise<T> {
  const admin = await connect(serverUrl);
  const name = `schema_dump_${randomBytes(6).toString('hex')}`;
  let created = false;
  try {
    const { rows } = await admin.query<{ rolsuper: boolean; major: string }>(
      `SELECT r.rolsuper, current_setting('server_version_num')::int / 10000 AS major
         FROM pg_catalog.pg_roles r WHERE r.rolname = current_user`,
    );
    if (!rows[0]?.rolsuper)
      throw new SchemaDumpError(
        'schema dump makes a scratch database and needs a superuser URL in DATABASE_URL; ' +
          'unset DATABASE_URL to use an embedded PostgreSQL instead',
      );
    // Shared with test databases: a concurrent jest teardown must not drop the group roles now.
    await admin.query('SELECT pg_advisory_lock_shared($1)', [ROLE_LIFECYCLE_LOCK_KEY.toString()]);
    await admin.query(`CREATE DATABASE ${name}`);
    created = true;
    const url = withDatabase(serverUrl, name);
    progress(`schema dump: migrating scratch database ${name}`);
    const scratch = await connect(url);
    try {
      await prepareDatabaseRoles(scratch);
    } finally {
      await scratch.end();
    }
    const pool = new Pool({ connectionString: url, max: 1 });
    try {
      await migrate(pool);
    } finally {
      await pool.end();
    }
    return await work({ url, serverMajor: Number(rows[0].major) });
  } finally {
    if (created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

/**
 * On the server at `serverUrl` (a superuser), or with null on an embedded PostgreSQL in a
 * temporary directory that is removed afterwards.
 */
export async function withScratchDatabase<T>(
  serverUrl: string | null,
  progress: (line: string) => void,
  work: (scratch: ScratchDatabase) => Promise<T>,
): Promise<T> {
  if (serverUrl !== null) return onServer(serverUrl, progress, work);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spend-control-schema-dump-'));
  // mkdtemp makes the folder 0700; under root the server runs as `postgres` and must enter it.
  chmodSync(dir, 0o755);
  try {
    progress('schema dump: starting an embedded PostgreSQL');
    const server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), durable: false });
    try {
      return await onServer(withDatabase(server.url, 'postgres'), progress, work);
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
