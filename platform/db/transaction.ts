// Runs work inside one transaction on one pooled connection: COMMIT when it returns, ROLLBACK when
// it throws (the error passes through unchanged). A connection whose ROLLBACK itself failed is in
// an unknown state and is destroyed instead of going back to the pool.
import type { Pool, PoolClient } from 'pg';

export async function withTransaction<T>(
  pool: Pool,
  work: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    broken = await client.query('ROLLBACK').then(
      () => false,
      () => true,
    );
    throw error;
  } finally {
    client.release(broken);
  }
}
