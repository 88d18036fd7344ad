// Where a settled x402 payment is booked, by what it pays for: a priced route's fee in the ledger
// (SERVICE_FEE, subgraphs/ledger), the funding of a consumer intent in the intent subgraph (FUNDING
// consuming the intent's reservation and the intent's move to FUNDED, in one transaction). The
// paywall and the reconciler book through here and decide nothing else by purpose.
import type { Pool } from 'pg';
import { bookFundingPayment } from '../../subgraphs/intent';
import { recordConfirmed, recordSettled, type ServicePayment } from '../../subgraphs/ledger';

/** A claimed (SETTLING) payment whose Transfer the chain shows in `txHash`; the caller keeps its lease. */
export async function bookSettled(
  db: Pool,
  payment: ServicePayment,
  txHash: string,
): Promise<ServicePayment> {
  if (payment.purpose !== 'FUNDING') return recordSettled(db, payment, txHash);
  const booked = await bookFundingPayment(db, payment, txHash, { leaseMs: null });
  if (!booked)
    throw new Error(`service payment ${payment.paymentId} left SETTLING while being settled`);
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
