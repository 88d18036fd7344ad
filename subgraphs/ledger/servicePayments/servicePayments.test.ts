// The x402 payment record against a real PostgreSQL: one claim per authorization however many
// arrive at once, the ledger groups each money state books (and SUSPENSE netting to zero), and the
// rules the database refuses to break even for direct SQL.
import type { TestDatabase } from '../../../platform/db/testDb';
import { accountId, FEE_RECEIVER_REF, FLOAT_REF } from '../accounts/names';
import { accountBalance } from '../accounts/reads';
import { postGroup } from '../posting/writes';
import {
  recordConfirmed,
  recordFailed,
  recordPending,
  recordSettled,
  settledBookingStats,
} from './bookings';
import { listUnresolved } from './reads';
import { type PaymentClaim, feeStreamOf } from './record';
import { claimPayment, recordAnswer, releaseClaim, takeLapsedLease } from './writes';
import {
  createLedgerTestDatabase,
  paymentClaimFor as claimFor,
  registerRails,
  USDT0,
} from '../test-support';

let db: TestDatabase;
const TX = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const EXPIRED = {
  reason: 'invalid_exact_evm_payload_authorization_valid_before',
  blockNumber: 100n,
} as const;
const NONCE_USED = { reason: 'invalid_exact_evm_nonce_already_used', blockNumber: 100n } as const;

beforeAll(async () => {
  db = await createLedgerTestDatabase({ subgraphs: ['ledger'], poolSize: 24 });
  await registerRails(db.pool);
});

afterAll(async () => {
  await db?.drop();
});

describe('claims', () => {
  it('exactly one of 20 concurrent claims of one authorization wins; the others see its record', async () => {
    const claim = claimFor();
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => claimPayment(db.pool, claim, 30_000)),
    );
    expect(outcomes.filter((outcome) => outcome.claimed)).toHaveLength(1);
    expect(new Set(outcomes.map((outcome) => outcome.payment.paymentId)).size).toBe(1);
    expect(outcomes.every((outcome) => outcome.payment.state === 'SETTLING')).toBe(true);
  });

  it('claims of one turn share one INSERT; an authorization already recorded (or twice in the turn) is claimed once and the others see its record', async () => {
    const recorded = claimFor();
    const first = await claimPayment(db.pool, recorded, 30_000);
    const twice = claimFor();
    const fresh = [claimFor(), claimFor(), claimFor()];
    const outcomes = await Promise.all(
      [recorded, twice, ...fresh, twice].map((claim) => claimPayment(db.pool, claim, 30_000)),
    );
    expect(outcomes.map((outcome) => outcome.claimed)).toEqual([
      false,
      true,
      true,
      true,
      true,
      false,
    ]);
    expect(outcomes[0]!.payment.paymentId).toBe(first.payment.paymentId);
    expect(outcomes[5]!.payment.paymentId).toBe(outcomes[1]!.payment.paymentId);
    const claimed = outcomes.filter((outcome) => outcome.claimed).map((outcome) => outcome.payment);
    expect(claimed.map((payment) => payment.nonce)).toEqual(
      [twice, ...fresh].map((claim) => claim.nonce),
    );
    expect(
      claimed.every((payment) => payment.state === 'SETTLING' && payment.leaseUntil !== null),
    ).toBe(true);
    const rows = await db.pool.query<{ xmin: string }>(
      `SELECT xmin::text AS xmin FROM ledger.service_payments WHERE payment_id = ANY($1)`,
      [claimed.map((payment) => payment.paymentId)],
    );
    expect(rows.rows).toHaveLength(4);
    expect(new Set(rows.rows.map((row) => row.xmin)).size).toBe(1);
  });

  it('a live lease cannot be taken; a lapsed one can, once', async () => {
    const { payment } = await claimPayment(db.pool, claimFor(), 30_000);
    expect(await takeLapsedLease(db.pool, payment.paymentId, 'SETTLING', 30_000)).toBeNull();
    const lapsed = await claimPayment(db.pool, claimFor(), 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const taken = await Promise.all(
      [1, 2, 3].map(() => takeLapsedLease(db.pool, lapsed.payment.paymentId, 'SETTLING', 30_000)),
    );
    expect(taken.filter((row) => row !== null)).toHaveLength(1);
  });

  it('a refused claim is forgotten, so the authorization can be presented again', async () => {
    const claim = claimFor();
    const first = await claimPayment(db.pool, claim, 30_000);
    await releaseClaim(db.pool, first.payment.paymentId);
    const second = await claimPayment(db.pool, claim, 30_000);
    expect(second.claimed).toBe(true);
  });
});

describe('money states', () => {
  const treasury = accountId('TREASURY', USDT0, FEE_RECEIVER_REF);
  const float = accountId('TREASURY', USDT0, FLOAT_REF);

  it('settled: SERVICE_FEE Dr TREASURY:fee-receiver / Cr FEE_REVENUE:<route> (the float untouched), then the answer is kept', async () => {
    const before = await accountBalance(db.pool, treasury);
    const floatBefore = await accountBalance(db.pool, float);
    const { payment } = await claimPayment(db.pool, claimFor(), 30_000);
    const settled = await recordSettled(db.pool, payment, TX(1));
    expect(settled).toMatchObject({ state: 'SETTLED', txHash: TX(1) });
    expect(await accountBalance(db.pool, treasury)).toBe(before + 10_000n);
    expect(await accountBalance(db.pool, float)).toBe(floatBefore);
    const answered = await recordAnswer(db.pool, payment.paymentId, 200, {
      ok: true,
      tool: 'ping_service',
    });
    expect(answered).toMatchObject({
      state: 'ANSWERED',
      answerStatus: 200,
      answerBody: { ok: true, tool: 'ping_service' },
    });
    expect(await recordAnswer(db.pool, payment.paymentId, 200, { again: true })).toBeNull();
  });

  it('fees settled in the same turn (one settlement group) are booked in one transaction, each with its own SERVICE_FEE; their answers in one statement', async () => {
    const before = await accountBalance(db.pool, treasury);
    const payments = await Promise.all(
      [1, 2, 3, 4, 5].map(async (n) => {
        const { payment } = await claimPayment(
          db.pool,
          claimFor({ amountAtomic: BigInt(n) * 1_000n }),
          30_000,
        );
        return payment;
      }),
    );
    const statsBefore = { ...settledBookingStats(db.pool) };
    const settled = await Promise.all(
      payments.map((payment) => recordSettled(db.pool, payment, TX(77))),
    );
    expect(settled.map((payment) => payment.paymentId)).toEqual(payments.map((p) => p.paymentId));
    expect(
      settled.every((payment) => payment.state === 'SETTLED' && payment.txHash === TX(77)),
    ).toBe(true);
    expect(settledBookingStats(db.pool)!.together).toBe((statsBefore.together ?? 0) + 1);
    // One transaction: every row and every fee group carries the same transaction id.
    const ids = payments.map((payment) => payment.paymentId);
    const rows = await db.pool.query<{ xmin: string; amount: string; fee: string }>(
      `SELECT p.xmin::text AS xmin, p.amount::text AS amount, g.xmin::text AS group_xmin,
              (SELECT sum(e.amount)::text FROM ledger.entries e WHERE e.group_id = g.group_id AND e.amount > 0) AS fee
         FROM ledger.service_payments p JOIN ledger.groups g ON g.group_id = p.fee_group_id
        WHERE p.payment_id = ANY($1)`,
      [ids],
    );
    expect(rows.rows).toHaveLength(5);
    expect(new Set(rows.rows.map((row) => row.xmin)).size).toBe(1);
    expect(rows.rows.every((row) => row.fee === row.amount)).toBe(true);
    expect(new Set(settled.map((payment) => payment.feeGroupId)).size).toBe(5);
    expect(await accountBalance(db.pool, treasury)).toBe(before + 15_000n);

    const answered = await Promise.all(
      settled.map((payment, index) => recordAnswer(db.pool, payment.paymentId, 200, { n: index })),
    );
    expect(answered.map((payment) => payment?.answerBody)).toEqual(
      [0, 1, 2, 3, 4].map((n) => ({ n })),
    );
    const answeredRows = await db.pool.query<{ xmin: string }>(
      `SELECT xmin::text AS xmin FROM ledger.service_payments WHERE payment_id = ANY($1) AND state = 'ANSWERED'`,
      [ids],
    );
    expect(answeredRows.rows).toHaveLength(5);
    expect(new Set(answeredRows.rows.map((row) => row.xmin)).size).toBe(1);
    // Answered already: null, in a batch as alone.
    expect(
      await Promise.all(ids.slice(0, 2).map((id) => recordAnswer(db.pool, id, 200, {}))),
    ).toEqual([null, null]);
  });

  it('one payment of a batch that left SETTLING fails alone, with its own error; the others are booked once', async () => {
    const before = await accountBalance(db.pool, treasury);
    const payments = await Promise.all(
      [1, 2, 3].map(async () => (await claimPayment(db.pool, claimFor(), 30_000)).payment),
    );
    await recordSettled(db.pool, payments[1]!, TX(78));
    const statsBefore = { ...settledBookingStats(db.pool)! };
    const outcomes = await Promise.allSettled(
      payments.map((payment) => recordSettled(db.pool, payment, TX(78))),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe(
      `service payment ${payments[1]!.paymentId} left SETTLING while being settled`,
    );
    // The shared transaction was refused whole and each was booked alone.
    expect(settledBookingStats(db.pool)!.retriedAlone).toBe(statsBefore.retriedAlone + 3);
    expect(await accountBalance(db.pool, treasury)).toBe(before + 30_000n);
    const kept = await db.pool.query<{ tx_hash: string }>(
      `SELECT tx_hash FROM ledger.service_payments WHERE payment_id = $1`,
      [payments[1]!.paymentId],
    );
    expect(kept.rows[0]!.tx_hash).toBe(TX(78));
  });

  it('pending then confirmed: SUSPENSE holds the fee, then clears into TREASURY:fee-receiver', async () => {
    const before = await accountBalance(db.pool, treasury);
    const { payment } = await claimPayment(db.pool, claimFor(), 30_000);
    const parked = await recordPending(db.pool, payment, { txHash: TX(2) });
    const suspense = accountId('SUSPENSE', USDT0, payment.paymentId);
    expect(parked.state).toBe('PENDING');
    expect(await accountBalance(db.pool, suspense)).toBe(10_000n);
    expect(await accountBalance(db.pool, treasury)).toBe(before);
    const [once, twice] = await Promise.all([
      recordConfirmed(db.pool, parked, TX(2), null),
      recordConfirmed(db.pool, parked, TX(2), null),
    ]);
    expect([once, twice].filter((row) => row !== null)).toHaveLength(1);
    expect(await accountBalance(db.pool, suspense)).toBe(0n);
    expect(await accountBalance(db.pool, treasury)).toBe(before + 10_000n);
  });

  it('pending then failed: the parked fee is reversed and nothing remains anywhere', async () => {
    const claim = claimFor({ route: 'POST /cafe/order/latte', amountAtomic: 40_000n });
    const { payment } = await claimPayment(db.pool, claim, 30_000);
    const revenue = accountId('FEE_REVENUE', USDT0, feeStreamOf(claim.route));
    const revenueBefore = await accountBalance(db.pool, revenue);
    const parked = await recordPending(db.pool, payment, { txHash: null });
    expect((await listUnresolved(db.pool, 1000)).map((row) => row.paymentId)).toContain(
      payment.paymentId,
    );
    const failed = await recordFailed(db.pool, parked, {
      ...EXPIRED,
      chainTimeS: claim.validBefore,
    });
    expect(failed).toMatchObject({
      state: 'FAILED',
      failureReason: 'invalid_exact_evm_payload_authorization_valid_before',
    });
    expect(failed!.reversalGroupId).toMatch(/^lg_/);
    expect(await accountBalance(db.pool, accountId('SUSPENSE', USDT0, payment.paymentId))).toBe(0n);
    expect(await accountBalance(db.pool, revenue)).toBe(revenueBefore);
    expect(feeStreamOf(claim.route)).toBe('cafe.order.latte');
  });
});

describe('what the database refuses', () => {
  it('a state that skips a step, going back, or an answer without settlement', async () => {
    const { payment } = await claimPayment(db.pool, claimFor(), 30_000);
    await expect(
      db.pool.query(
        `UPDATE ledger.service_payments SET state = 'ANSWERED', answer_status = 200, answered_at = now(), lease_until = NULL WHERE payment_id = $1`,
        [payment.paymentId],
      ),
    ).rejects.toThrow(/SERVICE_PAYMENT_TRANSITION|service_payments_paid_booked/);
    const settled = await recordSettled(db.pool, payment, TX(3));
    await expect(
      db.pool.query(`UPDATE ledger.service_payments SET state = 'SETTLING' WHERE payment_id = $1`, [
        settled.paymentId,
      ]),
    ).rejects.toThrow(/SERVICE_PAYMENT_TRANSITION/);
  });

  it('changing the authorization, the amount or the recorded transaction, or deleting a paid record', async () => {
    const { payment } = await claimPayment(db.pool, claimFor(), 30_000);
    await recordSettled(db.pool, payment, TX(4));
    for (const change of [
      'amount = 1',
      "payer = '0x0000000000000000000000000000000000000000'",
      `tx_hash = '${TX(5)}'`,
    ]) {
      await expect(
        db.pool.query(`UPDATE ledger.service_payments SET ${change} WHERE payment_id = $1`, [
          payment.paymentId,
        ]),
      ).rejects.toThrow(/SERVICE_PAYMENT_IMMUTABLE/);
    }
    await expect(
      db.pool.query('DELETE FROM ledger.service_payments WHERE payment_id = $1', [
        payment.paymentId,
      ]),
    ).rejects.toThrow(/SERVICE_PAYMENT_IMMUTABLE/);
  });

  it('booking a fee group that is not this payment’s SERVICE_FEE', async () => {
    const { payment } = await claimPayment(db.pool, claimFor(), 30_000);
    const wrongAmount = await postGroup(db.pool, {
      kind: 'SERVICE_FEE',
      asset: USDT0,
      entries: [
        { account: accountId('TREASURY', USDT0, FLOAT_REF), amountAtomic: 9_999n },
        { account: accountId('FEE_REVENUE', USDT0, 'ping_service'), amountAtomic: -9_999n },
      ],
      idempotencyKey: `test:wrong-fee:${payment.paymentId}`,
    });
    await expect(
      db.pool.query(
        `UPDATE ledger.service_payments SET state = 'SETTLED', tx_hash = $2, fee_group_id = $3, settled_at = now() WHERE payment_id = $1`,
        [payment.paymentId, TX(6), wrongAmount],
      ),
    ).rejects.toThrow(/SERVICE_PAYMENT_FEE_MISMATCH/);
  });

  it('two records for one authorization', async () => {
    const claim = claimFor();
    await claimPayment(db.pool, claim, 30_000);
    await expect(
      db.pool.query(
        `INSERT INTO ledger.service_payments (payment_id, network, asset, payer, nonce, pay_to, amount, valid_before, route, request_digest, state, lease_until)
         VALUES ('pay_${'0'.repeat(24)}', $1, $2, $3, $4, $5, 1, 1, 'GET /x', $6, 'SETTLING', now())`,
        [claim.network, claim.asset, claim.payer, claim.nonce, claim.payTo, claim.requestDigest],
      ),
    ).rejects.toThrow(/service_payments_authorization_once/);
  });
});

describe('FAILED only on chain proof (0006)', () => {
  async function parked(overrides: Partial<PaymentClaim> = {}) {
    const { payment } = await claimPayment(db.pool, claimFor(overrides), 30_000);
    return recordPending(db.pool, payment, { txHash: null, unpaidTxHash: TX(7) });
  }

  it('a reverted settlement parks the fee and keeps the reverted transaction apart from the one that pays', async () => {
    const payment = await parked();
    expect(payment).toMatchObject({ state: 'PENDING', txHash: null, unpaidTxHash: TX(7) });
    expect(await accountBalance(db.pool, accountId('SUSPENSE', USDT0, payment.paymentId))).toBe(
      10_000n,
    );
    const confirmed = await recordConfirmed(db.pool, payment, TX(8), null);
    expect(confirmed).toMatchObject({ state: 'SETTLED', txHash: TX(8), unpaidTxHash: TX(7) });
  });

  it('a payment confirmed by another transaction than the one recorded keeps ours as unpaid', async () => {
    const { payment } = await claimPayment(db.pool, claimFor(), 30_000);
    const sent = await recordPending(db.pool, payment, { txHash: TX(9) });
    const confirmed = await recordConfirmed(db.pool, sent, TX(10), null);
    expect(confirmed).toMatchObject({ state: 'SETTLED', txHash: TX(10), unpaidTxHash: TX(9) });
    await expect(
      db.pool.query(
        `UPDATE ledger.service_payments SET unpaid_tx_hash = $2 WHERE payment_id = $1`,
        [payment.paymentId, TX(11)],
      ),
    ).rejects.toThrow(/SERVICE_PAYMENT_IMMUTABLE/);
  });

  it('refuses FAILED without proof: a revert alone, expiry before validBefore, or a used nonce without its transaction', async () => {
    const payment = await parked({ validBefore: 1_000n });
    for (const change of [
      `failure_reason = 'invalid_exact_evm_transaction_failed', evidence_block = 5`,
      `failure_reason = 'invalid_exact_evm_payload_authorization_valid_before', evidence_block = 5, evidence_chain_time = 999`,
      `failure_reason = 'invalid_exact_evm_payload_authorization_valid_before', evidence_chain_time = 1000`,
      `failure_reason = 'invalid_exact_evm_nonce_already_used', evidence_block = 5`,
    ]) {
      await expect(
        db.pool.query(
          `UPDATE ledger.service_payments SET state = 'FAILED', ${change} WHERE payment_id = $1`,
          [payment.paymentId],
        ),
      ).rejects.toThrow(/SERVICE_PAYMENT_UNPROVEN_FAILURE/);
    }
    await expect(recordFailed(db.pool, payment, { ...EXPIRED, chainTimeS: 999n })).rejects.toThrow(
      /SERVICE_PAYMENT_UNPROVEN_FAILURE/,
    );
    expect(await accountBalance(db.pool, accountId('SUSPENSE', USDT0, payment.paymentId))).toBe(
      10_000n,
    );
  });

  it('takes FAILED with proof, reverses the parked fee once, and keeps the evidence', async () => {
    const expired = await recordFailed(db.pool, await parked({ validBefore: 1_000n }), {
      ...EXPIRED,
      chainTimeS: 1_000n,
    });
    expect(expired).toMatchObject({
      state: 'FAILED',
      evidenceBlock: 100n,
      evidenceChainTimeS: 1_000n,
      evidenceTxHash: null,
    });
    const used = await recordFailed(db.pool, await parked(), {
      ...NONCE_USED,
      usedByTxHash: TX(12),
    });
    expect(used).toMatchObject({
      state: 'FAILED',
      failureReason: 'invalid_exact_evm_nonce_already_used',
      evidenceTxHash: TX(12),
    });
    expect(await accountBalance(db.pool, accountId('SUSPENSE', USDT0, used!.paymentId))).toBe(0n);
    await expect(
      db.pool.query(`UPDATE ledger.service_payments SET evidence_block = 1 WHERE payment_id = $1`, [
        used!.paymentId,
      ]),
    ).rejects.toThrow(/SERVICE_PAYMENT_IMMUTABLE|SERVICE_PAYMENT_TRANSITION/);
  });

  it('a claim cannot be inserted in any state but SETTLING', async () => {
    const claim = claimFor();
    await expect(
      db.pool.query(
        `INSERT INTO ledger.service_payments (payment_id, network, asset, payer, nonce, pay_to, amount, valid_before, route, request_digest, state, failure_reason)
         VALUES ('pay_${'1'.repeat(24)}', $1, $2, $3, $4, $5, 1, 1, 'GET /x', $6, 'FAILED', 'invalid_exact_evm_transaction_failed')`,
        [claim.network, claim.asset, claim.payer, claim.nonce, claim.payTo, claim.requestDigest],
      ),
    ).rejects.toThrow(/SERVICE_PAYMENT_TRANSITION/);
  });

  it('confirmation and failure racing on one payment: exactly one wins and the books agree with it', async () => {
    const payment = await parked({ validBefore: 1_000n });
    const [confirmed, failed] = await Promise.all([
      recordConfirmed(db.pool, payment, TX(13), null),
      recordFailed(db.pool, payment, { ...EXPIRED, chainTimeS: 1_000n }),
    ]);
    expect([confirmed, failed].filter((row) => row !== null)).toHaveLength(1);
    expect(await accountBalance(db.pool, accountId('SUSPENSE', USDT0, payment.paymentId))).toBe(0n);
    const { rows } = await db.pool.query<{ kind: string }>(
      `SELECT kind FROM ledger.groups WHERE idempotency_key LIKE 'x402:%:' || $1 ORDER BY seq`,
      [payment.paymentId],
    );
    expect(rows.map((row) => row.kind)).toEqual(
      confirmed ? ['SERVICE_FEE', 'SUSPENSE_MOVE'] : ['SERVICE_FEE', 'REVERSAL'],
    );
  });
});
