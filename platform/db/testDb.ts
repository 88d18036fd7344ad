// Test databases: each test file gets a fresh database on the server named by DATABASE_URL (set by
// the developer, or by jest's global setup, which starts an embedded PostgreSQL when it is unset),
// migrated as the owner role, used as the service role (as in production), and dropped again
// afterwards together with the two logins made for it. DATABASE_URL must name a superuser. In a
// jest run, each set of subgraphs is migrated once, into a template database, and each file's
// database is a copy of it (TEMPLATE_RUN_ENV below).
import { createHash, randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';
import { MIGRATION_SETS, migrate, readMigrations, type MigrationSet } from './migrate';
import { guardCheckedOutClients } from './pool';
import {
  OWNER_ROLE,
  SERVICE_ROLE,
  dropLoginRole,
  ensureGroupRoles,
  ensureLoginRole,
  prepareDatabaseRoles,
  ROLE_LIFECYCLE_LOCK_KEY,
} from './roles';
import { withDatabase } from './url';

export interface TestDatabase {
  /** The service role's URL: what the service connects with. */
  readonly url: string;
  readonly name: string;
  /** On `url`: what subgraphs, the gateway and the worker run as in tests. */
  readonly pool: Pool;
  /** A member of spend_control_owner: what migrations run as. */
  readonly ownerUrl: string;
  /** The server's superuser on this database, for tests that stage what the service may not do. */
  readonly adminUrl: string;
  readonly adminPool: Pool;
  /** The logins behind `url` and `ownerUrl`. */
  readonly logins: { readonly owner: string; readonly service: string };
  drop(): Promise<void>;
}

export function serverUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) {
    throw new Error(
      'DATABASE_URL is not set: run tests through jest (its global setup starts an embedded PostgreSQL)',
    );
  }
  return url;
}

export { withDatabase };

export function withLogin(url: string, user: string, password: string): string {
  const parsed = new URL(url);
  parsed.username = user;
  parsed.password = password;
  return parsed.toString();
}

async function onServer<T>(server: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: server });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates a fresh database (migrated for `subgraphs`, default every set; `[]` for none). */
export async function createTestDatabase(
  options: {
    subgraphs?: readonly MigrationSet[];
    poolSize?: number;
    /** A superuser URL of another server than DATABASE_URL's (a fault test's own, which it stops). */
    server?: string;
  } = {},
): Promise<TestDatabase> {
  const server = options.server ?? serverUrl();
  const name = `test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const logins = { owner: `${name}_owner`, service: `${name}_service` };
  const passwords = {
    owner: randomBytes(16).toString('hex'),
    service: randomBytes(16).toString('hex'),
  };
  const adminUrl = withDatabase(server, name);
  const migrated = !options.subgraphs || options.subgraphs.length > 0;
  const subgraphs = options.subgraphs ?? MIGRATION_SETS;
  let cloned = false;
  await onServer(server, async (client) => {
    await client.query('SELECT pg_advisory_lock_shared($1)', [ROLE_LIFECYCLE_LOCK_KEY.toString()]);
    await ensureGroupRoles(client);
    const template = migrated ? await migratedTemplate(client, server, subgraphs) : null;
    await client.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
    cloned = template !== null;
    await ensureLoginRole(client, logins.owner, passwords.owner, OWNER_ROLE);
    await ensureLoginRole(client, logins.service, passwords.service, SERVICE_ROLE);
    await onServer(adminUrl, prepareDatabaseRoles);
  });
  const url = withLogin(adminUrl, logins.service, passwords.service);
  const ownerUrl = withLogin(adminUrl, logins.owner, passwords.owner);
  const pool = new Pool({ connectionString: url, max: options.poolSize ?? 10 });
  const adminPool = new Pool({ connectionString: adminUrl, max: 2 });
  // drop() ends the database WITH (FORCE): a connection still closing then reports 57P01, which is
  // expected here and must not surface as an unhandled 'error' event that kills the test worker.
  pool.on('error', () => undefined);
  adminPool.on('error', () => undefined);
  // As createPool does for the service's pools: a held client whose server goes away must not kill the test worker.
  guardCheckedOutClients(pool);
  guardCheckedOutClients(adminPool);
  let dropped = false;
  const database: TestDatabase = {
    url,
    name,
    pool,
    ownerUrl,
    adminUrl,
    adminPool,
    logins,
    async drop() {
      if (dropped) return;
      dropped = true;
      await Promise.all([pool.end(), adminPool.end()]);
      await onServer(server, async (client) => {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await dropLoginRole(client, logins.owner);
        await dropLoginRole(client, logins.service);
      });
    },
  };
  if (migrated && !cloned) await migrateOrDrop(database, options.subgraphs);
  return database;
}

/** Migrates a test database as its owner login; a failure drops it before it is thrown. */
async function migrateOrDrop(
  database: TestDatabase,
  subgraphs: readonly MigrationSet[] | undefined,
): Promise<void> {
  const migrator = new Pool({ connectionString: database.ownerUrl, max: 1 });
  try {
    await migrate(migrator, { subgraphs });
  } catch (error) {
    await database.drop();
    throw error;
  } finally {
    await migrator.end();
  }
}

/**
 * The environment variable naming this test run's templates (jest's global setup sets it): each
 * set of subgraphs is migrated once per run into a template database, and each test file's
 * database is a copy of it (CREATE DATABASE ... TEMPLATE), which takes a fraction of the second
 * that running every migration again takes. Unset (a script outside jest), every database is
 * migrated itself.
 */
export const TEMPLATE_RUN_ENV = 'SPEND_CONTROL_TEST_TEMPLATE_RUN';
const TEMPLATE_RUN = /^[0-9a-f]{8,16}$/;
const TEMPLATE_PREFIX = 'sc_template_';

/**
 * The template database holding `subgraphs` migrated, made now unless this run made it already;
 * null when this process is not in a test run with templates. A template's name carries the run
 * and a digest of the migrations it holds, so an edited migration never comes from a stale copy.
 * One maker at a time (an advisory lock on the server); a template takes no connections once
 * made, since CREATE DATABASE refuses to copy a database anyone is connected to.
 */
async function migratedTemplate(
  client: Client,
  server: string,
  subgraphs: readonly MigrationSet[],
): Promise<string | null> {
  const run = process.env[TEMPLATE_RUN_ENV];
  if (run === undefined || !TEMPLATE_RUN.test(run)) return null;
  const digest = createHash('sha256');
  for (const set of MIGRATION_SETS.filter((name) => subgraphs.includes(name))) {
    for (const migration of readMigrations(set))
      digest.update(`${set}/${migration.version}/${migration.checksum}\n`);
  }
  const template = `${TEMPLATE_PREFIX}${run}_${digest.digest('hex').slice(0, 16)}`;
  await client.query('SELECT pg_advisory_lock(hashtext($1))', [template]);
  try {
    const { rowCount } = await client.query(
      'SELECT 1 FROM pg_catalog.pg_database WHERE datname = $1',
      [template],
    );
    if (rowCount === 0) await makeTemplate(client, server, template, subgraphs);
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [template]);
  }
  return template;
}

/** Makes `template` and migrates it as an owner login of its own (as every test database was). */
async function makeTemplate(
  client: Client,
  server: string,
  template: string,
  subgraphs: readonly MigrationSet[],
): Promise<void> {
  const login = `${template}_owner`;
  const password = randomBytes(16).toString('hex');
  const adminUrl = withDatabase(server, template);
  await client.query(`CREATE DATABASE ${template} WITH ALLOW_CONNECTIONS true`);
  try {
    await ensureLoginRole(client, login, password, OWNER_ROLE);
    await onServer(adminUrl, prepareDatabaseRoles);
    const migrator = new Pool({
      connectionString: withLogin(adminUrl, login, password),
      max: 1,
    });
    try {
      await migrate(migrator, { subgraphs });
    } finally {
      await migrator.end();
    }
    await client.query(`ALTER DATABASE ${template} WITH ALLOW_CONNECTIONS false`);
  } catch (error) {
    await client.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    throw error;
  } finally {
    await dropLoginRole(client, login);
  }
}

/** Drops this run's template databases (jest's global teardown). */
export async function dropTemplates(server: string, run: string): Promise<void> {
  if (!TEMPLATE_RUN.test(run)) return;
  await onServer(server, async (client) => {
    const { rows } = await client.query<{ name: string }>(
      'SELECT datname AS name FROM pg_catalog.pg_database WHERE datname LIKE $1',
      [`${TEMPLATE_PREFIX}${run}\\_%`],
    );
    for (const { name } of rows) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
}

/**
 * Drops the group roles when no database uses them any more (a role that owns or is granted
 * anything cannot be dropped: 2BP01). Global teardown calls it once the run's databases are gone;
 * another run still creating or using databases keeps them.
 */
export async function dropGroupRolesIfUnused(server: string): Promise<void> {
  await onServer(server, async (client) => {
    const { rows } = await client.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_lock($1) AS locked',
      [ROLE_LIFECYCLE_LOCK_KEY.toString()],
    );
    if (!rows[0].locked) return;
    try {
      await client.query(`DROP ROLE IF EXISTS ${SERVICE_ROLE}, ${OWNER_ROLE}`);
    } catch (error) {
      if ((error as { code?: string }).code !== '2BP01') throw error;
    }
  });
}
