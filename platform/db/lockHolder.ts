// Advisory locks held for as long as a job works, without session state: each lock is
// transaction-scoped (pg_try_advisory_xact_lock) inside one transaction left open on a connection
// of its own, committed when the job is done. A transaction pins its server connection even behind
// PgBouncer in transaction mode, so the lock is safe there, where a session lock
// (pg_try_advisory_lock) would stay on a pooled server connection that another client then uses.
// Like a session lock, it dies with its holder: a process killed mid-job drops its connection, the
// server (or PgBouncer, which closes a server connection whose client left mid-transaction) rolls
// the transaction back, and the next round anywhere takes the lock at once. The holding
// transaction never writes, so it takes no transaction id and holds back no vacuum.
import type { Pool, PoolClient } from 'pg';

/** How long a holder may sit idle in its transaction before the server ends it (the pool's 60 s is for mistakes, not jobs). */
export const LOCK_HOLD_LIMIT = '15min';

/**
 * The SQL that tries the two-key lock of `namespace` and `name` (SQL expressions, e.g. `$1` and a
 * column): the one spelling of the key, for a statement that locks the rows it picks (claims.ts)
 * as for tryLock here.
 */
export function tryNamedLockSql(namespace: string, name: string): string {
  return `pg_try_advisory_xact_lock(${namespace}, hashtext(${name}))`;
}

/** A one-key lock, or a two-key lock whose second key is hashtext(name). */
export type AdvisoryKey =
  { readonly key: bigint | number } | { readonly namespace: number; readonly name: string };

export interface LockHolder {
  /** The holding connection, for reads that must see the state as of holding the locks. */
  readonly client: PoolClient;
  /** Takes the lock if no other holder has it; false otherwise (never waits). */
  tryLock(lock: AdvisoryKey): Promise<boolean>;
  /** Ends the holding transaction (every lock with it) and gives the connection back. */
  release(): Promise<void>;
}

export async function openLockHolder(pool: Pool): Promise<LockHolder> {
  const client = await pool.connect();
  try {
    // One round trip: a simple query may hold both statements (no parameters).
    await client.query(
      `BEGIN; SET LOCAL idle_in_transaction_session_timeout = '${LOCK_HOLD_LIMIT}'`,
    );
  } catch (error) {
    client.release(true);
    throw error;
  }
  let released = false;
  return {
    client,
    async tryLock(lock) {
      const { rows } =
        'key' in lock
          ? await client.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [
              lock.key.toString(),
            ])
          : await client.query<{ ok: boolean }>(`SELECT ${tryNamedLockSql('$1', '$2')} AS ok`, [
              lock.namespace,
              lock.name,
            ]);
      return rows[0]?.ok === true;
    },
    async release() {
      if (released) return;
      released = true;
      const ended = await client.query('COMMIT').then(
        () => true,
        () => false,
      );
      client.release(!ended);
    },
  };
}
