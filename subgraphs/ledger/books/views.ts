// The ledger's wire shapes for GraphQL: what a group, an entry, an account, a trial balance line
// and a treasury drift look like to dashboards and analysts (amounts as decimal strings of atomic
// units), the filters and page requests they send, and the scope an actor reads under.
import type { AccountKind, GroupKind } from '../accounts/names';

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

export interface TrialBalanceView {
  asset: AssetView;
  debitsAtomic: string;
  creditsAtomic: string;
  netAtomic: string;
  balanced: boolean;
  entryCount: number;
  byKind: Array<{ kind: AccountKind; balanceAtomic: string }>;
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

export interface PeriodBalanceView {
  asset: AssetView;
  kind: AccountKind;
  debitsAtomic: string;
  creditsAtomic: string;
  netAtomic: string;
  entryCount: number;
}
