// The typed door to the ledger's SQL API: bigint amounts in, decimal strings to SQL, group ids
// out, and the SQL errors (SQLSTATE LG001..LG005) mapped to AppError. One helper per group kind
// encodes the accounting in docs/ledger.md. It decides nothing the database does not re-check.
//
// Pass a pool to post in a transaction of its own, or your PoolClient to post inside your
// transaction (the balance check then runs at your COMMIT: map its error with ledgerErrorFrom).
// Helpers that post two groups (cross-rail, treasury transfer) send one statement, so the pair
// commits or fails together either way.
import type { QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { AppError, type ErrorCode } from '../../core/errors';
import {
  FEE_RECEIVER_REF,
  FLOAT_REF,
  accountId,
  assetId,
  parseAssetId,
  railRef,
  type GroupKind,
} from './accounts';

/** A pg Pool, PoolClient or Client. */
export interface LedgerDb {
  query<R extends QueryResultRow = QueryResultRow>(config: QueryConfig): Promise<QueryResult<R>>;
}

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

const LEDGER_SQLSTATES: Readonly<Record<string, ErrorCode>> = {
  LG001: 'LEDGER_GROUP_UNBALANCED',
  LG002: 'LEDGER_GROUP_INVALID',
  LG003: 'LEDGER_GROUP_NOT_FOUND',
  LG004: 'LEDGER_ALREADY_REVERSED',
  LG005: 'LEDGER_IDEMPOTENCY_CONFLICT',
};

/** The AppError for a ledger refusal raised by PostgreSQL (also at COMMIT), or null for any other error. */
export function ledgerErrorFrom(error: unknown): AppError | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code: sqlstate, message } = error as { code?: unknown; message?: unknown };
  if (typeof sqlstate !== 'string' || typeof message !== 'string') return null;
  const code = LEDGER_SQLSTATES[sqlstate];
  if (code === undefined) return null;
  return new AppError(code, message.replace(/^[A-Z_]+: /, ''), { sqlstate }, { cause: error });
}

async function run<R extends QueryResultRow>(db: LedgerDb, config: QueryConfig): Promise<R> {
  try {
    const result = await db.query<R>(config);
    return result.rows[0];
  } catch (error) {
    throw ledgerErrorFrom(error) ?? error;
  }
}

function atomic(name: string, value: bigint): string {
  if (typeof value !== 'bigint')
    throw new AppError('LEDGER_GROUP_INVALID', `${name} must be a bigint of atomic units`);
  return value.toString();
}

function positive(name: string, value: bigint): bigint {
  if (typeof value !== 'bigint' || value <= 0n) {
    throw new AppError('LEDGER_GROUP_INVALID', `${name} must be a positive bigint of atomic units`);
  }
  return value;
}

function nonNegative(name: string, value: bigint): bigint {
  if (typeof value !== 'bigint' || value < 0n) {
    throw new AppError(
      'LEDGER_GROUP_INVALID',
      `${name} must be a non-negative bigint of atomic units`,
    );
  }
  return value;
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
export async function postGroup(db: LedgerDb, input: PostGroupInput): Promise<string> {
  const row = await run<{ group_id: string }>(db, {
    name: 'ledger_post_group',
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
export async function postGroups(
  db: LedgerDb,
  inputs: readonly PostGroupInput[],
): Promise<string[]> {
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
  const row = await run<{ group_ids: string[] }>(db, {
    name: 'ledger_post_groups',
    text: 'SELECT ledger.post_groups($1::jsonb) AS group_ids',
    values: [JSON.stringify(groups)],
  });
  return row.group_ids;
}

/** Two groups in one statement, so both commit or neither does. */
async function postPair(
  db: LedgerDb,
  funding: PostGroupInput,
  settlement: PostGroupInput,
): Promise<PostedPair> {
  const row = await run<{ funding_group_id: string; settlement_group_id: string }>(db, {
    name: 'ledger_post_pair',
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
export async function reverseGroup(db: LedgerDb, input: ReverseGroupInput): Promise<string> {
  const row = await run<{ group_id: string }>(db, {
    name: 'ledger_reverse_group',
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
export async function registerAsset(db: LedgerDb, input: RegisterAssetInput): Promise<string> {
  const { chain, token } = parseAssetId(assetId(input.chain, input.token));
  const row = await run<{ asset: string }>(db, {
    text: 'SELECT ledger.register_asset($1, $2, $3, $4) AS asset',
    values: [chain, token, input.symbol, input.decimals],
  });
  return row.asset;
}

// ---------------------------------------------------------------------------------------------
// One helper per group kind. Account refs: TREASURY `float`; USER_OBLIGATION and REFUND_PAYABLE
// the policy id; PROVIDER_SETTLEMENT and COST_OF_GOODS the provider; FEE_REVENUE the revenue
// stream (x402 route name, or `purchase` for quote fees); SPREAD_REVENUE and CROSS_RAIL_CLEARING
// the other rail (`eip155-8453`); SUSPENSE the intent ref.
// ---------------------------------------------------------------------------------------------

/** The fee revenue stream of a purchase quote's service fee. */
export const PURCHASE_FEE_REF = 'purchase';

interface GroupContext {
  readonly idempotencyKey: string;
  readonly intentRef?: string | null;
  readonly policyId?: string | null;
  readonly memo?: string | null;
}

function context(
  input: GroupContext,
): Pick<PostGroupInput, 'idempotencyKey' | 'intentRef' | 'policyId' | 'memo'> {
  return {
    idempotencyKey: input.idempotencyKey,
    intentRef: input.intentRef,
    policyId: input.policyId,
    memo: input.memo,
  };
}

export interface ServiceFeeInput extends GroupContext {
  /** The funding-rail asset the x402 fee was settled in. */
  readonly asset: string;
  readonly feeAtomic: bigint;
  /** The paid route's name, e.g. `preflight_payment`. */
  readonly route: string;
}

/** SERVICE_FEE: an x402 call fee settled to the fee receiver. Dr TREASURY:fee-receiver / Cr FEE_REVENUE:<route>. */
export function postServiceFee(db: LedgerDb, input: ServiceFeeInput): Promise<string> {
  const fee = positive('feeAtomic', input.feeAtomic);
  return postGroup(db, {
    kind: 'SERVICE_FEE',
    asset: input.asset,
    entries: [
      { account: accountId('TREASURY', input.asset, FEE_RECEIVER_REF), amountAtomic: fee },
      { account: accountId('FEE_REVENUE', input.asset, input.route), amountAtomic: -fee },
    ],
    ...context(input),
  });
}

export interface FundingInput extends GroupContext {
  readonly asset: string;
  readonly amountAtomic: bigint;
  readonly policyId: string;
  readonly intentRef: string;
}

/** FUNDING: the user funds a purchase; the service now owes it. Dr TREASURY / Cr USER_OBLIGATION. */
export function postFunding(db: LedgerDb, input: FundingInput): Promise<string> {
  const amount = positive('amountAtomic', input.amountAtomic);
  return postGroup(db, {
    kind: 'FUNDING',
    asset: input.asset,
    entries: [
      { account: accountId('TREASURY', input.asset, FLOAT_REF), amountAtomic: amount },
      { account: accountId('USER_OBLIGATION', input.asset, input.policyId), amountAtomic: -amount },
    ],
    ...context(input),
  });
}

export interface SettlementInput extends GroupContext {
  /** The settlement-rail asset the provider was paid in. */
  readonly asset: string;
  readonly amountAtomic: bigint;
  readonly provider: string;
  readonly intentRef: string;
}

/** SETTLEMENT: the provider is paid from the float. Dr PROVIDER_SETTLEMENT / Cr TREASURY. */
export function postSettlement(db: LedgerDb, input: SettlementInput): Promise<string> {
  const amount = positive('amountAtomic', input.amountAtomic);
  return postGroup(db, {
    kind: 'SETTLEMENT',
    asset: input.asset,
    entries: [
      {
        account: accountId('PROVIDER_SETTLEMENT', input.asset, input.provider),
        amountAtomic: amount,
      },
      { account: accountId('TREASURY', input.asset, FLOAT_REF), amountAtomic: -amount },
    ],
    ...context(input),
  });
}

export interface SameRailRecognitionInput extends GroupContext {
  readonly asset: string;
  readonly providerCostAtomic: bigint;
  readonly feeAtomic: bigint;
  readonly spreadAtomic: bigint;
  readonly provider: string;
  readonly policyId: string;
  readonly intentRef: string;
}

/**
 * RECOGNITION on one rail (provider paid in the funding asset): the obligation is discharged.
 * Dr USER_OBLIGATION (cost + fee + spread) / Cr PROVIDER_SETTLEMENT cost / Cr FEE_REVENUE fee /
 * Cr SPREAD_REVENUE spread. Zero fee or spread lines are left out (an entry is never 0).
 */
export function postSameRailRecognition(
  db: LedgerDb,
  input: SameRailRecognitionInput,
): Promise<string> {
  const cost = positive('providerCostAtomic', input.providerCostAtomic);
  const fee = nonNegative('feeAtomic', input.feeAtomic);
  const spread = nonNegative('spreadAtomic', input.spreadAtomic);
  const { chain } = parseAssetId(input.asset);
  const entries: LedgerEntryInput[] = [
    {
      account: accountId('USER_OBLIGATION', input.asset, input.policyId),
      amountAtomic: cost + fee + spread,
    },
    { account: accountId('PROVIDER_SETTLEMENT', input.asset, input.provider), amountAtomic: -cost },
  ];
  if (fee > 0n)
    entries.push({
      account: accountId('FEE_REVENUE', input.asset, PURCHASE_FEE_REF),
      amountAtomic: -fee,
    });
  if (spread > 0n)
    entries.push({
      account: accountId('SPREAD_REVENUE', input.asset, railRef(chain)),
      amountAtomic: -spread,
    });
  return postGroup(db, { kind: 'RECOGNITION', asset: input.asset, entries, ...context(input) });
}

export interface CrossRailRecognitionInput extends GroupContext {
  /** What the user funded, on the funding rail (e.g. 50250 USDT0 on eip155:196). */
  readonly funding: { readonly asset: string; readonly amountAtomic: bigint };
  /** What the provider was paid, on the settlement rail (e.g. 50000 USDC on eip155:8453). */
  readonly settlement: { readonly asset: string; readonly amountAtomic: bigint };
  readonly feeAtomic: bigint;
  readonly spreadAtomic: bigint;
  readonly provider: string;
  readonly policyId: string;
  readonly intentRef: string;
}

/**
 * RECOGNITION across rails: two groups, one per asset, each through CROSS_RAIL_CLEARING; no
 * exchange rate links them. Funding rail: Dr USER_OBLIGATION funding / Cr FEE_REVENUE fee /
 * Cr SPREAD_REVENUE spread / Cr CROSS_RAIL_CLEARING remainder (parked until an operator sweep).
 * Settlement rail: Dr CROSS_RAIL_CLEARING / Cr PROVIDER_SETTLEMENT, the amount paid. Keys get
 * `:funding` and `:settlement` appended.
 */
export function postCrossRailRecognition(
  db: LedgerDb,
  input: CrossRailRecognitionInput,
): Promise<PostedPair> {
  const funded = positive('funding.amountAtomic', input.funding.amountAtomic);
  const paid = positive('settlement.amountAtomic', input.settlement.amountAtomic);
  const fee = nonNegative('feeAtomic', input.feeAtomic);
  const spread = nonNegative('spreadAtomic', input.spreadAtomic);
  const remainder = funded - fee - spread;
  if (remainder <= 0n)
    throw new AppError(
      'LEDGER_GROUP_INVALID',
      'fee and spread leave nothing of the funding to clear',
    );
  const fundingChain = parseAssetId(input.funding.asset).chain;
  const settlementChain = parseAssetId(input.settlement.asset).chain;
  if (input.funding.asset === input.settlement.asset) {
    throw new AppError(
      'LEDGER_GROUP_INVALID',
      'a cross-rail recognition joins two different assets',
    );
  }
  const fundingEntries: LedgerEntryInput[] = [
    {
      account: accountId('USER_OBLIGATION', input.funding.asset, input.policyId),
      amountAtomic: funded,
    },
    {
      account: accountId('CROSS_RAIL_CLEARING', input.funding.asset, railRef(settlementChain)),
      amountAtomic: -remainder,
    },
  ];
  if (fee > 0n)
    fundingEntries.push({
      account: accountId('FEE_REVENUE', input.funding.asset, PURCHASE_FEE_REF),
      amountAtomic: -fee,
    });
  if (spread > 0n) {
    fundingEntries.push({
      account: accountId('SPREAD_REVENUE', input.funding.asset, railRef(settlementChain)),
      amountAtomic: -spread,
    });
  }
  const shared = { intentRef: input.intentRef, policyId: input.policyId, memo: input.memo };
  return postPair(
    db,
    {
      kind: 'RECOGNITION',
      asset: input.funding.asset,
      entries: fundingEntries,
      idempotencyKey: `${input.idempotencyKey}:funding`,
      ...shared,
    },
    {
      kind: 'RECOGNITION',
      asset: input.settlement.asset,
      entries: [
        {
          account: accountId('CROSS_RAIL_CLEARING', input.settlement.asset, railRef(fundingChain)),
          amountAtomic: paid,
        },
        {
          account: accountId('PROVIDER_SETTLEMENT', input.settlement.asset, input.provider),
          amountAtomic: -paid,
        },
      ],
      idempotencyKey: `${input.idempotencyKey}:settlement`,
      ...shared,
    },
  );
}

export interface ProviderCostInput extends GroupContext {
  readonly asset: string;
  readonly amountAtomic: bigint;
  readonly provider: string;
  readonly intentRef: string;
}

/**
 * RECOGNITION of a provider payment the service bears (paid, then the purchase failed and the
 * user was refunded). Dr COST_OF_GOODS / Cr PROVIDER_SETTLEMENT.
 */
export function postProviderCost(db: LedgerDb, input: ProviderCostInput): Promise<string> {
  const amount = positive('amountAtomic', input.amountAtomic);
  return postGroup(db, {
    kind: 'RECOGNITION',
    asset: input.asset,
    entries: [
      { account: accountId('COST_OF_GOODS', input.asset, input.provider), amountAtomic: amount },
      {
        account: accountId('PROVIDER_SETTLEMENT', input.asset, input.provider),
        amountAtomic: -amount,
      },
    ],
    ...context(input),
  });
}

export interface RefundInput extends GroupContext {
  /** OWED: the refund is decided (Dr USER_OBLIGATION / Cr REFUND_PAYABLE). PAID: it left the float (Dr REFUND_PAYABLE / Cr TREASURY). */
  readonly stage: 'OWED' | 'PAID';
  readonly asset: string;
  readonly amountAtomic: bigint;
  readonly policyId: string;
  readonly intentRef: string;
}

/** REFUND, in two steps so a refund that is owed but not yet sent stays visible. */
export function postRefund(db: LedgerDb, input: RefundInput): Promise<string> {
  const amount = positive('amountAtomic', input.amountAtomic);
  const payable = accountId('REFUND_PAYABLE', input.asset, input.policyId);
  const [debit, credit] =
    input.stage === 'OWED'
      ? [accountId('USER_OBLIGATION', input.asset, input.policyId), payable]
      : [payable, accountId('TREASURY', input.asset, FLOAT_REF)];
  return postGroup(db, {
    kind: 'REFUND',
    asset: input.asset,
    entries: [
      { account: debit, amountAtomic: amount },
      { account: credit, amountAtomic: -amount },
    ],
    ...context(input),
  });
}

export interface SuspenseMoveInput extends GroupContext {
  /** PARK: Dr SUSPENSE / Cr counterAccount. CLEAR: Dr counterAccount / Cr SUSPENSE. */
  readonly direction: 'PARK' | 'CLEAR';
  readonly asset: string;
  readonly amountAtomic: bigint;
  /**
   * PARK from where the money may have gone (usually the settlement TREASURY after an ambiguous
   * paid request); CLEAR to what the chain showed (PROVIDER_SETTLEMENT if paid, TREASURY if not).
   */
  readonly counterAccount: string;
  readonly intentRef: string;
}

/** SUSPENSE_MOVE: park an ambiguous amount per intent, and clear it once a human has decided. */
export function postSuspenseMove(db: LedgerDb, input: SuspenseMoveInput): Promise<string> {
  const amount = positive('amountAtomic', input.amountAtomic);
  const suspense = accountId('SUSPENSE', input.asset, input.intentRef);
  const sign = input.direction === 'PARK' ? 1n : -1n;
  return postGroup(db, {
    kind: 'SUSPENSE_MOVE',
    asset: input.asset,
    entries: [
      { account: suspense, amountAtomic: sign * amount },
      { account: input.counterAccount, amountAtomic: -sign * amount },
    ],
    ...context(input),
  });
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
  db: LedgerDb,
  input: TreasuryTransferInput,
): Promise<TreasuryTransferGroups> {
  const row = await run<{ source_group_id: string; destination_group_id: string }>(db, {
    name: 'ledger_post_treasury_transfer',
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

/** The balance of one account (+ debit, - credit), from its entries. */
export async function accountBalance(db: LedgerDb, account: string): Promise<bigint> {
  const row = await run<{ balance: string }>(db, {
    name: 'ledger_balance_of',
    text: 'SELECT ledger.balance_of($1)::text AS balance',
    values: [account],
  });
  return BigInt(row.balance);
}
