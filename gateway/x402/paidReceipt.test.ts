// The offer-receipt extension signs each paid answer's receipt from the record the paywall answered
// with, and from nothing else: no database read, and no receipt for a PAYMENT-RESPONSE header the
// paywall did not make (one transaction settles a whole group, perhaps several payments of one
// payer, so a transaction and a payer do not name the payment a receipt would state).
import { decodePaymentResponseHeader } from '@x402/core/http';
import { verifyReceiptSignatureEIP712 } from '@x402/extensions/offer-receipt';
import { typedDataSigner } from '../../platform/chain/secp256k1';
import type { ServicePayment } from '../../subgraphs/ledger';
import type { RouteDefinition } from '../rest/types';
import { withReceipt } from './answers';
import { X402Extensions } from './extensions';
import { encodeSettlementHeader } from './headerCodec';
import { PAYMENT_RESPONSE_HEADER } from './protocol';

const key = `0x${'42'.repeat(32)}` as const;
const route = {
  method: 'GET',
  path: '/ping_service',
  price: { kind: 'free' },
} as unknown as RouteDefinition;
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

describe('a paid answer from the paywall', () => {
  it('is receipted from the record it was answered with: its payer, transaction, settlement time and amount', async () => {
    const signer = typedDataSigner(key);
    const extensions = new X402Extensions({ routes: [], signer });
    const answer = withReceipt({ status: 200, body: { ok: true } }, payment);
    const enriched = await extensions.enrich(route, 'http://127.0.0.1/ping_service', answer);
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

describe('a PAYMENT-RESPONSE header the paywall did not make', () => {
  it('gets no receipt, and is passed on as it came', async () => {
    const extensions = new X402Extensions({ routes: [], signer: typedDataSigner(key) });
    const header = encodeSettlementHeader({
      success: true,
      transaction: payment.txHash!,
      network: 'eip155:196',
      payer: payment.payer,
    });
    const copied = {
      status: 200,
      body: { ok: true },
      headers: { [PAYMENT_RESPONSE_HEADER]: header },
    };
    const enriched = await extensions.enrich(route, 'http://127.0.0.1/ping_service', copied);
    expect(enriched).toBe(copied);
    expect(
      decodePaymentResponseHeader(enriched.headers![PAYMENT_RESPONSE_HEADER]!).extensions,
    ).toBeUndefined();
  });

  it("gets none either when the paywall's answer was copied on the way (the record is the answer's own)", async () => {
    const extensions = new X402Extensions({ routes: [], signer: typedDataSigner(key) });
    const answer = withReceipt({ status: 200, body: { ok: true } }, payment);
    const copy = { ...answer };
    expect(await extensions.enrich(route, 'http://127.0.0.1/ping_service', copy)).toBe(copy);
  });
});
