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

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const lower = (value: string) => value.toLowerCase();

/** The ledger groups the legs of these intents name. */
export function legGroupIds(rows: readonly ConsumerIntentRow[]): string[] {
  return rows.flatMap((row) => [
    ...[text(row.funding?.groupId), text(row.settlement?.groupId)].filter(
      (id): id is string => id !== null,
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
  const payer = text(row.funding?.payer);
  const groupId = text(row.funding?.groupId);
  if (row.funding === null || payer === null) return [];
  return [
    {
      rail: 'funding',
      kind: 'FUNDING',
      intentId: row.intentId,
      txHash: text(row.funding.txHash),
      from: lower(payer),
      to: lower(text(row.funding.payTo) ?? rails.funding.treasury),
      amountAtomic: groupId === null ? 0n : (amounts.get(groupId) ?? 0n),
    },
  ];
}

function settlementLeg(
  row: ConsumerIntentRow,
  rails: ConsumerRails,
  amounts: Map<string, bigint>,
): BookedLeg[] {
  const groupId = text(row.settlement?.groupId);
  const merchant = row.quote?.merchant as Record<string, unknown> | undefined;
  const payTo = text(merchant?.payTo);
  if (groupId === null || payTo === null) return [];
  return [
    {
      rail: 'settlement',
      kind: 'SETTLEMENT',
      intentId: row.intentId,
      txHash: text(row.settlement?.txHash),
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

const atomic = (value: unknown): bigint =>
  typeof value === 'string' && /^[0-9]{1,78}$/.test(value) ? BigInt(value) : 0n;

/** What the spend sections need of one intent. */
export function factsOf(row: ConsumerIntentRow): IntentFacts {
  const funded =
    row.funding === null ? null : atomic(row.funding.amount ?? row.fundingAmount?.toString());
  const refunded = text(row.refund?.refundedAt) === null ? null : atomic(row.refund!.amount);
  const verified = row.serviceVerified?.verified;
  return {
    intentId: row.intentId,
    state: row.state,
    stateReason: row.stateReason,
    category: row.category,
    provider: row.provider,
    agentId: agentOf(row),
    fundedAtomic: funded,
    feeAtomic: atomic(row.quote?.fee),
    spreadAtomic: atomic(row.quote?.spread),
    refundedAtomic: refunded,
    deliveryVerified: typeof verified === 'boolean' ? verified : null,
  };
}
