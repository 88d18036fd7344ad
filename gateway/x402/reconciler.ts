// Resolves payments whose outcome the paywall could not see: parked ones (sent, no receipt in
// time) and claims a crashed replica left behind. It asks only the chain: the receipt of the
// recorded transaction, else whether the authorization was used and by which transaction. A
// confirmed Transfer clears SUSPENSE into TREASURY; an authorization that expired unused (chain
// time past validBefore) can never move money, so its parked fee is reversed. Anything else stays
// pending. Runs on a timer in the gateway and on demand when a client re-presents the payment.
import type { Pool } from 'pg';
import type { Address, Hex } from 'viem';
import type { Logger } from '../../platform/log';
import {
  type ServicePayment,
  getPayment,
  listUnresolved,
  recordConfirmed,
  recordFailed,
  recordSettled,
  releaseLease,
} from '../../subgraphs/ledger/servicePayments';
import type { ObservedTransfer, SettlementRail } from './rail';

export interface ReconcilerOptions {
  readonly rail: SettlementRail;
  readonly db: Pool;
  readonly log: Logger;
}

export interface Resolution {
  /** The record after resolving (null: it vanished, i.e. a released claim). */
  readonly payment: ServicePayment | null;
  /** True when the caller now holds the lease to run the paid call. */
  readonly ownsLease: boolean;
}

export interface SweepReport {
  readonly examined: number;
  readonly confirmed: number;
  readonly failed: number;
  readonly pending: number;
}

/** The Transfer that pays exactly this payment: payer → payTo, the price, on the token. */
export function matchingTransfer(transfers: readonly ObservedTransfer[], payment: ServicePayment): boolean {
  return transfers.some(
    (transfer) => transfer.from === payment.payer && transfer.to === payment.payTo && transfer.value === payment.amountAtomic,
  );
}

const EXPIRED_UNUSED = 'invalid_exact_evm_payload_authorization_valid_before';
const REVERTED = 'invalid_exact_evm_transaction_failed';

export class Reconciler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(private readonly options: ReconcilerOptions) {}

  /**
   * Resolves one PENDING payment or lapsed SETTLING claim from chain truth. `leaseMs`: the caller
   * (a re-presentation) wants to run the call once it is settled.
   */
  async resolve(payment: ServicePayment, options: { leaseMs?: number } = {}): Promise<Resolution> {
    const { rail, db } = this.options;
    const leaseMs = options.leaseMs ?? null;
    const confirmedBy = await this.confirmingTransaction(payment);
    if (confirmedBy) {
      if (payment.state === 'PENDING') {
        const updated = await recordConfirmed(db, payment, confirmedBy, leaseMs);
        if (updated) return { payment: updated, ownsLease: leaseMs !== null };
      } else if (payment.state === 'SETTLING') {
        const updated = await recordSettled(db, payment, confirmedBy).catch(() => null);
        if (updated) {
          if (leaseMs !== null) return { payment: updated, ownsLease: true };
          await releaseLease(db, updated.paymentId);
          return { payment: await getPayment(db, updated.paymentId), ownsLease: false };
        }
      }
      return { payment: await getPayment(db, payment.paymentId), ownsLease: false };
    }
    const used = await rail.authorizationUsed(payment.payer as Address, payment.nonce as Hex);
    if (used) {
      // Used, but not by a transfer that pays us this: a human must look (it cannot happen with
      // EIP-3009, whose signature binds the recipient and the value).
      this.options.log.error({ paymentId: payment.paymentId }, 'x402 authorization used without a matching Transfer; left pending');
      return { payment, ownsLease: false };
    }
    const chainTime = await rail.chainTimeS();
    let reason: string | null = null;
    if (chainTime >= payment.validBefore) reason = EXPIRED_UNUSED;
    else if (payment.txHash && (await rail.receipt(payment.txHash as Hex)).status === 'reverted') reason = REVERTED;
    if (reason === null) return { payment, ownsLease: false };
    const failed = await recordFailed(db, payment, reason, null);
    return { payment: failed ?? (await getPayment(db, payment.paymentId)), ownsLease: false };
  }

  /** The transaction whose receipt shows this payment's Transfer, if the chain has one. */
  private async confirmingTransaction(payment: ServicePayment): Promise<Hex | null> {
    const { rail } = this.options;
    if (payment.txHash) {
      const outcome = await rail.receipt(payment.txHash as Hex);
      if (outcome.status === 'success' && matchingTransfer(outcome.transfers, payment)) return payment.txHash as Hex;
    }
    const found = await rail.findAuthorizationTransaction(payment.payer as Address, payment.nonce as Hex);
    if (!found || found === payment.txHash) return null;
    const outcome = await rail.receipt(found);
    return outcome.status === 'success' && matchingTransfer(outcome.transfers, payment) ? found : null;
  }

  /** One pass over unresolved payments. Safe to run on several replicas at once. */
  async sweep(limit = 100): Promise<SweepReport> {
    const unresolved = await listUnresolved(this.options.db, limit);
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
        this.options.log.warn({ err: error, paymentId: payment.paymentId }, 'x402 reconciliation failed; will retry');
      }
    }
    return { examined: unresolved.length, confirmed, failed, pending };
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
