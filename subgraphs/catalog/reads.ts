// Reads of the `catalog` schema through TypeORM (the entities are the GraphQL classes of
// schema.ts): one consistent read of the whole catalog, in one REPEATABLE READ transaction so
// every table is seen at one snapshot. The catalog is small by design; reads refuse past a limit.
import type { DataSource, EntityManager } from 'typeorm';
import { type ErrorCode, isErrorCode } from '../../core/errors';
import { isMaturityLevel, type MaturityLevel } from './maturity';
import { Capability, GatedRail, Provider } from './schema';

/** The catalog is loaded whole per request; past this many rows per table that stops being cheap. */
export const MAX_CATALOG_ROWS_PER_TABLE = 1_000;

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

const LIMIT = MAX_CATALOG_ROWS_PER_TABLE + 1;

class CatalogDataError extends Error {
  constructor(message: string) {
    super(`catalog data: ${message}`);
    this.name = 'CatalogDataError';
  }
}

export function maturityOf(value: unknown, where: string): MaturityLevel {
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

/**
 * Up to LIMIT rows of one table, in the byte order of `key` (the order `COLLATE "C"` gives; keys
 * are ASCII by the tables' CHECKs, so UTF-16 comparison is that order), refused past the limit.
 */
async function boundedRows<T extends object>(
  manager: EntityManager,
  entity: new () => T,
  key: keyof T & string,
  table: string,
): Promise<T[]> {
  const rows = await manager.find(entity, { take: LIMIT });
  if (rows.length > MAX_CATALOG_ROWS_PER_TABLE) {
    throw new CatalogDataError(`${table} holds more than ${MAX_CATALOG_ROWS_PER_TABLE} rows`);
  }
  const keyOf = (row: T): string => String(row[key]);
  return rows.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
}

export function readCatalog(dataSource: DataSource): Promise<CatalogRows> {
  return dataSource.transaction('REPEATABLE READ', async (manager) => {
    const providers = await boundedRows(manager, Provider, 'id', 'providers');
    const capabilities = await boundedRows(manager, Capability, 'id', 'capabilities');
    const gatedRails = await boundedRows(manager, GatedRail, 'rail', 'gated_rails');
    return {
      providers: providers.map((p) => ({
        id: p.id,
        name: p.name,
        kind: p.kind,
        maturity: maturityOf(p.maturity, `provider ${p.id}`),
        updatedAt: p.updatedAt,
      })),
      capabilities: capabilities.map((c) => ({
        id: c.id,
        providerId: c.providerId,
        maturity: maturityOf(c.maturity, `capability ${c.id}`),
        movesMoney: c.movesMoney,
        gateCode: c.gateCode === null ? null : codeOf(c.gateCode, `capability ${c.id}`),
        updatedAt: c.updatedAt,
      })),
      gatedRails: gatedRails.map((r) => ({
        rail: r.rail,
        refusalCode: codeOf(r.refusalCode, `rail ${r.rail}`),
      })),
    };
  });
}
