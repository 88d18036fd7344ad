// The catalog's one write: a maturity change, which locks the row, updates it and writes the
// audit row in one transaction. It stays in SQL on the pg pool (not TypeORM) because it takes a
// row lock; the update fires the catalog_changed notification (migration 0001).
import type { Pool } from 'pg';
import { type MaturityLevel } from './maturity';
import { maturityOf } from './reads';

export const MAX_REASON_LENGTH = 500;

export type MaturitySubject = 'provider' | 'capability';

const SUBJECT_TABLES: Readonly<Record<MaturitySubject, string>> = {
  provider: 'catalog.providers',
  capability: 'catalog.capabilities',
};

export interface MaturityChange {
  readonly subject: MaturitySubject;
  readonly id: string;
  readonly maturity: MaturityLevel;
  readonly reason: string;
  /** As written by describeActor. */
  readonly actor: string;
  readonly at: Date;
}

/**
 * Sets the maturity and audits it in one transaction; a change to the same level is allowed and
 * audited too. Returns the previous level, or null when no row has this id (nothing is written).
 */
export async function setMaturity(
  db: Pool,
  change: MaturityChange,
): Promise<{ from: MaturityLevel } | null> {
  const table = SUBJECT_TABLES[change.subject];
  const client = await db.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const current = await client.query<{ maturity: string }>(
      `SELECT maturity FROM ${table} WHERE id = $1 FOR UPDATE`,
      [change.id],
    );
    if (current.rows.length === 0) {
      await client.query('ROLLBACK');
      return null;
    }
    const from = maturityOf(current.rows[0].maturity, `${change.subject} ${change.id}`);
    await client.query(`UPDATE ${table} SET maturity = $2, updated_at = $3 WHERE id = $1`, [
      change.id,
      change.maturity,
      change.at,
    ]);
    await client.query(
      `INSERT INTO catalog.maturity_changes (subject_kind, subject_id, from_maturity, to_maturity, reason, actor, changed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [change.subject, change.id, from, change.maturity, change.reason, change.actor, change.at],
    );
    await client.query('COMMIT');
    return { from };
  } catch (error) {
    // A connection whose ROLLBACK failed is in an unknown state: destroy it instead of pooling it.
    broken = await client.query('ROLLBACK').then(
      () => false,
      () => true,
    );
    throw error;
  } finally {
    client.release(broken);
  }
}
