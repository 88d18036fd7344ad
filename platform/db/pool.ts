// The one way to open a pg connection pool: bounded size, bounded waits, and an error listener so a
// server restart or a dropped idle connection is reported instead of crashing the process.
// Limits live here as named constants; callers override only the pool size and the name.
import { Pool, type PoolConfig } from 'pg';

export const POOL_DEFAULTS = {
  max: 10,
  /** How long a caller waits for a connection (new or from the pool) before failing. */
  connectionTimeoutMillis: 10_000,
  /** Idle connections are closed after this, so a quiet process holds few server slots. */
  idleTimeoutMillis: 30_000,
  /** No single statement may run longer; a runaway query must not hold locks on money rows. */
  statementTimeoutMs: 30_000,
  /** A transaction left open and idle (a bug, or a hung caller) is ended by the server. */
  idleInTransactionTimeoutMs: 60_000,
} as const;

export interface PoolOptions {
  max?: number;
  /** Shown in pg_stat_activity, so a DBA can tell which role holds which connection. */
  applicationName?: string;
  /** Receives errors of idle clients (e.g. the server went away); default: a line on stderr. */
  onIdleError?: (error: Error) => void;
}

function reportIdleError(error: Error): void {
  process.stderr.write(`postgres pool: idle client error: ${error.message}\n`);
}

export function createPool(url: string, options: PoolOptions = {}): Pool {
  const config: PoolConfig = {
    connectionString: url,
    max: options.max ?? POOL_DEFAULTS.max,
    connectionTimeoutMillis: POOL_DEFAULTS.connectionTimeoutMillis,
    idleTimeoutMillis: POOL_DEFAULTS.idleTimeoutMillis,
    statement_timeout: POOL_DEFAULTS.statementTimeoutMs,
    idle_in_transaction_session_timeout: POOL_DEFAULTS.idleInTransactionTimeoutMs,
    keepAlive: true,
    application_name: options.applicationName ?? 'spend-control',
  };
  const pool = new Pool(config);
  // Without a listener, an error on an idle client is an unhandled 'error' event and kills Node.
  pool.on('error', options.onIdleError ?? reportIdleError);
  return guardCheckedOutClients(pool);
}

/**
 * The pool listens for errors of idle clients only: a client checked out and held between queries
 * (a worker holding an advisory lock while it calls a merchant or a chain, a LISTEN connection)
 * whose server goes away would emit an unhandled 'error' event, which kills Node. Every client
 * gets a listener of its own; the error is not lost, as the client's next query fails with it
 * (and its holder releases it as broken).
 */
export function guardCheckedOutClients(pool: Pool): Pool {
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  return pool;
}
