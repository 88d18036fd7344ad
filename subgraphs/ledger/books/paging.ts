// Paging and filtering shared by the ledger's GraphQL lists: opaque keyset cursors (over seq for
// groups and entries, so a page stays stable while rows are added; over the account id for
// accounts), page sizes bounded by MAX_PAGE_SIZE, and parameterised WHERE clauses.
import { decodeCursor as kitDecodeCursor, encodeCursor, pageSize as kitPageSize } from '../../kit';
import type { AssetView, LedgerFilterInput, LedgerScope, Page } from './views';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

export const SEQ_CURSOR = /^seq:([1-9][0-9]{0,18})$/;
export const ACCOUNT_CURSOR = /^account:(.{1,300})$/;

export { encodeCursor };

/** The key of a ledger list's cursor (its one group). */
export function decodeCursor(cursor: string, shape: RegExp): string {
  return kitDecodeCursor(cursor, shape)[1];
}

export function pageSize(first: number | null | undefined): number {
  return kitPageSize(first, { max: MAX_PAGE_SIZE, fallback: DEFAULT_PAGE_SIZE });
}

/** Collects parameterised conditions so each query carries only the filters it was given. */
export class Conditions {
  readonly clauses: string[] = [];
  readonly values: unknown[] = [];

  add(clause: (placeholder: string) => string, value: unknown): void {
    this.values.push(value);
    this.clauses.push(clause(`$${this.values.length}`));
  }

  where(): string {
    return this.clauses.length === 0 ? '' : `WHERE ${this.clauses.join(' AND ')}`;
  }
}

export function scoped(conditions: Conditions, scope: LedgerScope): void {
  if (!scope.all) conditions.add((p) => `g.policy_id = ANY(${p}::text[])`, scope.policyIds);
}

export function filtered(
  conditions: Conditions,
  filter: LedgerFilterInput,
  accountColumn: 'group' | 'entry',
): void {
  if (filter.account != null) {
    conditions.add(
      (p) =>
        accountColumn === 'entry'
          ? `e.account_id = ${p}`
          : `EXISTS (SELECT 1 FROM ledger.entries x WHERE x.group_id = g.group_id AND x.account_id = ${p})`,
      filter.account,
    );
  }
  if (filter.kind != null) conditions.add((p) => `g.kind = ${p}::ledger.group_kind`, filter.kind);
  if (filter.intentRef != null) conditions.add((p) => `g.intent_ref = ${p}`, filter.intentRef);
  if (filter.policyId != null) conditions.add((p) => `g.policy_id = ${p}`, filter.policyId);
  if (filter.asset != null) conditions.add((p) => `g.asset = ${p}`, filter.asset);
  if (filter.from != null) conditions.add((p) => `g.created_at >= ${p}`, filter.from);
  if (filter.to != null) conditions.add((p) => `g.created_at < ${p}`, filter.to);
}

export interface AssetColumns {
  asset: string;
  chain: string;
  token: string;
  symbol: string;
  decimals: number;
}

export const ASSET_COLUMNS = 's.asset_id AS asset, s.chain, s.token, s.symbol, s.decimals';

export function assetOf(row: AssetColumns): AssetView {
  return {
    id: row.asset,
    chain: row.chain,
    token: row.token,
    symbol: row.symbol,
    decimals: row.decimals,
  };
}

export function pageOf<R extends { seq: string }, T>(
  rows: R[],
  size: number,
  map: (row: R) => T,
): Page<T> {
  const hasNextPage = rows.length > size;
  const kept = rows.slice(0, size);
  const last = kept[kept.length - 1];
  return {
    nodes: kept.map(map),
    pageInfo: {
      endCursor: last === undefined ? null : encodeCursor(`seq:${last.seq}`),
      hasNextPage,
    },
  };
}
