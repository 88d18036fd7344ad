// The x402 payment record against a real PostgreSQL: one claim per authorization however many
// arrive at once, the ledger groups each money state books (and SUSPENSE netting to zero), and the
// rules the database refuses to break even for direct SQL.
import { randomBytes } from 'node:crypto';
import type { TestDatabase } from '../../platform/db/testDb';
import { accountId, FEE_RECEIVER_REF, FLOAT_REF } from './accounts';
import { accountBalance, postGroup } from './posting';
import {
  type PaymentClaim,
  claimPayment,
  feeStreamOf,
  listUnresolved,
  recordAnswer,
  recordConfirmed,
  recordFailed,
  recordPending,
  recordSettled,
  releaseClaim,
  takeLapsedLease,
} from './servicePayments';
import { createLedgerTestDatabase, registerRails, USDT0 } from './testRails';

let db: TestDatabase;
const TOKEN = USDT0.split('|')[1];
const TX = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

function claimFor(overrides: Partial<PaymentClaim> = {}): PaymentClaim {
  return {
    network: 'eip155:196',
    asset: TOKEN,
    payer: `0x${randomBytes(20).toString('hex')}`,
    nonce: `0x${randomBytes(32).toString('hex')}`,
    payTo: `0x${'11'.repeat(20)}`,
    amountAtomic: 10_000n,
    validBefore: 2_000_000_000n,
    route: 'GET /ping_service',
    requestDigest: 'a'.repeat(64),
    ...overrides,
  };
}

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
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => claimPayment(db.pool, claim, 30_000)));
    expect(outcomes.filter((outcome) => outcome.claimed)).toHaveLength(1);
    expect(new Set(outcomes.map((outcome) => outcome.payment.paymentId)).size).toBe(1);
    expect(outcomes.every((outcome) => outcome.payment.state === 'SETTLING')).toBe(true);
  });

  it('a live lease cannot be taken; a lapsed one can, once', async () => {
    const { payment } = await claimPayment(db.pool, claimFor(), 30_000);
    expect(await takeLapsedLease(db.pool, payment.paymentId, 'SETTLING', 30_000)).toBeNull();
    const lapsed = await claimPayment(db.pool, claimFor(), 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const taken = await Promise.all([1, 2, 3].map(() => takeLapsedLease(db.pool, lapsed.payment.paymentId, 'SETTLING', 30_000)));
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
    const answered = await recordAnswer(db.pool, payment.paymentId, 200, { ok: true, tool: 'ping_service' });
    expect(answered).toMatchObject({ state: 'ANSWERED', answerStatus: 200, answerBody: { ok: true, tool: 'ping_service' } });
    expect(await recordAnswer(db.pool, payment.paymentId, 200, { again: true })).toBeNull();
  });

  it('pending then confirmed: SUSPENSE holds the fee, then clears into TREASURY:fee-receiver', async () => {
    const before = await accountBalance(db.pool, treasury);
    const { payment } = await claimPayment(db.pool, claimFor(), 30_000);
    const parked = await recordPending(db.pool, payment, TX(2));
    const suspense = accountId('SUSPENSE', USDT0, payment.paymentId);
    expect(parked.state).toBe('PENDING');
    expect(await accountBalance(db.pool, suspense)).toBe(10_000n);
    expect(await accountBalance(db.pool, treasury)).toBe(before);
    const [once, twice] = await Promise.all([recordConfirmed(db.pool, parked, TX(2), null), recordConfirmed(db.pool, parked, TX(2), null)]);
    expect([once, twice].filter((row) => row !== null)).toHaveLength(1);
    expect(await accountBalance(db.pool, suspense)).toBe(0n);
    expect(await accountBalance(db.pool, treasury)).toBe(before + 10_000n);
  });

  it('pending then failed: the parked fee is reversed and nothing remains anywhere', async () => {
    const claim = claimFor({ route: 'POST /cafe/order/latte', amountAtomic: 40_000n });
    const { payment } = await claimPayment(db.pool, claim, 30_000);
    const revenue = accountId('FEE_REVENUE', USDT0, feeStreamOf(claim.route));
    const revenueBefore = await accountBalance(db.pool, revenue);
    const parked = await recordPending(db.pool, payment, null);
    expect((await listUnresolved(db.pool, 1000)).map((row) => row.paymentId)).toContain(payment.paymentId);
    const failed = await recordFailed(db.pool, parked, 'invalid_exact_evm_payload_authorization_valid_before', null);
    expect(failed).toMatchObject({ state: 'FAILED', failureReason: 'invalid_exact_evm_payload_authorization_valid_before' });
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
      db.pool.query(`UPDATE ledger.service_payments SET state = 'ANSWERED', answer_status = 200, answered_at = now(), lease_until = NULL WHERE payment_id = $1`, [payment.paymentId]),
    ).rejects.toThrow(/SERVICE_PAYMENT_TRANSITION|service_payments_paid_booked/);
    const settled = await recordSettled(db.pool, payment, TX(3));
    await expect(
      db.pool.query(`UPDATE ledger.service_payments SET state = 'SETTLING' WHERE payment_id = $1`, [settled.paymentId]),
    ).rejects.toThrow(/SERVICE_PAYMENT_TRANSITION/);
  });

  it('changing the authorization, the amount or the recorded transaction, or deleting a paid record', async () => {
    const { payment } = await claimPayment(db.pool, claimFor(), 30_000);
    await recordSettled(db.pool, payment, TX(4));
    for (const change of ["amount = 1", "payer = '0x0000000000000000000000000000000000000000'", `tx_hash = '${TX(5)}'`]) {
      await expect(db.pool.query(`UPDATE ledger.service_payments SET ${change} WHERE payment_id = $1`, [payment.paymentId])).rejects.toThrow(/SERVICE_PAYMENT_IMMUTABLE/);
    }
    await expect(db.pool.query('DELETE FROM ledger.service_payments WHERE payment_id = $1', [payment.paymentId])).rejects.toThrow(/SERVICE_PAYMENT_IMMUTABLE/);
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
      db.pool.query(`UPDATE ledger.service_payments SET state = 'SETTLED', tx_hash = $2, fee_group_id = $3, settled_at = now() WHERE payment_id = $1`, [
        payment.paymentId,
        TX(6),
        wrongAmount,
      ]),
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
