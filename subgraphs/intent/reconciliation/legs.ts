// The booked legs of a policy's consumer intents, as the reconciliation compares them with the
// chain: the funding leg (payer → funding treasury), the provider payment (settlement treasury →
// the quote's payTo) and a paid refund (funding treasury → the refund's recipient). Parties and
// transaction come from the intent's record; the amount is what its ledger group moved on TREASURY.
// A leg whose group is missing counts 0, so the comparison shows it as an amount difference.
import type { BookedLeg } from '../../../core/reconciliation/chainCheck';
import type { IntentFacts } from '../../../core/reconciliation/spendReport';
import type { ConsumerRails } from '../../kit';
import type { ConsumerIntentRow } from '../consumer';
import { agentOf } from './reads';

// funding, settlement, quote and serviceVerified are the typed legs (consumer/legs.ts, checked when
// the row was read); refund is still free JSON.
const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const lower = (value: string) => value.toLowerCase();

/** The ledger groups the legs of these intents name. */
export function legGroupIds(rows: readonly ConsumerIntentRow[]): string[] {
  return rows.flatMap((row) => [
    ...[row.funding?.groupId, row.settlement?.groupId].filter(
      (id): id is string => id !== undefined,
    ),
    ...(Array.isArray(row.refund?.groupIds)
      ? (row.refund.groupIds as unknown[]).filter((id): id is string => typeof id === 'string')
      : []),
  ]);
}

function fundingLeg(
  row: ConsumerIntentRow,
  rails: ConsumerRails,
  amounts: Map<string, bigint>,
): BookedLeg[] {
  const payer = row.funding?.payer;
  const groupId = row.funding?.groupId;
  if (row.funding === null || payer === undefined) return [];
  return [
    {
      rail: 'funding',
      kind: 'FUNDING',
      intentId: row.intentId,
      txHash: row.funding.txHash ?? null,
      from: lower(payer),
      to: lower(row.funding.payTo ?? rails.funding.treasury),
      amountAtomic: groupId === undefined ? 0n : (amounts.get(groupId) ?? 0n),
    },
  ];
}

function settlementLeg(
  row: ConsumerIntentRow,
  rails: ConsumerRails,
  amounts: Map<string, bigint>,
): BookedLeg[] {
  const groupId = row.settlement?.groupId;
  const payTo = row.quote?.merchant?.payTo;
  if (groupId === undefined || payTo === undefined) return [];
  return [
    {
      rail: 'settlement',
      kind: 'SETTLEMENT',
      intentId: row.intentId,
      txHash: row.settlement?.txHash ?? null,
      from: lower(rails.settlement.treasury),
      to: lower(payTo),
      amountAtomic: amounts.get(groupId) ?? 0n,
    },
  ];
}

function refundLeg(
  row: ConsumerIntentRow,
  rails: ConsumerRails,
  amounts: Map<string, bigint>,
): BookedLeg[] {
  const to = text(row.refund?.to);
  if (row.refund === null || to === null || text(row.refund.txHash) === null) return [];
  const groupIds = legGroupIds([{ ...row, funding: null, settlement: null }]);
  return [
    {
      rail: 'funding',
      kind: 'REFUND',
      intentId: row.intentId,
      txHash: text(row.refund.txHash),
      from: lower(rails.funding.treasury),
      to: lower(to),
      amountAtomic: groupIds.reduce((sum, id) => sum + (amounts.get(id) ?? 0n), 0n),
    },
  ];
}

export function bookedLegs(
  rows: readonly ConsumerIntentRow[],
  rails: ConsumerRails,
  amounts: Map<string, bigint>,
): BookedLeg[] {
  return rows.flatMap((row) => [
    ...fundingLeg(row, rails, amounts),
    ...settlementLeg(row, rails, amounts),
    ...refundLeg(row, rails, amounts),
  ]);
}

/** The refund's amount (free JSON, so checked here). */
const atomic = (value: unknown): bigint =>
  typeof value === 'string' && /^[0-9]{1,78}$/.test(value) ? BigInt(value) : 0n;

/** What the spend sections need of one intent. */
export function factsOf(row: ConsumerIntentRow): IntentFacts {
  const funded =
    row.funding === null ? null : BigInt(row.funding.amount ?? row.fundingAmount ?? 0n);
  const refunded = text(row.refund?.refundedAt) === null ? null : atomic(row.refund!.amount);
  const verified = row.serviceVerified?.verified ?? null;
  return {
    intentId: row.intentId,
    state: row.state,
    stateReason: row.stateReason,
    category: row.category,
    provider: row.provider,
    agentId: agentOf(row),
    fundedAtomic: funded,
    feeAtomic: BigInt(row.quote?.fee ?? 0),
    spreadAtomic: BigInt(row.quote?.spread ?? 0),
    refundedAtomic: refunded,
    deliveryVerified: verified,
  };
}
