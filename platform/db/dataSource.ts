// TypeORM DataSource over PostgreSQL for entity reads and writes: one per process, opened where the
// process opens its pool (subgraphs/registry.ts names the entities). The schema belongs to the SQL
// migrations (migrate.ts), so TypeORM never synchronises or migrates; pool limits match pool.ts.
import { DataSource, type DataSourceOptions } from 'typeorm';
import { POOL_DEFAULTS, type PoolOptions } from './pool';

export type EntityList = NonNullable<DataSourceOptions['entities']>;

function reportPoolError(error: unknown): void {
  process.stderr.write(
    `postgres pool (typeorm): ${error instanceof Error ? error.message : String(error)}\n`,
  );
}

/** Not yet connected: call `initialize()` before use and `destroy()` when done. */
export function createDataSource(
  url: string,
  entities: EntityList,
  options: PoolOptions = {},
): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    entities,
    synchronize: false,
    migrationsRun: false,
    dropSchema: false,
    poolSize: options.max ?? POOL_DEFAULTS.max,
    applicationName: options.applicationName ?? 'spend-control',
    connectTimeoutMS: POOL_DEFAULTS.connectionTimeoutMillis,
    poolErrorHandler: options.onIdleError ?? reportPoolError,
    extra: {
      idleTimeoutMillis: POOL_DEFAULTS.idleTimeoutMillis,
      statement_timeout: POOL_DEFAULTS.statementTimeoutMs,
      idle_in_transaction_session_timeout: POOL_DEFAULTS.idleInTransactionTimeoutMs,
      keepAlive: true,
    },
  });
}
