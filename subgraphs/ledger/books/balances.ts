// Reads of balances: for admins, accounts with their balances (paged by account id), the trial
// balance per asset with its split by account kind, and the latest treasury drift per asset; for
// anyone with a scope, the balances by account kind over a period (periodBalances).
// Each comes from a view of the ledger schema (account_balances, trial_balance, treasury_drift).
import type { Db } from '../../../platform/db';
import type { AccountKind } from '../accounts/names';
import {
  ACCOUNT_CURSOR,
  ASSET_COLUMNS,
  type AssetColumns,
  assetOf,
  Conditions,
  decodeCursor,
  encodeCursor,
  filtered,
  pageSize,
  scoped,
} from './paging';
import type {
  AccountView,
  LedgerFilterInput,
  LedgerScope,
  Page,
  PageRequest,
  PeriodBalanceView,
  TrialBalanceView,
  TreasuryDriftView,
} from './views';

interface AccountRow extends AssetColumns {
  account_id: string;
  kind: AccountKind;
  ref: string;
  balance: string;
  entry_count: string;
  created_at: Date;
}

export async function listAccounts(
  db: Db,
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

export async function trialBalance(db: Db): Promise<TrialBalanceView[]> {
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

export async function latestTreasuryDrift(db: Db): Promise<TreasuryDriftView[]> {
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

/**
 * Debits, credits and net per asset and account kind over the entries the filter selects (its
 * period, account, group kind, policy, asset), within the actor's scope.
 */
export async function periodBalances(
  db: Db,
  scope: LedgerScope,
  filter: LedgerFilterInput,
): Promise<PeriodBalanceView[]> {
  const conditions = new Conditions();
  scoped(conditions, scope);
  filtered(conditions, filter, 'entry');
  const result = await db.query<
    AssetColumns & { kind: AccountKind; debits: string; credits: string; entry_count: string }
  >(
    `SELECT ${ASSET_COLUMNS}, a.kind::text AS kind,
            coalesce(sum(e.amount) FILTER (WHERE e.amount > 0), 0)::text AS debits,
            coalesce(sum(e.amount) FILTER (WHERE e.amount < 0), 0)::text AS credits,
            count(*)::text AS entry_count
       FROM ledger.entries e
       JOIN ledger.groups g ON g.group_id = e.group_id
       JOIN ledger.accounts a ON a.account_id = e.account_id
       JOIN ledger.assets s ON s.asset_id = e.asset
       ${conditions.where()}
      GROUP BY s.asset_id, s.chain, s.token, s.symbol, s.decimals, a.kind
      ORDER BY s.asset_id COLLATE "C", a.kind`,
    conditions.values,
  );
  return result.rows.map((row) => ({
    asset: assetOf(row),
    kind: row.kind,
    debitsAtomic: row.debits,
    creditsAtomic: row.credits,
    netAtomic: (BigInt(row.debits) + BigInt(row.credits)).toString(),
    entryCount: Number(row.entry_count),
  }));
}
