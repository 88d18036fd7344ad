// Reads for dashboards and analysts: groups and entries filtered by account, kind, intent, policy,
// asset and time, newest first with opaque keyset cursors over seq (stable while rows are added),
// plus accounts, the trial balance and treasury drift. Every list is bounded by MAX_PAGE_SIZE.
import type { Pool } from 'pg';
import { AppError } from '../../core/errors';
import type { AccountKind, GroupKind } from './accounts';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/** Who may see what: everything, or only the groups (and their entries) of these policies. */
export type LedgerScope =
  { readonly all: true } | { readonly all: false; readonly policyIds: readonly string[] };

export interface AssetView {
  id: string;
  chain: string;
  token: string;
  symbol: string;
  decimals: number;
}

export interface EntryView {
  id: string;
  groupId: string;
  entryNo: number;
  groupKind: GroupKind;
  accountKey: string;
  accountKind: AccountKind;
  asset: AssetView;
  amountAtomic: string;
  createdAt: Date;
}

export interface GroupView {
  id: string;
  kind: GroupKind;
  asset: AssetView;
  intentRef: string | null;
  policyId: string | null;
  reverses: string | null;
  memo: string | null;
  idempotencyKey: string;
  createdAt: Date;
}

export interface AccountView {
  key: string;
  kind: AccountKind;
  asset: AssetView;
  ref: string;
  balanceAtomic: string;
  entryCount: number;
  createdAt: Date;
}

export interface Page<T> {
  nodes: T[];
  pageInfo: { endCursor: string | null; hasNextPage: boolean };
}

/** GraphQL hands over explicit nulls; null and absent both mean "no such filter". */
export interface LedgerFilterInput {
  account?: string | null;
  kind?: GroupKind | null;
  intentRef?: string | null;
  policyId?: string | null;
  asset?: string | null;
  from?: Date | null;
  to?: Date | null;
}

export interface PageRequest {
  first?: number | null;
  after?: string | null;
}

const SEQ_CURSOR = /^seq:([1-9][0-9]{0,18})$/;
const ACCOUNT_CURSOR = /^account:(.{1,300})$/;

function encodeCursor(value: string): string {
  return Buffer.from(value, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string, shape: RegExp): string {
  const match = shape.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (match === null)
    throw new AppError('REQUEST_INVALID', 'The cursor is not one this list handed out.', [
      { field: 'after', reason: 'unknown cursor' },
    ]);
  return match[1];
}

function pageSize(first: number | null | undefined): number {
  const size = first ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
    throw new AppError('REQUEST_INVALID', undefined, [
      { field: 'first', reason: `must be 1 to ${MAX_PAGE_SIZE}` },
    ]);
  }
  return size;
}

/** Collects parameterised conditions so each query carries only the filters it was given. */
class Conditions {
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

function scoped(conditions: Conditions, scope: LedgerScope): void {
  if (!scope.all) conditions.add((p) => `g.policy_id = ANY(${p}::text[])`, scope.policyIds);
}

function filtered(
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

interface AssetColumns {
  asset: string;
  chain: string;
  token: string;
  symbol: string;
  decimals: number;
}

const ASSET_COLUMNS = 's.asset_id AS asset, s.chain, s.token, s.symbol, s.decimals';

function assetOf(row: AssetColumns): AssetView {
  return {
    id: row.asset,
    chain: row.chain,
    token: row.token,
    symbol: row.symbol,
    decimals: row.decimals,
  };
}

function pageOf<R extends { seq: string }, T>(
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

interface GroupRow extends AssetColumns {
  seq: string;
  group_id: string;
  kind: GroupKind;
  intent_ref: string | null;
  policy_id: string | null;
  reverses: string | null;
  memo: string | null;
  idempotency_key: string;
  created_at: Date;
}

const GROUP_SELECT = `SELECT g.seq::text AS seq, g.group_id, g.kind::text AS kind, g.intent_ref, g.policy_id, g.reverses, g.memo,
         g.idempotency_key, g.created_at, ${ASSET_COLUMNS}
    FROM ledger.groups g JOIN ledger.assets s ON s.asset_id = g.asset`;

function groupOf(row: GroupRow): GroupView {
  return {
    id: row.group_id,
    kind: row.kind,
    asset: assetOf(row),
    intentRef: row.intent_ref,
    policyId: row.policy_id,
    reverses: row.reverses,
    memo: row.memo,
    idempotencyKey: row.idempotency_key,
    createdAt: row.created_at,
  };
}

export async function listGroups(
  db: Pool,
  scope: LedgerScope,
  filter: LedgerFilterInput,
  page: PageRequest,
): Promise<Page<GroupView>> {
  const size = pageSize(page.first);
  const conditions = new Conditions();
  scoped(conditions, scope);
  filtered(conditions, filter, 'group');
  if (page.after != null)
    conditions.add((p) => `g.seq < ${p}::bigint`, decodeCursor(page.after, SEQ_CURSOR));
  conditions.values.push(size + 1);
  const result = await db.query<GroupRow>(
    `${GROUP_SELECT} ${conditions.where()} ORDER BY g.seq DESC LIMIT $${conditions.values.length}`,
    conditions.values,
  );
  return pageOf(result.rows, size, groupOf);
}

/** One group, or null when it does not exist or lies outside the scope. */
export async function groupById(
  db: Pool,
  scope: LedgerScope,
  groupId: string,
): Promise<GroupView | null> {
  const conditions = new Conditions();
  conditions.add((p) => `g.group_id = ${p}`, groupId);
  scoped(conditions, scope);
  const result = await db.query<GroupRow>(
    `${GROUP_SELECT} ${conditions.where()}`,
    conditions.values,
  );
  return result.rows.length === 0 ? null : groupOf(result.rows[0]);
}

export async function groupReversing(
  db: Pool,
  scope: LedgerScope,
  groupId: string,
): Promise<GroupView | null> {
  const conditions = new Conditions();
  conditions.add((p) => `g.reverses = ${p}`, groupId);
  scoped(conditions, scope);
  const result = await db.query<GroupRow>(
    `${GROUP_SELECT} ${conditions.where()}`,
    conditions.values,
  );
  return result.rows.length === 0 ? null : groupOf(result.rows[0]);
}

interface EntryRow extends AssetColumns {
  seq: string;
  group_id: string;
  entry_no: number;
  group_kind: GroupKind;
  account_id: string;
  account_kind: AccountKind;
  amount: string;
  created_at: Date;
}

const ENTRY_SELECT = `SELECT e.seq::text AS seq, e.group_id, e.entry_no, g.kind::text AS group_kind, e.account_id,
         a.kind::text AS account_kind, e.amount::text AS amount, g.created_at, ${ASSET_COLUMNS}
    FROM ledger.entries e
    JOIN ledger.groups g ON g.group_id = e.group_id
    JOIN ledger.accounts a ON a.account_id = e.account_id
    JOIN ledger.assets s ON s.asset_id = e.asset`;

function entryOf(row: EntryRow): EntryView {
  return {
    id: `${row.group_id}:${row.entry_no}`,
    groupId: row.group_id,
    entryNo: row.entry_no,
    groupKind: row.group_kind,
    accountKey: row.account_id,
    accountKind: row.account_kind,
    asset: assetOf(row),
    amountAtomic: row.amount,
    createdAt: row.created_at,
  };
}

export async function listEntries(
  db: Pool,
  scope: LedgerScope,
  filter: LedgerFilterInput,
  page: PageRequest,
): Promise<Page<EntryView>> {
  const size = pageSize(page.first);
  const conditions = new Conditions();
  scoped(conditions, scope);
  filtered(conditions, filter, 'entry');
  if (page.after != null)
    conditions.add((p) => `e.seq < ${p}::bigint`, decodeCursor(page.after, SEQ_CURSOR));
  conditions.values.push(size + 1);
  const result = await db.query<EntryRow>(
    `${ENTRY_SELECT} ${conditions.where()} ORDER BY e.seq DESC LIMIT $${conditions.values.length}`,
    conditions.values,
  );
  return pageOf(result.rows, size, entryOf);
}

/** The entries of these groups (already authorised through their groups), in slot order. */
export async function entriesOfGroups(
  db: Pool,
  groupIds: readonly string[],
): Promise<Map<string, EntryView[]>> {
  const byGroup = new Map<string, EntryView[]>(groupIds.map((id) => [id, []]));
  if (groupIds.length === 0) return byGroup;
  const result = await db.query<EntryRow>(
    `${ENTRY_SELECT} WHERE e.group_id = ANY($1::text[]) ORDER BY e.group_id, e.entry_no`,
    [groupIds],
  );
  for (const row of result.rows) byGroup.get(row.group_id)?.push(entryOf(row));
  return byGroup;
}

interface AccountRow extends AssetColumns {
  account_id: string;
  kind: AccountKind;
  ref: string;
  balance: string;
  entry_count: string;
  created_at: Date;
}

export async function listAccounts(
  db: Pool,
  filter: { kind?: AccountKind | null; asset?: string | null; key?: string },
  page: PageRequest,
): Promise<Page<AccountView>> {
  const size = pageSize(page.first);
  const conditions = new Conditions();
  if (filter.kind != null) conditions.add((p) => `b.kind = ${p}::ledger.account_kind`, filter.kind);
  if (filter.asset != null) conditions.add((p) => `b.asset = ${p}`, filter.asset);
  if (filter.key != null) conditions.add((p) => `b.account_id = ${p}`, filter.key);
  // Same collation as the primary key, so the page walks the index and sums only its own accounts.
  if (page.after != null)
    conditions.add((p) => `b.account_id > ${p}`, decodeCursor(page.after, ACCOUNT_CURSOR));
  conditions.values.push(size + 1);
  const result = await db.query<AccountRow>(
    `SELECT b.account_id, b.kind::text AS kind, b.ref, b.balance::text AS balance, b.entry_count::text AS entry_count,
            b.created_at, b.asset, b.chain, b.token, b.symbol, b.decimals
       FROM ledger.account_balances b ${conditions.where()}
      ORDER BY b.account_id LIMIT $${conditions.values.length}`,
    conditions.values,
  );
  const hasNextPage = result.rows.length > size;
  const kept = result.rows.slice(0, size);
  const last = kept[kept.length - 1];
  return {
    nodes: kept.map((row) => ({
      key: row.account_id,
      kind: row.kind,
      asset: assetOf(row),
      ref: row.ref,
      balanceAtomic: row.balance,
      entryCount: Number(row.entry_count),
      createdAt: row.created_at,
    })),
    pageInfo: {
      endCursor: last === undefined ? null : encodeCursor(`account:${last.account_id}`),
      hasNextPage,
    },
  };
}

export interface TrialBalanceView {
  asset: AssetView;
  debitsAtomic: string;
  creditsAtomic: string;
  netAtomic: string;
  balanced: boolean;
  entryCount: number;
  byKind: Array<{ kind: AccountKind; balanceAtomic: string }>;
}

export async function trialBalance(db: Pool): Promise<TrialBalanceView[]> {
  const [lines, kinds] = await Promise.all([
    db.query<AssetColumns & { debits: string; credits: string; net: string; entry_count: string }>(
      `SELECT asset, chain, token, symbol, decimals, debits::text, credits::text, net::text, entry_count::text
         FROM ledger.trial_balance ORDER BY asset COLLATE "C"`,
    ),
    db.query<{ asset: string; kind: AccountKind; balance: string }>(
      'SELECT asset, kind::text AS kind, balance::text AS balance FROM ledger.kind_balances ORDER BY asset, kind',
    ),
  ]);
  return lines.rows.map((row) => ({
    asset: assetOf(row),
    debitsAtomic: row.debits,
    creditsAtomic: row.credits,
    netAtomic: row.net,
    balanced: row.net === '0',
    entryCount: Number(row.entry_count),
    byKind: kinds.rows
      .filter((line) => line.asset === row.asset)
      .map((line) => ({ kind: line.kind, balanceAtomic: line.balance })),
  }));
}

export interface TreasuryDriftView {
  asset: AssetView;
  treasuryAddress: string;
  onchainBalanceAtomic: string;
  ledgerBalanceAtomic: string;
  driftAtomic: string;
  blockNumber: string;
  takenAt: Date;
}

export async function latestTreasuryDrift(db: Pool): Promise<TreasuryDriftView[]> {
  const result = await db.query<
    AssetColumns & {
      treasury_address: string;
      onchain: string;
      ledger: string;
      drift: string;
      block_number: string;
      taken_at: Date;
    }
  >(
    `SELECT asset, chain, token, symbol, decimals, treasury_address, onchain_balance::text AS onchain,
            ledger_balance::text AS ledger, drift::text AS drift, block_number::text AS block_number, taken_at
       FROM ledger.treasury_drift ORDER BY asset COLLATE "C"`,
  );
  return result.rows.map((row) => ({
    asset: assetOf(row),
    treasuryAddress: row.treasury_address,
    onchainBalanceAtomic: row.onchain,
    ledgerBalanceAtomic: row.ledger,
    driftAtomic: row.drift,
    blockNumber: row.block_number,
    takenAt: row.taken_at,
  }));
}
