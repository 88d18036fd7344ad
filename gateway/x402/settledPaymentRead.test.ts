// The offer-receipt extension signs each paid answer's receipt from the record the paywall answered
// with; an answer made elsewhere has its settled payment read by (tx_hash, payer).
// Without an index on those keys the read scanned the whole of ledger.service_payments, so every
// paid call cost more the more payments there were (the soak: 229 → 914 buffers a call in ten
// minutes). This checks the plan, not a time: under a generic plan (as a cached statement runs)
// and with sequential scans priced out, the read must still be an index range on both keys.
import { decodePaymentResponseHeader } from '@x402/core/http';
import { verifyReceiptSignatureEIP712 } from '@x402/extensions/offer-receipt';
import { Pool } from 'pg';
import { typedDataSigner } from '../../platform/chain/secp256k1';
import { createTestDatabase, type TestDatabase } from '../../platform/db/testDb';
import type { ServicePayment } from '../../subgraphs/ledger';
import type { RouteDefinition } from '../rest/types';
import { withReceipt } from './answers';
import { SETTLED_PAYMENT_OF_TRANSACTION, X402Extensions } from './extensions';
import { PAYMENT_RESPONSE_HEADER } from './protocol';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

async function genericPlan(): Promise<string> {
  const client = await db.pool.connect();
  try {
    await client.query('SET plan_cache_mode = force_generic_plan');
    await client.query('SET enable_seqscan = off');
    await client.query(`PREPARE probe(text, text) AS ${SETTLED_PAYMENT_OF_TRANSACTION}`);
    const plan = await client.query(
      `EXPLAIN (COSTS OFF) EXECUTE probe('0x${'ab'.repeat(32)}', '0x${'cd'.repeat(20)}')`,
    );
    return plan.rows.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    client.release(true); // its session was changed: closed, not pooled
  }
}

describe("the offer receipt's read of a settled payment", () => {
  it('is an index range on (tx_hash, payer), never a scan of every payment', async () => {
    const plan = await genericPlan();
    expect(plan).toMatch(/Index Scan using service_payments_tx_payer on service_payments/);
    expect(plan).toMatch(/Index Cond: \(\(tx_hash = \$1\) AND \(payer = \$2\)\)/);
    expect(plan).not.toMatch(/Seq Scan/);
  });
});

describe('a paid answer from the paywall', () => {
  it('is receipted from the record it was answered with, without reading the database', async () => {
    const key = `0x${'42'.repeat(32)}` as const;
    const signer = typedDataSigner(key);
    // A pool that cannot reach any server: a read through it would fail the receipt.
    const unreachable = new Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    const extensions = new X402Extensions({ routes: [], signer, db: unreachable });
    const settledAt = new Date('2026-11-29T07:30:00.000Z');
    const payment = {
      paymentId: 'pay_' + '1'.repeat(24),
      network: 'eip155:196',
      asset: `0x${'3c'.repeat(20)}`,
      payer: `0x${'a1'.repeat(20)}`,
      payTo: `0x${'b2'.repeat(20)}`,
      amountAtomic: 50_000n,
      txHash: `0x${'ee'.repeat(32)}`,
      settledAt,
    } as unknown as ServicePayment;
    const answer = withReceipt({ status: 200, body: { ok: true } }, payment);
    const enriched = await extensions.enrich(
      {
        method: 'GET',
        path: '/ping_service',
        price: { kind: 'free' },
      } as unknown as RouteDefinition,
      'http://127.0.0.1/ping_service',
      answer,
    );
    await unreachable.end();
    const settlement = decodePaymentResponseHeader(enriched.headers![PAYMENT_RESPONSE_HEADER]!);
    const { receipt, offer } = (settlement.extensions as any)['offer-receipt'].info;
    expect((await verifyReceiptSignatureEIP712(receipt)).signer).toBe(signer.address);
    expect(receipt.payload).toMatchObject({
      issuedAt: Math.floor(settledAt.getTime() / 1000),
      payer: payment.payer,
      transaction: payment.txHash,
    });
    expect(offer.payload).toMatchObject({
      amount: '50000',
      payTo: payment.payTo,
      asset: payment.asset,
    });
  });
});
