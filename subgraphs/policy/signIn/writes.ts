// SQL for sign-in nonces: issue one (pruning a bounded batch of expired ones on the way) and
// consume one with a single conditional UPDATE, outside any transaction, so the use is committed
// before the caller checks anything else. Exactly one of any number of concurrent uses wins.
import type { Db } from '../../../platform/db';

/** Expired rows removed per issued nonce: the table stays small without a sweeper. */
export const NONCE_PRUNE_BATCH = 100;

export async function insertSignInNonce(
  db: Db,
  nonce: string,
  issuedAt: Date,
  expiresAt: Date,
): Promise<void> {
  await db.query(
    `WITH pruned AS (
       DELETE FROM policy.sign_in_nonces
        WHERE nonce IN (SELECT nonce FROM policy.sign_in_nonces WHERE expires_at <= $2 LIMIT ${NONCE_PRUNE_BATCH})
     )
     INSERT INTO policy.sign_in_nonces (nonce, issued_at, expires_at) VALUES ($1, $2, $3)`,
    [nonce, issuedAt, expiresAt],
  );
}

/** True for exactly one caller per issued, unexpired nonce; false for unknown, used or expired ones. */
export async function consumeSignInNonce(db: Db, nonce: string, at: Date): Promise<boolean> {
  const result = await db.query(
    `UPDATE policy.sign_in_nonces SET consumed_at = $2
      WHERE nonce = $1 AND consumed_at IS NULL AND expires_at > $2`,
    [nonce, at],
  );
  return result.rowCount === 1;
}
