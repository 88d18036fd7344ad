// The catalog's one write: a maturity change, which locks the row, updates it and writes the
// audit row in one transaction. It stays in SQL on the pg pool (not TypeORM) because it takes a
// row lock; the update fires the catalog_changed notification (migration 0001).
import type { Pool } from 'pg';
import { withTransaction } from '../../platform/db';
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
  return withTransaction(db, async (client) => {
    const current = await client.query<{ maturity: string }>(
      `SELECT maturity FROM ${table} WHERE id = $1 FOR UPDATE`,
      [change.id],
    );
    // No such row: nothing was written, so ending the transaction with COMMIT changes nothing.
    if (current.rows.length === 0) return null;
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
    return { from };
  });
}
