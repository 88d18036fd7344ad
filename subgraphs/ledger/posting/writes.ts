// The typed door to the ledger's SQL functions (ledger.post_group, post_groups, reverse_group,
// register_asset, post_treasury_transfer): bigint amounts in, decimal strings to SQL, group ids
// out, SQL refusals mapped to AppError (sql.ts). It decides nothing the database does not re-check.
//
// Pass a pool to post in a transaction of its own, or your PoolClient to post inside your
// transaction (the balance check then runs at your COMMIT: map its error with ledgerErrorFrom).
// Calls that post two groups (cross-rail, treasury transfer) send one statement, so the pair
// commits or fails together either way. The accounting of each group kind is in groupKinds.ts.
import type { Db } from '../../../platform/db';
import { assetId, type GroupKind, parseAssetId } from '../accounts/names';
import { run } from '../sql';
import { atomic } from './amounts';

export interface LedgerEntryInput {
  readonly account: string;
  /** + debit, - credit, atomic units of the group's asset; never 0. */
  readonly amountAtomic: bigint;
}

export interface PostGroupInput {
  readonly kind: Exclude<GroupKind, 'REVERSAL'>;
  readonly asset: string;
  readonly entries: readonly LedgerEntryInput[];
  /** Names the business fact, e.g. `funding:ci_…`; a retry with the same key returns the first group. */
  readonly idempotencyKey: string;
  /** `ci_` + 24 hex (consumer intent) or `0x` + 64 hex (SpendIntent hash). */
  readonly intentRef?: string | null;
  readonly policyId?: string | null;
  readonly memo?: string | null;
}

export interface PostedPair {
  readonly fundingGroupId: string;
  readonly settlementGroupId: string;
}

function groupParams(input: PostGroupInput): unknown[] {
  const entries = input.entries.map((entry, index) => ({
    account: entry.account,
    amount: atomic(`entries[${index}].amountAtomic`, entry.amountAtomic),
  }));
  return [
    input.kind,
    input.asset,
    JSON.stringify(entries),
    input.idempotencyKey,
    input.intentRef ?? null,
    input.policyId ?? null,
    input.memo ?? null,
  ];
}

const POST_GROUP_SQL = 'SELECT ledger.post_group($1, $2, $3::jsonb, $4, $5, $6, $7) AS group_id';

/** ledger.post_group: validates, claims the key, opens accounts on first use. Returns the `lg_` id. */
export async function postGroup(db: Db, input: PostGroupInput): Promise<string> {
  const row = await run<{ group_id: string }>(db, {
    text: POST_GROUP_SQL,
    values: groupParams(input),
  });
  return row.group_id;
}

/** The most groups ledger.post_groups takes in one call. */
export const MAX_GROUPS_PER_BATCH = 1000;

/**
 * ledger.post_groups: many groups in one statement, so they share one round trip, one statement
 * and (with a pool) one durable COMMIT. Every group is checked exactly as postGroup checks it;
 * one refused group refuses the whole call (and your transaction, when you pass a PoolClient).
 * Returns the groups' ids in the order given; a replayed key returns its first group's id.
 * 1 to MAX_GROUPS_PER_BATCH groups.
 */
export async function postGroups(db: Db, inputs: readonly PostGroupInput[]): Promise<string[]> {
  const row = await run<{ group_ids: string[] }>(db, {
    text: 'SELECT ledger.post_groups($1::jsonb) AS group_ids',
    values: [groupsParam(inputs)],
  });
  return row.group_ids;
}

/** The groups as ledger.post_groups takes them (its p_groups, JSON), amounts checked as postGroup checks them. */
export function groupsParam(inputs: readonly PostGroupInput[]): string {
  const groups = inputs.map((input, group) => ({
    kind: input.kind,
    asset: input.asset,
    entries: input.entries.map((entry, index) => ({
      account: entry.account,
      amount: atomic(`groups[${group}].entries[${index}].amountAtomic`, entry.amountAtomic),
    })),
    idempotency_key: input.idempotencyKey,
    intent_ref: input.intentRef ?? null,
    policy_id: input.policyId ?? null,
    memo: input.memo ?? null,
  }));
  return JSON.stringify(groups);
}

/** Two groups in one statement, so both commit or neither does. */
export async function postPair(
  db: Db,
  funding: PostGroupInput,
  settlement: PostGroupInput,
): Promise<PostedPair> {
  const row = await run<{ funding_group_id: string; settlement_group_id: string }>(db, {
    text:
      'SELECT ledger.post_group($1, $2, $3::jsonb, $4, $5, $6, $7) AS funding_group_id, ' +
      'ledger.post_group($8, $9, $10::jsonb, $11, $12, $13, $14) AS settlement_group_id',
    values: [...groupParams(funding), ...groupParams(settlement)],
  });
  return { fundingGroupId: row.funding_group_id, settlementGroupId: row.settlement_group_id };
}

export interface ReverseGroupInput {
  readonly groupId: string;
  /** 1 to 500 characters; stored as the reversal's memo. */
  readonly reason: string;
  readonly idempotencyKey: string;
}

/** ledger.reverse_group: a REVERSAL negating every entry of the group, pointing at it. At most once. */
export async function reverseGroup(db: Db, input: ReverseGroupInput): Promise<string> {
  const row = await run<{ group_id: string }>(db, {
    text: 'SELECT ledger.reverse_group($1, $2, $3) AS group_id',
    values: [input.groupId, input.reason, input.idempotencyKey],
  });
  return row.group_id;
}

export interface RegisterAssetInput {
  readonly chain: string;
  readonly token: string;
  readonly symbol: string;
  readonly decimals: number;
}

/** Idempotent; a second registration with another symbol or decimals is an idempotency conflict. */
export async function registerAsset(db: Db, input: RegisterAssetInput): Promise<string> {
  const { chain, token } = parseAssetId(assetId(input.chain, input.token));
  const row = await run<{ asset: string }>(db, {
    text: 'SELECT ledger.register_asset($1, $2, $3, $4) AS asset',
    values: [chain, token, input.symbol, input.decimals],
  });
  return row.asset;
}

export interface TreasuryTransferInput {
  /** The rail the float leaves (e.g. USDT0 on eip155:196). */
  readonly source: { readonly asset: string; readonly amountAtomic: bigint };
  /** The rail it arrives on (e.g. USDC on eip155:8453); the amount is what actually arrived. */
  readonly destination: { readonly asset: string; readonly amountAtomic: bigint };
  /** At most 188 characters; `:source` and `:destination` are appended per group. */
  readonly idempotencyKey: string;
  readonly memo?: string | null;
}

export interface TreasuryTransferGroups {
  readonly sourceGroupId: string;
  readonly destinationGroupId: string;
}

/**
 * TREASURY_TRANSFER pair (ledger.post_treasury_transfer): source rail Dr CROSS_RAIL_CLEARING /
 * Cr TREASURY; destination rail Dr TREASURY / Cr CROSS_RAIL_CLEARING. Different assets, both
 * amounts positive, one statement.
 */
export async function postTreasuryTransfer(
  db: Db,
  input: TreasuryTransferInput,
): Promise<TreasuryTransferGroups> {
  const row = await run<{ source_group_id: string; destination_group_id: string }>(db, {
    text: 'SELECT source_group_id, destination_group_id FROM ledger.post_treasury_transfer($1, $2, $3, $4, $5, $6)',
    values: [
      input.source.asset,
      atomic('source.amountAtomic', input.source.amountAtomic),
      input.destination.asset,
      atomic('destination.amountAtomic', input.destination.amountAtomic),
      input.idempotencyKey,
      input.memo ?? null,
    ],
  });
  return { sourceGroupId: row.source_group_id, destinationGroupId: row.destination_group_id };
}
