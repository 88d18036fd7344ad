// The database layer's public surface: the handle types, the pool, transactions, migrations.
export type { Db, DbPool } from './handle';
export { createPool, POOL_DEFAULTS, type PoolOptions } from './pool';
export { withTransaction } from './transaction';
export { openLockHolder, tryNamedLockSql, type AdvisoryKey, type LockHolder } from './lockHolder';
export { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from './unavailable';
