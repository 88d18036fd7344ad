// The cross-check of a policy's booked money legs against the token Transfer events on the
// chains: each booked leg (funding in, refund out on the funding rail; the provider payment on the
// settlement rail) must be one transfer of exactly its amount between its parties in its
// transaction, and every transfer the scan attributes to the policy must be a booked leg. Every
// difference is listed; nothing is corrected. Amounts are bigint atomic units. Pure.

export type Rail = 'funding' | 'settlement';
export type LegKind = 'FUNDING' | 'SETTLEMENT' | 'REFUND';
export type DifferenceKind = 'BOOKED_NOT_ON_CHAIN' | 'AMOUNT_MISMATCH' | 'ON_CHAIN_NOT_BOOKED';

/** A leg as the ledger (amount) and the intent's record (parties, transaction) state it. */
export interface BookedLeg {
  readonly rail: Rail;
  readonly kind: LegKind;
  readonly intentId: string;
  readonly txHash: string | null;
  readonly from: string;
  readonly to: string;
  readonly amountAtomic: bigint;
}

/** One Transfer event of the rail's token, as the chain reports it. */
export interface ChainTransfer {
  readonly rail: Rail;
  readonly txHash: string;
  readonly logIndex: number;
  readonly blockNumber: bigint;
  readonly from: string;
  readonly to: string;
  readonly valueAtomic: bigint;
}

export interface ChainDifference {
  readonly kind: DifferenceKind;
  readonly rail: Rail;
  readonly legKind: LegKind | null;
  readonly intentId: string | null;
  readonly txHash: string | null;
  readonly from: string;
  readonly to: string;
  readonly bookedAtomic: string;
  readonly onchainAtomic: string;
  /** onchain - booked. */
  readonly deltaAtomic: string;
}

export interface RailTotals {
  readonly rail: Rail;
  readonly bookedAtomic: string;
  readonly onchainAtomic: string;
}

export interface ChainCheck {
  readonly matchedLegs: number;
  readonly totals: RailTotals[];
  readonly differences: ChainDifference[];
}

const lower = (value: string) => value.toLowerCase();
const keyOf = (t: ChainTransfer) => `${t.rail}|${lower(t.txHash)}|${t.logIndex}`;

function difference(
  kind: DifferenceKind,
  leg: BookedLeg | null,
  transfer: { rail: Rail; txHash: string | null; from: string; to: string },
  booked: bigint,
  onchain: bigint,
): ChainDifference {
  return {
    kind,
    rail: transfer.rail,
    legKind: leg?.kind ?? null,
    intentId: leg?.intentId ?? null,
    txHash: transfer.txHash === null ? null : lower(transfer.txHash),
    from: lower(transfer.from),
    to: lower(transfer.to),
    bookedAtomic: booked.toString(),
    onchainAtomic: onchain.toString(),
    deltaAtomic: (onchain - booked).toString(),
  };
}

/** The transfers of the leg's transaction between the leg's parties, on its rail. */
function transfersOfLeg(leg: BookedLeg, transfers: readonly ChainTransfer[]): ChainTransfer[] {
  if (leg.txHash === null) return [];
  return transfers.filter(
    (t) =>
      t.rail === leg.rail &&
      lower(t.txHash) === lower(leg.txHash!) &&
      lower(t.from) === lower(leg.from) &&
      lower(t.to) === lower(leg.to),
  );
}

function totalsOf(legs: readonly BookedLeg[], transfers: readonly ChainTransfer[]): RailTotals[] {
  return (['funding', 'settlement'] as const).map((rail) => ({
    rail,
    bookedAtomic: legs
      .filter((leg) => leg.rail === rail)
      .reduce((sum, leg) => sum + leg.amountAtomic, 0n)
      .toString(),
    onchainAtomic: transfers
      .filter((t) => t.rail === rail)
      .reduce((sum, t) => sum + t.valueAtomic, 0n)
      .toString(),
  }));
}

/**
 * Matches booked legs to transfers (same rail, transaction and parties; the values must sum to the
 * booked amount) and lists what does not match. `transfers` holds what the scan attributed to the
 * policy plus the transfers found in the legs' own transactions; duplicates (same log) count once.
 */
export function compareLegsWithChain(
  legs: readonly BookedLeg[],
  transfers: readonly ChainTransfer[],
): ChainCheck {
  const unique = [...new Map(transfers.map((t) => [keyOf(t), t])).values()];
  const used = new Set<string>();
  const differences: ChainDifference[] = [];
  let matchedLegs = 0;
  for (const leg of legs) {
    const found = transfersOfLeg(leg, unique).filter((t) => !used.has(keyOf(t)));
    found.forEach((t) => used.add(keyOf(t)));
    const onchain = found.reduce((sum, t) => sum + t.valueAtomic, 0n);
    if (found.length === 0)
      differences.push(difference('BOOKED_NOT_ON_CHAIN', leg, leg, leg.amountAtomic, 0n));
    else if (onchain !== leg.amountAtomic)
      differences.push(difference('AMOUNT_MISMATCH', leg, leg, leg.amountAtomic, onchain));
    else matchedLegs += 1;
  }
  for (const t of unique) {
    if (!used.has(keyOf(t)))
      differences.push(difference('ON_CHAIN_NOT_BOOKED', null, t, 0n, t.valueAtomic));
  }
  return { matchedLegs, totals: totalsOf(legs, unique), differences };
}
