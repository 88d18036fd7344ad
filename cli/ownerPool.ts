// The owner's connection for the commands that change the schema (migrate, archive): the login of
// MIGRATION_DATABASE_URL, else DATABASE_URL outside production, else the embedded PostgreSQL.
import path from 'node:path';
import type { Pool } from 'pg';
import { loadConfig } from '../platform/config';
import { startEmbeddedPostgres } from '../platform/db/embedded';
import { createPool } from '../platform/db/pool';
import { StartupError } from './startup';

/** Runs `use` on a pool of the owner's login, closed (and the embedded server stopped) afterwards. */
export async function withOwnerPool<T>(
  applicationName: string,
  use: (pool: Pool) => Promise<T>,
): Promise<T> {
  const config = loadConfig();
  let stopEmbedded: (() => Promise<void>) | null = null;
  let url = config.migrationDatabaseUrl;
  if (url === null && config.databaseUrl !== null) {
    if (config.isProduction)
      throw new StartupError(
        'MIGRATION_DATABASE_URL (a login of spend_control_owner) is required in production',
      );
    url = config.databaseUrl;
  }
  if (url === null) {
    const embedded = await startEmbeddedPostgres({ dataDir: path.join(config.dataDir, 'pg') });
    stopEmbedded = () => embedded.stop();
    url = embedded.url;
  }
  const pool = createPool(url, { applicationName });
  try {
    return await use(pool);
  } finally {
    await pool.end();
    await stopEmbedded?.();
  }
}
