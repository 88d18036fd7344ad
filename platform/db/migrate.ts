// Forward-only SQL migrations, one folder per subgraph (`subgraphs/<name>/migrations/NNNN_name.sql`)
// plus the gateway's own (`gateway/migrations/`), applied in that order under a session advisory
// lock so two processes starting at once are safe, recorded in `public.schema_migrations`. A
// migration that was edited after it ran is refused.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Pool } from 'pg';
import { projectRoot } from '../paths';

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
  const root = rootDir ?? (subgraph === 'gateway' ? projectRoot() : path.join(projectRoot(), 'subgraphs'));
  return path.join(root, subgraph, 'migrations');
}

export function readMigrations(subgraph: MigrationSet, rootDir?: string): MigrationFile[] {
  const dir = migrationsDir(subgraph, rootDir);
  if (!existsSync(dir)) return [];
  const files = readdirSync(dir).filter((file) => file.endsWith('.sql')).sort();
  return files.map((file, index) => {
    const match = MIGRATION_FILE.exec(file);
    if (!match) throw new MigrationError(`${subgraph}/migrations/${file}: name must be NNNN_name.sql`);
    const version = Number(match[1]);
    if (version !== index + 1) {
      throw new MigrationError(`${subgraph}/migrations/${file}: expected version ${index + 1}, versions must be contiguous`);
    }
    const sql = readFileSync(path.join(dir, file), 'utf8');
    const checksum = createHash('sha256').update(sql).digest('hex');
    return { subgraph, version, name: match[2], sql, checksum };
  });
}

export interface MigrateResult {
  applied: Array<{ subgraph: MigrationSet; version: number; name: string }>;
}

/** Applies every pending migration of the given sets (default: all) and returns what ran. */
export async function migrate(
  pool: Pool,
  options: { subgraphs?: readonly MigrationSet[]; onApplied?: (m: MigrationFile) => void; rootDir?: string } = {},
): Promise<MigrateResult> {
  const subgraphs = options.subgraphs ?? MIGRATION_SETS;
  const client = await pool.connect();
  const applied: MigrateResult['applied'] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
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
        applied.push({ subgraph, version: migration.version, name: migration.name });
        options.onApplied?.(migration);
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]).catch(() => undefined);
    client.release();
  }
  return { applied };
}
