// The database a started process runs on: the configured one, or the embedded PostgreSQL when
// DATABASE_URL is unset. Migrates what the role owns on a connection of its own, opens the
// service's pool and checks that its login cannot switch off the database's guards.
import path from 'node:path';
import type { Pool } from 'pg';
import type { Config } from '../platform/config';
import { startEmbeddedPostgres } from '../platform/db/embedded';
import { migrate, MIGRATION_SETS, type MigrationSet } from '../platform/db/migrate';
import type { DataSource } from 'typeorm';
import { createPool } from '../platform/db/pool';
import { openSubgraphDataSource } from '../subgraphs/registry';
import { serviceRoleProblems } from '../platform/db/roles';
import { shownUrl, StartupError, type Out, type Role, type Stoppers } from './startup';

/** Outside production a single DATABASE_URL may also migrate; production names the owner's login apart. */
function migrationUrlOutsideProduction(config: Config, databaseUrl: string): string {
  if (config.isProduction) {
    throw new StartupError(
      'MIGRATION_DATABASE_URL is required in production for the roles that migrate (all and the subgraph roles): ' +
        'a login of spend_control_owner, apart from the service role of DATABASE_URL (docs/operations.md, "Database roles")',
    );
  }
  return databaseUrl;
}

/** Migrations on a connection of their own, closed before the service starts. */
async function migrateWith(url: string, subgraphs: readonly MigrationSet[]): Promise<number> {
  const migrator = createPool(url, { max: 1, applicationName: 'spend-control-migrate' });
  try {
    return (await migrate(migrator, { subgraphs })).applied.length;
  } finally {
    await migrator.end();
  }
}

/**
 * The service's login must not be able to switch off the database's guards (a superuser, or an
 * owner of the tables, can disable triggers): production refuses to start, elsewhere a warning.
 */
async function checkServiceRole(pool: Pool, production: boolean, out: Out): Promise<void> {
  const problems = await serviceRoleProblems(pool);
  if (problems.length === 0) return;
  const message =
    `DATABASE_URL must log in as a member of spend_control_service that owns nothing: ${problems.join('; ')} ` +
    '(docs/operations.md, "Database roles")';
  if (production) throw new StartupError(message);
  out(`database        WARNING ${message}`);
}

/** The service's pool (stopped with the rest) and the URL it is open on. */
export async function prepareDatabase(
  config: Config,
  role: Role,
  stoppers: Stoppers,
  out: Out,
): Promise<{ databaseUrl: string; pool: Pool; dataSource: DataSource | undefined }> {
  let databaseUrl = config.databaseUrl;
  let migrationUrl = config.migrationDatabaseUrl;
  if (!databaseUrl) {
    const dataDir = path.join(config.dataDir, 'pg');
    out(`database        starting embedded PostgreSQL in ${dataDir} …`);
    const embedded = await startEmbeddedPostgres({ dataDir });
    stoppers.push('embedded PostgreSQL', () => embedded.stop());
    // The superuser prepares the roles and migrates; the service runs as its own login.
    databaseUrl = embedded.serviceUrl;
    migrationUrl = embedded.url;
  }
  out(`database        ${shownUrl(databaseUrl)}`);

  // The gateway migrates its own schema (rate-limit buckets); each subgraph role its own.
  const migrating: readonly MigrationSet[] =
    role === 'all' ? MIGRATION_SETS : role === 'worker' ? [] : [role];
  if (migrating.length > 0) {
    const applied = await migrateWith(
      migrationUrl ?? migrationUrlOutsideProduction(config, databaseUrl),
      migrating,
    );
    out(`migrations      ${applied} applied (${migrating.join(', ')})`);
  }
  const pool: Pool = createPool(databaseUrl, { applicationName: `spend-control-${role}` });
  stoppers.push('database pool', () => pool.end());
  await checkServiceRole(pool, config.isProduction, out);
  // The one TypeORM DataSource of a process that serves subgraphs (docs/architecture.md, "TypeORM").
  let dataSource: DataSource | undefined;
  if (role !== 'gateway' && role !== 'worker') {
    dataSource = await openSubgraphDataSource(databaseUrl, `spend-control-${role}`);
    stoppers.push('TypeORM data source', () => dataSource!.destroy());
  }
  return { databaseUrl, pool, dataSource };
}
