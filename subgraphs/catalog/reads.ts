// SQL access to the `catalog` schema: one consistent read of the whole catalog (a single
// statement, so one snapshot), and a maturity change that locks the row, updates it and writes
// the audit row in one transaction. The catalog is small by design; reads refuse past a limit.
import type { Pool } from 'pg';
import { type ErrorCode, isErrorCode } from '../../core/errors';
import { isMaturityLevel, type MaturityLevel } from './maturity';

/** The catalog is loaded whole per request; past this many rows per table that stops being cheap. */
export const MAX_CATALOG_ROWS_PER_TABLE = 1_000;
export const MAX_REASON_LENGTH = 500;

export interface ProviderRow {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
  readonly maturity: MaturityLevel;
  readonly updatedAt: Date;
}

export interface CapabilityRow {
  readonly id: string;
  readonly providerId: string;
  readonly maturity: MaturityLevel;
  readonly movesMoney: boolean;
  readonly gateCode: ErrorCode | null;
  readonly updatedAt: Date;
}

export interface GatedRailRow {
  readonly rail: string;
  readonly refusalCode: ErrorCode;
}

export interface CatalogRows {
  readonly providers: readonly ProviderRow[];
  readonly capabilities: readonly CapabilityRow[];
  readonly gatedRails: readonly GatedRailRow[];
}

export type MaturitySubject = 'provider' | 'capability';

const SUBJECT_TABLES: Readonly<Record<MaturitySubject, string>> = {
  provider: 'catalog.providers',
  capability: 'catalog.capabilities',
};

const LIMIT = MAX_CATALOG_ROWS_PER_TABLE + 1;
const READ_CATALOG = `
  SELECT
    (SELECT coalesce(json_agg(json_build_object(
              'id', p.id, 'name', p.name, 'kind', p.kind, 'maturity', p.maturity, 'updatedAt', p.updated_at)
            ORDER BY p.id COLLATE "C"), '[]'::json)
       FROM (SELECT * FROM catalog.providers ORDER BY id COLLATE "C" LIMIT ${LIMIT}) p) AS providers,
    (SELECT coalesce(json_agg(json_build_object(
              'id', c.id, 'providerId', c.provider_id, 'maturity', c.maturity, 'movesMoney', c.moves_money,
              'gateCode', c.gate_code, 'updatedAt', c.updated_at)
            ORDER BY c.id COLLATE "C"), '[]'::json)
       FROM (SELECT * FROM catalog.capabilities ORDER BY id COLLATE "C" LIMIT ${LIMIT}) c) AS capabilities,
    (SELECT coalesce(json_agg(json_build_object('rail', r.rail, 'refusalCode', r.refusal_code)
            ORDER BY r.rail COLLATE "C"), '[]'::json)
       FROM (SELECT * FROM catalog.gated_rails ORDER BY rail COLLATE "C" LIMIT ${LIMIT}) r) AS gated_rails`;

class CatalogDataError extends Error {
  constructor(message: string) {
    super(`catalog data: ${message}`);
    this.name = 'CatalogDataError';
  }
}

function maturityOf(value: unknown, where: string): MaturityLevel {
  if (!isMaturityLevel(value))
    throw new CatalogDataError(`${where} has unknown maturity ${String(value)}`);
  return value;
}

function codeOf(value: unknown, where: string): ErrorCode {
  if (!isErrorCode(value))
    throw new CatalogDataError(
      `${where} names ${String(value)}, which is not a registered error code`,
    );
  return value;
}

function bounded<T>(rows: T[], table: string): T[] {
  if (rows.length > MAX_CATALOG_ROWS_PER_TABLE) {
    throw new CatalogDataError(`${table} holds more than ${MAX_CATALOG_ROWS_PER_TABLE} rows`);
  }
  return rows;
}

type JsonRow = Record<string, unknown>;

export async function readCatalog(db: Pool): Promise<CatalogRows> {
  const result = await db.query<{
    providers: JsonRow[];
    capabilities: JsonRow[];
    gated_rails: JsonRow[];
  }>(READ_CATALOG);
  const row = result.rows[0];
  return {
    providers: bounded(row.providers, 'providers').map((p) => ({
      id: String(p.id),
      name: String(p.name),
      kind: String(p.kind),
      maturity: maturityOf(p.maturity, `provider ${String(p.id)}`),
      updatedAt: new Date(String(p.updatedAt)),
    })),
    capabilities: bounded(row.capabilities, 'capabilities').map((c) => ({
      id: String(c.id),
      providerId: String(c.providerId),
      maturity: maturityOf(c.maturity, `capability ${String(c.id)}`),
      movesMoney: c.movesMoney === true,
      gateCode: c.gateCode === null ? null : codeOf(c.gateCode, `capability ${String(c.id)}`),
      updatedAt: new Date(String(c.updatedAt)),
    })),
    gatedRails: bounded(row.gated_rails, 'gated_rails').map((r) => ({
      rail: String(r.rail),
      refusalCode: codeOf(r.refusalCode, `rail ${String(r.rail)}`),
    })),
  };
}

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
