// Resolves payments whose outcome the paywall could not see: parked ones (sent with no receipt in
// time, or reverted while the signed authorization stays usable) and claims a crashed replica left
// behind. It asks only the chain, and reads every fact of one decision at one pinned block: whether
// the authorization is used, by which transaction, and that block's time. A transaction carrying
// this payment's Transfer books it (SUSPENSE clears into TREASURY); FAILED (the parked fee
// reversed) only on proof the authorization can no longer move money: its nonce spent without our
// Transfer, or unused at a block past validBefore. Anything else stays pending. Runs on a timer in
// the gateway and on demand when a client re-presents the payment.
import type { Pool } from 'pg';
import type { Address, Hex } from 'viem';
import type { Logger } from '../../platform/log';
import type { BusinessCounters } from '../../platform/metrics';
import {
  type FailureEvidence,
  type ServicePayment,
  getPayment,
  listUnresolved,
  recordFailed,
  releaseLease,
  takeLapsedLease,
} from '../../subgraphs/ledger';
import {
  type AuthorizationFacts,
  type UseReceipt,
  judgeAuthorization,
} from '../../core/eip3009/authorizationJudgement';
import { bookConfirmed, bookSettled, countBooked } from './books';
import type { ObservedTransfer, SettlementRail } from './rail';

export interface ReconcilerOptions {
  readonly rail: SettlementRail;
  readonly db: Pool;
  readonly log: Logger;
  /** The process's business counters; absent: none kept. */
  readonly counters?: BusinessCounters;
}

export interface Resolution {
  /** The record after resolving (null: it vanished, i.e. a released claim). */
  readonly payment: ServicePayment | null;
  /** True when the caller now holds the lease to run the paid call. */
  readonly ownsLease: boolean;
}

export interface SweepReport {
  readonly examined: number;
  /** The payments this pass looked at, in order. */
  readonly paymentIds: readonly string[];
  readonly confirmed: number;
  readonly failed: number;
  readonly pending: number;
}

/** How long the reconciler holds a lapsed claim while it books it (released right after). */
const BOOKING_LEASE_MS = 30_000;

/** The Transfer that pays exactly this payment: payer → payTo, the price, on the token. */
export function matchingTransfer(
  transfers: readonly ObservedTransfer[],
  payment: ServicePayment,
): boolean {
  return transfers.some(
    (transfer) =>
      transfer.from === payment.payer &&
      transfer.to === payment.payTo &&
      transfer.value === payment.amountAtomic,
  );
}

/** What the chain says about one payment, every fact read at the same block. */
type ChainVerdict =
  | { readonly kind: 'paid'; readonly txHash: Hex }
  | { readonly kind: 'impossible'; readonly evidence: FailureEvidence }
  | { readonly kind: 'open' };

export class Reconciler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  /** Where the next sweep starts (null: from the first open payment). */
  private sweepAfter: string | null = null;

  constructor(private readonly options: ReconcilerOptions) {}

  /**
   * Resolves one PENDING payment or lapsed SETTLING claim from chain truth. `leaseMs`: the caller
   * (a re-presentation) wants to run the call once it is settled.
   */
  async resolve(payment: ServicePayment, options: { leaseMs?: number } = {}): Promise<Resolution> {
    const leaseMs = options.leaseMs ?? null;
    const verdict = await this.judge(payment);
    if (verdict.kind === 'paid') return this.book(payment, verdict.txHash, leaseMs);
    if (verdict.kind === 'impossible') {
      const failed = await recordFailed(this.options.db, payment, verdict.evidence);
      return {
        payment: failed ?? (await getPayment(this.options.db, payment.paymentId)),
        ownsLease: false,
      };
    }
    return { payment, ownsLease: false };
  }

  /** Reads the chain at one block and decides: paid by a transaction, provably never, or still open. */
  private async judge(payment: ServicePayment): Promise<ChainVerdict> {
    const { rail } = this.options;
    const atBlock = await rail.latestBlockNumber();
    const facts = await this.readFacts(payment, atBlock);
    const judgement = judgeAuthorization(facts);
    if (judgement.status === 'PAID') return { kind: 'paid', txHash: judgement.txHash as Hex };
    if (judgement.status === 'NOT_PAID' && !facts.used) {
      // Unused at a block at or past validBefore: EIP-3009 refuses it from then on, for good.
      const { chainTimeS } = facts;
      const reason = 'invalid_exact_evm_payload_authorization_valid_before';
      return { kind: 'impossible', evidence: { reason, blockNumber: atBlock, chainTimeS } };
    }
    if (judgement.status === 'NOT_PAID' && judgement.because === 'USED_BY_OTHER_TRANSACTION') {
      // The nonce is spent by a transaction without our Transfer (another transfer, a cancellation).
      const usedByTxHash = judgement.usedByTxHash as Hex;
      const reason = 'invalid_exact_evm_nonce_already_used';
      return { kind: 'impossible', evidence: { reason, blockNumber: atBlock, usedByTxHash } };
    }
    if (facts.used) {
      const usedBy = facts.use?.foundByEvent ? facts.use.txHash : null;
      this.options.log.error(
        { paymentId: payment.paymentId, atBlock: atBlock.toString(), usedBy },
        'x402 authorization used, but its transaction cannot be read; left pending',
      );
    }
    return { kind: 'open' };
  }

  /**
   * The facts of one payment's authorization at `atBlock`: used or not; if unused, the block's
   * time; if used, the transaction its event names (beyond the log lookback, our recorded
   * settlement may be it) and whether its receipt carries this payment's Transfer.
   */
  private async readFacts(payment: ServicePayment, atBlock: bigint): Promise<AuthorizationFacts> {
    const { rail } = this.options;
    const payer = payment.payer as Address;
    const nonce = payment.nonce as Hex;
    if (!(await rail.authorizationUsed(payer, nonce, atBlock))) {
      const chainTimeS = await rail.chainTimeS(atBlock);
      return { used: false, validBefore: payment.validBefore, chainTimeS };
    }
    const usedBy = await rail.findAuthorizationTransaction(payer, nonce, atBlock);
    const candidate = usedBy ?? (payment.txHash as Hex | null);
    if (!candidate) return { used: true };
    const outcome = await rail.receipt(candidate, atBlock);
    const receipt: UseReceipt =
      outcome.status !== 'success'
        ? 'UNREADABLE'
        : matchingTransfer(outcome.transfers, payment)
          ? 'PAYS'
          : 'PAYS_SOMETHING_ELSE';
    return { used: true, use: { txHash: candidate, foundByEvent: usedBy !== null, receipt } };
  }

  /** The chain shows this payment's Transfer in `txHash`: book it (once) and say who runs the call. */
  private async book(
    payment: ServicePayment,
    txHash: Hex,
    leaseMs: number | null,
  ): Promise<Resolution> {
    const { db } = this.options;
    if (payment.state === 'PENDING') {
      const updated = await bookConfirmed(db, payment, txHash, leaseMs);
      countBooked(this.options.counters, updated);
      if (updated) return { payment: updated, ownsLease: leaseMs !== null };
    } else if (payment.state === 'SETTLING') {
      // A lapsed claim is booked only under its lease, taken here: a presentation that took it
      // over first books it itself (then this take fails), and neither is raced into an error.
      const hold = leaseMs ?? BOOKING_LEASE_MS;
      const held = await takeLapsedLease(db, payment.paymentId, 'SETTLING', hold);
      const updated = held
        ? await bookSettled(db, held, txHash, this.options.counters).catch(() => null)
        : null;
      if (updated) {
        if (leaseMs !== null) return { payment: updated, ownsLease: true };
        await releaseLease(db, updated.paymentId);
        return { payment: await getPayment(db, updated.paymentId), ownsLease: false };
      }
    }
    return { payment: await getPayment(db, payment.paymentId), ownsLease: false };
  }

  /**
   * One pass over up to `limit` unresolved payments, starting after the last one the previous pass
   * looked at and wrapping round at the end, so payments that stay open cannot starve the rest.
   * Safe to run on several replicas at once.
   */
  async sweep(limit = 100): Promise<SweepReport> {
    const unresolved = await listUnresolved(this.options.db, limit, this.sweepAfter);
    this.sweepAfter =
      unresolved.length < limit ? null : unresolved[unresolved.length - 1]!.paymentId;
    let confirmed = 0;
    let failed = 0;
    let pending = 0;
    for (const payment of unresolved) {
      try {
        const { payment: after } = await this.resolve(payment);
        if (after?.state === 'SETTLED' || after?.state === 'ANSWERED') confirmed += 1;
        else if (after?.state === 'FAILED') failed += 1;
        else pending += 1;
      } catch (error) {
        pending += 1;
        this.options.log.warn(
          { err: error, paymentId: payment.paymentId },
          'x402 reconciliation failed; will retry',
        );
      }
    }
    return {
      examined: unresolved.length,
      paymentIds: unresolved.map((payment) => payment.paymentId),
      confirmed,
      failed,
      pending,
    };
  }

  start(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.sweep()
        .catch((error) => this.options.log.warn({ err: error }, 'x402 reconciliation sweep failed'))
        .finally(() => {
          this.running = null;
        });
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
