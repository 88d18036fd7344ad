// The paywall in front of every priced route. The request has been validated already (a malformed
// request is a 400 and never a charge). Then: no payment → 402 challenge; a payment → checks →
// claim the authorization (payer + nonce) in the database → verify → settle on chain → book the
// fee from the chain's Transfer event → run the call → record its answer → 200 with
// PAYMENT-RESPONSE. Every later presentation of the same authorization gets that recorded answer
// and never a second settlement. A settlement the chain has not confirmed in time, or one that
// reverted while the signed authorization can still be used, is parked in SUSPENSE and answered
// 503 PAYMENT_SETTLEMENT_PENDING; the call runs once the chain shows the Transfer, and the payment
// is refused only once the chain proves it can never arrive.
import { setTimeout as sleep } from 'node:timers/promises';
import { encodePaymentResponseHeader } from '@x402/core/http';
import type {
  PaymentPayload,
  PaymentRequirements,
  ResourceInfo,
  SettleResponse,
} from '@x402/core/types';
import type { Address, Hex } from 'viem';
import type { Pool } from 'pg';
import { AppError } from '../../core/errors';
import type { Logger } from '../../platform/log';
import {
  type PaymentClaim,
  type ServicePayment,
  claimPayment,
  getPayment,
  recordAnswer,
  recordPending,
  recordSettled,
  releaseClaim,
  releaseLease,
  takeLapsedLease,
} from '../../subgraphs/ledger';
import type { RestResult } from '../rest/types';
import {
  type Authorization,
  type PaymentTerms,
  PAYMENT_RESPONSE_HEADER,
  challenge,
  checkPayment,
  paymentRequired,
  requirementsFor,
} from './protocol';
import type { SettlementRail } from './rail';
import { type Reconciler, matchingTransfer } from './reconciler';

export interface PaywallOptions {
  readonly terms: PaymentTerms;
  readonly rail: SettlementRail;
  readonly db: Pool;
  readonly reconciler: Reconciler;
  readonly log: Logger;
  /** How long a replica may hold a payment while settling or running it before another may take over. */
  readonly leaseMs: number;
  /** How often a duplicate presentation looks at the record while another replica works on it. */
  readonly followPollMs?: number;
  readonly now?: () => Date;
}

/** One paid request as the router hands it over. */
export interface PaidRequest {
  /** `METHOD /path` as the route table writes it. */
  readonly route: string;
  readonly resource: ResourceInfo;
  readonly amountAtomic: bigint;
  readonly requestDigest: string;
  /** PAYMENT-SIGNATURE (or X-PAYMENT); null when absent. */
  readonly paymentHeader: string | null;
}

/** Runs the paid call; answers (2xx and 4xx) are recorded, a thrown error is not. */
export type RunPaidCall = () => Promise<RestResult>;

const DEFAULT_FOLLOW_POLL_MS = 25;
const SETTLEMENT_PENDING = 'settlement_pending';
const NONCE_USED = 'invalid_exact_evm_nonce_already_used';
const SIMULATION_FAILED = 'invalid_exact_evm_transaction_simulation_failed';

export class Paywall {
  private readonly followPollMs: number;
  private readonly now: () => Date;

  constructor(private readonly options: PaywallOptions) {
    this.followPollMs = options.followPollMs ?? DEFAULT_FOLLOW_POLL_MS;
    this.now = options.now ?? (() => new Date());
  }

  async serve(request: PaidRequest, run: RunPaidCall): Promise<RestResult> {
    const offered = requirementsFor(this.options.terms, request.amountAtomic);
    const refuse = (reason: string) =>
      challenge(paymentRequired(request.resource, offered, reason));
    if (request.paymentHeader === null) return refuse('Payment required');

    const nowS = BigInt(Math.floor(this.now().getTime() / 1000));
    const check = checkPayment(request.paymentHeader, offered, nowS);
    if (!check.ok) return refuse(check.reason);
    const { payload, authorization } = check;
    const claim: PaymentClaim = {
      network: offered.network,
      asset: offered.asset.toLowerCase(),
      payer: authorization.from.toLowerCase(),
      nonce: authorization.nonce,
      payTo: offered.payTo.toLowerCase(),
      amountAtomic: request.amountAtomic,
      validBefore: authorization.validBefore,
      route: request.route,
      requestDigest: request.requestDigest,
    };
    const attempt = { request, offered, payload, authorization, refuse, run };

    const deadline = Date.now() + this.options.leaseMs;
    for (;;) {
      const outcome = await claimPayment(this.options.db, claim, this.options.leaseMs);
      if (outcome.claimed) return this.settleAndRun(outcome.payment, attempt);
      const result = await this.follow(outcome.payment, attempt, deadline);
      if (result !== 'RECLAIM') return result;
    }
  }

  /** Another presentation owns (or owned) this authorization: replay, resume or wait. */
  private async follow(
    first: ServicePayment,
    attempt: Attempt,
    deadline: number,
  ): Promise<RestResult | 'RECLAIM'> {
    let payment: ServicePayment | null = first;
    for (;;) {
      if (payment === null) return 'RECLAIM';
      if (
        payment.requestDigest !== attempt.request.requestDigest ||
        payment.route !== attempt.request.route
      ) {
        // The authorization already paid for a different request; it cannot pay for this one.
        return attempt.refuse(NONCE_USED);
      }
      switch (payment.state) {
        case 'ANSWERED':
          return this.replay(payment);
        case 'FAILED':
          return attempt.refuse(payment.failureReason ?? 'invalid_transaction_state');
        case 'PENDING': {
          const result = await this.resolveParked(payment, attempt);
          if (result) return result;
          break;
        }
        case 'SETTLED': {
          const taken = await takeLapsedLease(
            this.options.db,
            payment.paymentId,
            'SETTLED',
            this.options.leaseMs,
          );
          if (taken) return this.runAndRecord(taken, attempt);
          break;
        }
        case 'SETTLING': {
          const taken = await takeLapsedLease(
            this.options.db,
            payment.paymentId,
            'SETTLING',
            this.options.leaseMs,
          );
          if (taken) return this.settleAndRun(taken, attempt);
          break;
        }
      }
      if (Date.now() >= deadline) throw this.pending(payment);
      await sleep(this.followPollMs);
      payment = await getPayment(this.options.db, payment.paymentId);
    }
  }

  /**
   * Asks the chain about a parked payment: runs the call once it is paid, refuses it once it can
   * never be, answers 503 while it is open; null when another presentation took the paid call.
   */
  private async resolveParked(
    payment: ServicePayment,
    attempt: Attempt,
  ): Promise<RestResult | null> {
    const { payment: resolved, ownsLease } = await this.options.reconciler.resolve(payment, {
      leaseMs: this.options.leaseMs,
    });
    if (resolved && ownsLease) return this.runAndRecord(resolved, attempt);
    if (resolved?.state === 'FAILED')
      return attempt.refuse(resolved.failureReason ?? 'invalid_transaction_state');
    if (resolved?.state === 'PENDING') throw this.pending(resolved);
    return null;
  }

  /** This presentation holds the claim: verify, settle, book, run. */
  private async settleAndRun(payment: ServicePayment, attempt: Attempt): Promise<RestResult> {
    const { rail, db } = this.options;
    const { payload, offered, authorization } = attempt;
    let settlement: SettleResponse;
    try {
      // Settlement verifies first (signature, window, simulation) and sends nothing if that fails.
      settlement = await rail.settle(payload, offered);
    } catch (error) {
      // Whether the transaction left is unknown: park it; the reconciler asks the chain.
      this.options.log.error(
        { err: error, paymentId: payment.paymentId },
        'x402 settlement threw; parking the fee in SUSPENSE',
      );
      throw this.pending(await recordPending(db, payment, { txHash: null }));
    }

    if (settlement.success) {
      const txHash = settlement.transaction as Hex;
      const outcome = await rail.receipt(txHash);
      if (outcome.status === 'success' && matchingTransfer(outcome.transfers, payment)) {
        return this.runAndRecord(await recordSettled(db, payment, txHash), attempt);
      }
      this.options.log.error(
        { paymentId: payment.paymentId, txHash, outcome: outcome.status },
        'x402 settlement reported success without a matching Transfer',
      );
      throw this.pending(await recordPending(db, payment, { txHash }));
    }
    const reason = settlement.errorReason ?? 'unexpected_settle_error';
    if (reason === SETTLEMENT_PENDING) {
      throw this.pending(
        await recordPending(db, payment, {
          txHash: settlement.transaction ? settlement.transaction : null,
        }),
      );
    }
    if (settlement.transaction) {
      // Mined and reverted (or without our Transfer): that transaction moved nothing to us, but the
      // signed authorization may still move money until validBefore (anyone holding it may submit
      // it). Park the fee and let the chain decide, now and on every later look.
      const revert = { paymentId: payment.paymentId, txHash: settlement.transaction, reason };
      this.options.log.warn(
        revert,
        'x402 settlement reverted; parked until the chain decides the authorization',
      );
      const parked = await recordPending(db, payment, {
        txHash: null,
        unpaidTxHash: settlement.transaction,
      });
      const result = await this.follow(parked, attempt, Date.now() + this.options.leaseMs);
      // A parked record is never deleted, so there is no claim to take again.
      if (result === 'RECLAIM') throw this.pending(parked);
      return result;
    }
    // Refused before anything was sent.
    const refusal = await this.diagnose(reason, authorization);
    if (refusal === NONCE_USED) {
      // Used on chain already: if that use paid us exactly this (an earlier attempt of ours that
      // crashed before recording, or the payer submitting it), it pays for this call.
      const booked = await this.bookEarlierUse(payment, authorization);
      if (booked) return this.runAndRecord(booked, attempt);
    }
    await releaseClaim(db, payment.paymentId);
    return attempt.refuse(refusal);
  }

  private async bookEarlierUse(
    payment: ServicePayment,
    authorization: Authorization,
  ): Promise<ServicePayment | null> {
    const { rail, db } = this.options;
    const atBlock = await rail.latestBlockNumber();
    const txHash = await rail.findAuthorizationTransaction(
      authorization.from,
      authorization.nonce,
      atBlock,
    );
    if (!txHash) return null;
    const outcome = await rail.receipt(txHash, atBlock);
    if (outcome.status !== 'success' || !matchingTransfer(outcome.transfers, payment)) return null;
    return recordSettled(db, payment, txHash);
  }

  /** The reference facilitator reports a bare simulation failure on chains without Multicall3; say why. */
  private async diagnose(reason: string, authorization: Authorization): Promise<string> {
    if (reason !== SIMULATION_FAILED && reason !== 'invalid_exact_evm_transaction_failed')
      return reason;
    const { rail } = this.options;
    try {
      const atBlock = await rail.latestBlockNumber();
      if (await rail.authorizationUsed(authorization.from, authorization.nonce, atBlock))
        return NONCE_USED;
      if ((await rail.balanceOf(authorization.from as Address, atBlock)) < authorization.value)
        return 'invalid_exact_evm_insufficient_balance';
    } catch (error) {
      this.options.log.warn({ err: error }, 'x402 diagnosis read failed');
    }
    return reason;
  }

  private async runAndRecord(payment: ServicePayment, attempt: Attempt): Promise<RestResult> {
    let result: RestResult;
    try {
      result = await attempt.run();
    } catch (error) {
      // A server error is not an answer: the next presentation of this payment runs the call again.
      await releaseLease(this.options.db, payment.paymentId).catch(() => undefined);
      throw error;
    }
    const answered = await recordAnswer(
      this.options.db,
      payment.paymentId,
      result.status,
      result.body,
    );
    return this.withReceipt({ ...result }, answered ?? payment);
  }

  private replay(payment: ServicePayment): RestResult {
    return this.withReceipt(
      { status: payment.answerStatus ?? 200, body: payment.answerBody },
      payment,
    );
  }

  private withReceipt(result: RestResult, payment: ServicePayment): RestResult {
    const receipt: SettleResponse = {
      success: true,
      transaction: payment.txHash ?? '',
      network: payment.network as SettleResponse['network'],
      payer: payment.payer,
    };
    return {
      ...result,
      headers: {
        ...(result.headers ?? {}),
        [PAYMENT_RESPONSE_HEADER]: encodePaymentResponseHeader(receipt),
        'access-control-expose-headers': 'PAYMENT-RESPONSE',
        'cache-control': 'private, no-store',
      },
    };
  }

  /** 503: the chain has not decided. `validBefore` bounds the wait: after it an unused authorization is refused. */
  private pending(payment: ServicePayment): AppError {
    const reverted = payment.txHash === null && payment.unpaidTxHash !== null;
    const message = reverted
      ? 'The settlement transaction reverted, but the signed authorization can still be used on chain until validBefore. ' +
        'Present the same payment header again: the call runs if it is paid, it is refused once it can no longer be, ' +
        'and it is never charged twice. Do not sign a new one for this call.'
      : 'The payment was sent on chain and is not confirmed yet. Present the same payment header again; it will not be charged twice.';
    return new AppError('PAYMENT_SETTLEMENT_PENDING', message, {
      paymentId: payment.paymentId,
      transaction: payment.txHash,
      ...(reverted ? { revertedTransaction: payment.unpaidTxHash } : {}),
      validBefore: payment.validBefore.toString(),
      network: payment.network,
      retryAfterSeconds: 5,
    });
  }
}

interface Attempt {
  readonly request: PaidRequest;
  readonly offered: PaymentRequirements;
  readonly payload: PaymentPayload;
  readonly authorization: Authorization;
  readonly refuse: (reason: string) => RestResult;
  readonly run: RunPaidCall;
}
