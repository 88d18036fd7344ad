// Forward-only SQL migrations, one folder per subgraph (`subgraphs/<name>/migrations/NNNN_name.sql`)
// plus the gateway's own (`gateway/migrations/`), applied in that order under a session advisory
// lock so two processes starting at once are safe, recorded in `public.schema_migrations`. A
// migration that was edited after it ran is refused.
// They run as spend_control_owner (roles.ts), whose default privileges give the service role its
// grants on whatever a migration creates; afterwards every trigger of the app's schemas fires ALWAYS.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Pool, PoolClient } from 'pg';
import { projectRoot } from '../paths';
import { OWNER_ROLE, SERVICE_ROLE, adoptObjects, prepareDatabaseRoles } from './roles';

/** Subgraphs in dependency order: a schema may call SQL functions of the schemas before it. */
export const SUBGRAPH_NAMES = ['catalog', 'ledger', 'policy', 'intent', 'builder'] as const;
export type SubgraphName = (typeof SUBGRAPH_NAMES)[number];
/** Every migrated schema: the subgraphs', then the gateway's (rate-limit buckets). */
export const MIGRATION_SETS = [...SUBGRAPH_NAMES, 'gateway'] as const;
export type MigrationSet = (typeof MIGRATION_SETS)[number];

const MIGRATION_FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;
/** Any 64-bit constant works; it only has to be the same in every process of the service. */
const MIGRATION_LOCK_KEY = 7_302_114_565_011n;

export interface MigrationFile {
  subgraph: MigrationSet;
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationError';
  }
}

/** `rootDir` (default `<projectRoot>/subgraphs`, the gateway's at the project root) lets tests run throwaway migration folders. */
export function migrationsDir(subgraph: MigrationSet, rootDir?: string): string {
  const root =
    rootDir ?? (subgraph === 'gateway' ? projectRoot() : path.join(projectRoot(), 'subgraphs'));
  return path.join(root, subgraph, 'migrations');
}

export function readMigrations(subgraph: MigrationSet, rootDir?: string): MigrationFile[] {
  const dir = migrationsDir(subgraph, rootDir);
  if (!existsSync(dir)) return [];
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .sort();
  return files.map((file, index) => {
    const match = MIGRATION_FILE.exec(file);
    if (!match)
      throw new MigrationError(`${subgraph}/migrations/${file}: name must be NNNN_name.sql`);
    const version = Number(match[1]);
    if (version !== index + 1) {
      throw new MigrationError(
        `${subgraph}/migrations/${file}: expected version ${index + 1}, versions must be contiguous`,
      );
    }
    const sql = readFileSync(path.join(dir, file), 'utf8');
    const checksum = createHash('sha256').update(sql).digest('hex');
    return { subgraph, version, name: match[2], sql, checksum };
  });
}

export interface MigrateResult {
  applied: Array<{ subgraph: MigrationSet; version: number; name: string }>;
}

/** Runs one migration and records it, in one transaction; a failure rolls both back. */
async function applyOne(client: PoolClient, migration: MigrationFile): Promise<void> {
  const { subgraph } = migration;
  await client.query('BEGIN');
  try {
    await client.query(migration.sql);
    await client.query(
      'INSERT INTO public.schema_migrations (subgraph, version, name, checksum) VALUES ($1, $2, $3, $4)',
      [subgraph, migration.version, migration.name, migration.checksum],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw new MigrationError(
      `${subgraph} migration ${migration.version} (${migration.name}) failed: ${(error as Error).message}`,
    );
  }
}

/** Applies every pending migration of the given sets (default: all) and returns what ran. */
export async function migrate(
  pool: Pool,
  options: {
    subgraphs?: readonly MigrationSet[];
    onApplied?: (m: MigrationFile) => void;
    rootDir?: string;
  } = {},
): Promise<MigrateResult> {
  const subgraphs = options.subgraphs ?? MIGRATION_SETS;
  const client = await pool.connect();
  const applied: MigrateResult['applied'] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    await actAsOwner(client);
    await client.query(`
      CREATE TABLE IF NOT EXISTS public.schema_migrations (
        subgraph   text        NOT NULL,
        version    integer     NOT NULL,
        name       text        NOT NULL,
        checksum   text        NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (subgraph, version)
      )`);
    for (const subgraph of MIGRATION_SETS.filter((name) => subgraphs.includes(name))) {
      const done = await client.query<{ version: number; checksum: string }>(
        'SELECT version, checksum FROM public.schema_migrations WHERE subgraph = $1',
        [subgraph],
      );
      const doneByVersion = new Map(done.rows.map((row) => [row.version, row.checksum]));
      for (const migration of readMigrations(subgraph, options.rootDir)) {
        const recorded = doneByVersion.get(migration.version);
        if (recorded !== undefined) {
          if (recorded !== migration.checksum) {
            throw new MigrationError(
              `${subgraph} migration ${migration.version} (${migration.name}) changed after it was applied; ` +
                'migrations are forward-only: add a new file instead',
            );
          }
          continue;
        }
        await applyOne(client, migration);
        applied.push({ subgraph, version: migration.version, name: migration.name });
        options.onApplied?.(migration);
      }
    }
    await client.query(fireTriggersAlwaysSql());
  } finally {
    const reset = await client.query('RESET ROLE').then(
      () => true,
      () => false,
    );
    await client
      .query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()])
      .catch(() => undefined);
    // A connection that could not drop the owner's identity must not serve anyone else.
    client.release(!reset);
  }
  return { applied };
}

/**
 * Everything a migration creates belongs to OWNER_ROLE, whoever logged in: a superuser (the
 * embedded default, a development server) first prepares the roles, then every migrator becomes
 * the owner. The default privileges grant the service role what it needs on objects to come.
 */
async function actAsOwner(client: PoolClient): Promise<void> {
  const { rows } = await client.query<{ rolsuper: boolean }>(
    'SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user',
  );
  if (rows[0]?.rolsuper) {
    await prepareDatabaseRoles(client);
    await adoptObjects(client, SUBGRAPH_NAMES);
  }
  try {
    await client.query(`SET ROLE ${OWNER_ROLE}`);
  } catch (error) {
    throw new MigrationError(
      `migrations run as ${OWNER_ROLE}, and this login cannot become it (${(error as Error).message}); ` +
        'see docs/operations.md, "Database roles"',
    );
  }
  for (const grant of DEFAULT_PRIVILEGES) {
    await client.query(
      `ALTER DEFAULT PRIVILEGES FOR ROLE ${OWNER_ROLE} ${grant} TO ${SERVICE_ROLE}`,
    );
  }
}

/**
 * What the service role gets on every object a migration creates from now on. A migration whose
 * table the service must not change (append-only) revokes UPDATE and DELETE itself.
 */
const DEFAULT_PRIVILEGES = [
  'GRANT USAGE ON SCHEMAS',
  'GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES',
  'GRANT USAGE, SELECT ON SEQUENCES',
  'GRANT EXECUTE ON FUNCTIONS',
] as const;

/**
 * Guard triggers must fire for every session, including one with session_replication_role =
 * replica (which skips ENABLE'd triggers): every user trigger in a schema the owner owns fires
 * ALWAYS, whether or not its migration said so.
 */
function fireTriggersAlwaysSql(): string {
  return `
  DO $$
  DECLARE
    r record;
  BEGIN
    FOR r IN
      SELECT t.tgname, t.tgrelid::regclass AS rel
        FROM pg_catalog.pg_trigger t
        JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       WHERE NOT t.tgisinternal AND t.tgenabled IN ('O', 'R') AND n.nspowner = '${OWNER_ROLE}'::regrole
    LOOP
      EXECUTE format('ALTER TABLE %s ENABLE ALWAYS TRIGGER %I', r.rel, r.tgname);
    END LOOP;
  END
  $$`;
}
