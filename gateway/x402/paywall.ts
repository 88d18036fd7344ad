// The paywall in front of every priced route. The request has been validated already (a malformed
// request is a 400 and never a charge). Then: no payment → 402 challenge; a payment → checks →
// claim the authorization (payer + nonce) in the database, the verification's chain reads going
// meanwhile → verify → settle on chain → book the fee from the chain's Transfer event → run the
// call → record its answer → 200 with PAYMENT-RESPONSE. Every later presentation of the same
// authorization gets that recorded answer and never a second settlement. A settlement the chain
// has not confirmed in time, or one that reverted while the signed authorization can still be
// used, is parked in SUSPENSE and answered 503 PAYMENT_SETTLEMENT_PENDING; the call runs once the
// chain shows the Transfer, and the payment is refused only once the chain proves it can never
// arrive. So is a settlement that failed after its transaction was handed to the node with no
// hash back (its answer lost): once settle has sent, a claim is released only for a refusal that
// provably came before anything was broadcast.
//
// A route may price itself per request (its amount, its payTo) and say what the payment pays
// for: the fund route of a consumer intent takes the intent's funding amount to the funding
// treasury, booked as FUNDING by the intent subgraph (books.ts), at most one live payment per
// intent. Such a route may also refuse a new payment (the intent is not fundable): then nothing is
// offered or claimed, but a payment it already took is still replayed (or resolved) as above.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Hex } from 'viem';
import type { Pool } from 'pg';
import { AppError } from '../../core/errors';
import type { Logger } from '../../platform/log';
import type { BusinessCounters } from '../../platform/metrics';
import {
  type PaymentClaim,
  type ServicePayment,
  claimFundingPayment,
  claimPayment,
  findPayment,
  getPayment,
  recordAnswer,
  recordPending,
  releaseClaim,
  releaseLease,
  takeLapsedLease,
} from '../../subgraphs/ledger';
import type { RestResult } from '../rest/types';
import {
  alreadyFunded,
  chainUnreachable,
  settlementPending,
  unlessChainUnreachable,
  withReceipt,
} from './answers';
import { bookSettled, timedSettle } from './books';
import { bookEarlierUse, diagnoseRefusal, NONCE_USED } from './diagnosis';
import type { Attempt, PaidRequest, RunPaidCall } from './paidRequest';
import * as identifiers from './paymentIdentifier';
import {
  type PaymentTerms,
  challenge,
  checkPayment,
  paymentRequired,
  requirementsFor,
} from './protocol';
import type { Settlement, SettlementPrecheck, SettlementRail } from './rail';
import { type Reconciler, matchingTransfer } from './parkedPayments';

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
  /** The process's business counters (paid calls, amounts, settlement latency); absent: none kept. */
  readonly counters?: BusinessCounters;
}

const DEFAULT_FOLLOW_POLL_MS = 25;
const SETTLEMENT_PENDING = 'settlement_pending';

export class Paywall {
  private readonly followPollMs: number;
  private readonly now: () => Date;

  constructor(private readonly options: PaywallOptions) {
    this.followPollMs = options.followPollMs ?? DEFAULT_FOLLOW_POLL_MS;
    this.now = options.now ?? (() => new Date());
  }

  async serve(request: PaidRequest, run: RunPaidCall): Promise<RestResult> {
    if (request.asset && request.asset.toLowerCase() !== this.options.terms.asset.toLowerCase())
      throw new Error(
        `the route is priced in ${request.asset}; x402 settles ${this.options.terms.asset}`,
      );
    const terms = request.payTo
      ? { ...this.options.terms, payTo: request.payTo }
      : this.options.terms;
    const offered = requirementsFor(terms, request.amountAtomic);
    const { refusal } = request;
    const refuse = (reason: string) => {
      // A route that takes no new payment never offers one.
      if (refusal) throw refusal;
      return challenge(
        paymentRequired(request.resource, offered, reason, {
          [identifiers.PAYMENT_IDENTIFIER]: identifiers.declaration(),
        }),
      );
    };
    if (request.paymentHeader === null) return refuse('Payment required');
    // payment-identifier: a payload already answered under its id is replayed before any check.
    const identified = identifiers.identifyPayment(request.paymentHeader);
    const answered =
      identified && (await identifiers.answered(this.options.db, identified, request));
    if (answered) return this.replay(answered);

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
    if (identified) await identifiers.bind(this.options.db, identified);

    const deadline = Date.now() + this.options.leaseMs;
    if (refusal) return this.replayOnly(claim, attempt, refusal, deadline);
    // The verification's chain reads only read: they go now, while PostgreSQL takes the claim, and
    // count only for the presentation whose first claim wins (a later one checks afresh).
    let precheck = this.options.rail.precheck(payload, offered);
    for (;;) {
      const outcome = request.funding
        ? await claimFundingPayment(this.options.db, claim, request.funding, this.options.leaseMs)
        : await claimPayment(this.options.db, claim, this.options.leaseMs);
      if (outcome.claimed) return this.settleAndRun(outcome.payment, attempt, precheck);
      precheck = undefined;
      if (outcome.payment === null) throw alreadyFunded(request.funding, outcome.fundedBy);
      const result = await this.follow(outcome.payment, attempt, deadline);
      if (result !== 'RECLAIM') return result;
    }
  }

  /** The route refuses new payments: only an authorization it already recorded is answered (replayed or resolved). */
  private async replayOnly(
    claim: PaymentClaim,
    attempt: Attempt,
    refusal: AppError,
    deadline: number,
  ): Promise<RestResult> {
    const existing = await findPayment(this.options.db, claim);
    if (!existing) throw refusal;
    const result = await this.follow(existing, attempt, deadline);
    if (result === 'RECLAIM') throw refusal;
    return result;
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
          // Its holder died or gave up (the lease lapsed), maybe after broadcasting it.
          if (taken) return this.settleAndRun(taken, { ...attempt, takenOver: true });
          break;
        }
      }
      if (Date.now() >= deadline) throw settlementPending(payment);
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
    if (resolved?.state === 'PENDING') throw settlementPending(resolved);
    return null;
  }

  /** This presentation holds the claim: verify (or finish its precheck), settle, book, run. */
  private async settleAndRun(
    payment: ServicePayment,
    attempt: Attempt,
    precheck?: SettlementPrecheck,
  ): Promise<RestResult> {
    const { rail, db } = this.options;
    const { payload, offered } = attempt;
    let settlement: Settlement;
    try {
      // Settlement verifies first (signature, window, simulation) and sends nothing if that fails.
      settlement = await timedSettle(rail, this.options.counters, payload, offered, precheck);
    } catch (error) {
      // Whether the transaction left is unknown: park it; the reconciler asks the chain.
      this.options.log.error(
        { err: error, paymentId: payment.paymentId },
        'x402 settlement threw; parking the fee in SUSPENSE',
      );
      throw settlementPending(await recordPending(db, payment, { txHash: null }));
    }

    if (settlement.success) {
      const txHash = settlement.transaction as Hex;
      // Group settlement read this authorization's own use and Transfer in the group's receipt.
      const outcome = settlement.confirmed ? null : await rail.receipt(txHash);
      if (
        !outcome ||
        (outcome.status === 'success' && matchingTransfer(outcome.transfers, payment))
      ) {
        const booked = await bookSettled(db, payment, txHash, this.options.counters);
        return this.runAndRecord(booked, attempt);
      }
      this.options.log.error(
        { paymentId: payment.paymentId, txHash, outcome: outcome.status },
        'x402 settlement reported success without a matching Transfer',
      );
      throw settlementPending(await recordPending(db, payment, { txHash }));
    }
    if (settlement.unsent) return this.unsent(payment, attempt);
    const reason = settlement.errorReason ?? 'unexpected_settle_error';
    if (reason === SETTLEMENT_PENDING) {
      const txHash = settlement.transaction ? settlement.transaction : null;
      throw settlementPending(await recordPending(db, payment, { txHash }));
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
      return this.followParked(parked, attempt);
    }
    if (settlement.broadcast) {
      // A transaction was handed to the node and no hash came back: its answer may be lost while
      // the node holds (and will mine) it. Nothing proves the authorization unspent, so the claim
      // is never released here: parked until the chain decides (paid, or unused past validBefore).
      this.options.log.warn(
        { paymentId: payment.paymentId, reason },
        'x402 settlement failed after its send; parked until the chain decides the authorization',
      );
      return this.followParked(await recordPending(db, payment, { txHash: null }), attempt);
    }
    return this.refusedBeforeSend(payment, attempt, reason);
  }

  /**
   * This attempt never reached the node (chain unreachable): a fresh claim is freed and the payer
   * asked for the same payment again (503); a taken-over one may have left with its lapsed holder,
   * so it is parked.
   */
  private async unsent(payment: ServicePayment, attempt: Attempt): Promise<never> {
    const { db } = this.options;
    if (attempt.takenOver)
      throw settlementPending(await recordPending(db, payment, { txHash: null }));
    await releaseClaim(db, payment.paymentId);
    throw chainUnreachable();
  }

  /**
   * Refused before this attempt sent anything: a fresh claim is released and refused. One taken
   * over from a lapsed holder (killed mid-group) is parked instead: that holder may have broadcast
   * it, and anyone who saw it may submit it until validBefore, so the chain decides (docs/x402.md).
   */
  private async refusedBeforeSend(p: ServicePayment, attempt: Attempt, reason: string) {
    const { rail, db } = this.options;
    const release = async () => attempt.takenOver || releaseClaim(db, p.paymentId);
    // While the chain cannot be asked a refusal proves nothing: free a fresh claim, ask again later.
    await unlessChainUnreachable(rail, release);
    const refusal = await diagnoseRefusal(rail, this.options.log, reason, attempt.authorization);
    if (refusal === NONCE_USED) {
      // Used on chain already: if that use paid us exactly this (an earlier attempt of ours that
      // crashed before recording, or the payer submitting it), it pays for this call.
      const booked = await bookEarlierUse(this.options, p, attempt.authorization);
      if (booked) return this.runAndRecord(booked, attempt);
    }
    if (attempt.takenOver)
      return this.followParked(await recordPending(db, p, { txHash: null }), attempt);
    await release();
    return attempt.refuse(refusal);
  }

  /** A payment just parked: the chain may already decide it (then the call runs or is refused), else 503. */
  private async followParked(parked: ServicePayment, attempt: Attempt): Promise<RestResult> {
    const result = await this.follow(parked, attempt, Date.now() + this.options.leaseMs);
    // A parked record is never deleted, so there is no claim to take again.
    if (result === 'RECLAIM') throw settlementPending(parked);
    return result;
  }

  /** Runs the paid call and records its answer, which a re-presentation of the payment replays. */
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
    return withReceipt({ ...result }, answered ?? payment);
  }

  private replay(payment: ServicePayment): RestResult {
    return withReceipt({ status: payment.answerStatus ?? 200, body: payment.answerBody }, payment);
  }
}
