// Where a settled x402 payment is booked, by what it pays for: a priced route's fee in the ledger
// (SERVICE_FEE, subgraphs/ledger), the funding of a consumer intent in the intent subgraph (FUNDING
// consuming the intent's reservation and the intent's move to FUNDED, in one transaction). The
// paywall and the reconciler book through here and decide nothing else by purpose.
import type { Pool } from 'pg';
import { type BusinessCounters, exactIncrement } from '../../platform/metrics';
import { bookFundingPayment } from '../../subgraphs/intent';
import type { Settlement, SettlementRail } from './rail';
import { recordConfirmed, recordSettled, type ServicePayment } from '../../subgraphs/ledger';

/**
 * A claimed (SETTLING) payment whose Transfer the chain shows in `txHash`; the caller keeps its
 * lease. Counted on `counters` once booked.
 */
export async function bookSettled(
  db: Pool,
  payment: ServicePayment,
  txHash: string,
  counters?: BusinessCounters,
): Promise<ServicePayment> {
  const booked =
    payment.purpose !== 'FUNDING'
      ? await recordSettled(db, payment, txHash)
      : await bookFundingPayment(db, payment, txHash, { leaseMs: null });
  if (!booked)
    throw new Error(`service payment ${payment.paymentId} left SETTLING while being settled`);
  countBooked(counters, booked);
  return booked;
}

/**
 * A parked (PENDING) payment the chain has confirmed; null when it moved on. `leaseMs`: the
 * caller runs the call now; null: only book it.
 */
export function bookConfirmed(
  db: Pool,
  payment: ServicePayment,
  txHash: string,
  leaseMs: number | null,
): Promise<ServicePayment | null> {
  if (payment.purpose !== 'FUNDING') return recordConfirmed(db, payment, txHash, leaseMs);
  return bookFundingPayment(db, payment, txHash, { leaseMs });
}

/** Counts a payment just booked (paid call and its amount in atomic units) on the process's counters. */
export function countBooked(
  counters: BusinessCounters | undefined,
  payment: ServicePayment | null,
): void {
  if (!counters || payment === null) return;
  const labels = { route: payment.route, purpose: payment.purpose };
  counters.paidCalls.inc(labels);
  counters.paidAtomic.inc(
    { ...labels, asset: payment.asset.toLowerCase() },
    exactIncrement(payment.amountAtomic),
  );
}

/** rail.settle, its duration observed on the counters by outcome (success, refused, threw). */
export async function timedSettle(
  rail: SettlementRail,
  counters: BusinessCounters | undefined,
  ...args: Parameters<SettlementRail['settle']>
): Promise<Settlement> {
  const end = counters?.settlementSeconds.startTimer();
  try {
    const settlement = await rail.settle(...args);
    end?.({ outcome: settlement.success ? 'success' : 'refused' });
    return settlement;
  } catch (error) {
    end?.({ outcome: 'threw' });
    throw error;
  }
}
