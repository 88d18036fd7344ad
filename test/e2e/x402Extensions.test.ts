// The x402 extensions the paid routes speak (@x402/extensions), end to end on the devnet with the
// official client: payment-identifier (a resend of the same payload after a lost answer is the same
// answer and moves no money; another payload under that id is 409).
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  decodePaymentSignatureHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import {
  PAYMENT_IDENTIFIER,
  appendPaymentIdentifierToExtensions,
  generatePaymentId,
} from '@x402/extensions/payment-identifier';
import { validateDiscoveryExtension } from '@x402/extensions/bazaar';
import {
  type EIP712SignedOffer,
  type EIP712SignedReceipt,
  decodeSignedOffers,
  extractOffersFromPaymentRequired,
  extractReceiptFromResponse,
  verifyOfferSignatureEIP712,
  verifyReceiptMatchesOffer,
  verifyReceiptSignatureEIP712,
} from '@x402/extensions/offer-receipt';
import type { PrivateKeyAccount } from 'viem/accounts';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import { fundingBalance, mintedPayer } from '../support/devnetPayers';
import { officialClient, officialFetch } from '../support/officialClient';
import { startTestStack, type TestStack } from '../support/stack';

const PING_PRICE = 10_000n;
const FUNDED = 1_000_000n;

let devnet: DevnetChains;
let stack: TestStack;

function funding() {
  return devnet.info.chains.funding;
}

function fundedPayer(): Promise<PrivateKeyAccount> {
  return mintedPayer(devnet, FUNDED);
}

function balance(payer: PrivateKeyAccount): Promise<bigint> {
  return fundingBalance(devnet, payer.address);
}

async function pingChallenge(): Promise<PaymentRequired> {
  const response = await fetch(`${stack.url}/ping_service`);
  expect(response.status).toBe(402);
  return decodePaymentRequiredHeader(response.headers.get('payment-required')!);
}

/** A PAYMENT-SIGNATURE the official client makes for the challenge, under payment id `id`. */
async function paymentUnder(
  payer: PrivateKeyAccount,
  challenge: PaymentRequired,
  id: string,
): Promise<string> {
  const client = officialClient(payer, {
    network: `eip155:${funding().chainId}`,
    asset: funding().token.address.toLowerCase(),
  });
  const required = structuredClone(challenge);
  appendPaymentIdentifierToExtensions(required.extensions ?? (required.extensions = {}), id);
  return encodePaymentSignatureHeader(await client.createPaymentPayload(required));
}

function ping(header: string): Promise<Response> {
  return fetch(`${stack.url}/ping_service`, { headers: { 'payment-signature': header } });
}

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
  stack = await startTestStack({ x402: { devnet } });
});

afterAll(async () => {
  await stack?.stop();
  await devnet?.stop();
});

describe('payment-identifier', () => {
  it('is advertised as optional in every 402', async () => {
    const challenge = await pingChallenge();
    expect(challenge.extensions?.[PAYMENT_IDENTIFIER]).toMatchObject({
      info: { required: false },
      schema: { type: 'object' },
    });
  });

  it('answers a resend of the same payload with the same body and PAYMENT-RESPONSE, and moves no more money', async () => {
    const payer = await fundedPayer();
    const id = generatePaymentId();
    const header = await paymentUnder(payer, await pingChallenge(), id);
    const first = await ping(header);
    expect(first.status).toBe(200);
    const firstBody = await first.text();
    const firstReceipt = first.headers.get('payment-response')!;
    expect(decodePaymentResponseHeader(firstReceipt)).toMatchObject({ success: true });
    expect(await balance(payer)).toBe(FUNDED - PING_PRICE);

    // The client lost that answer and sends the very same payment again.
    const again = await ping(header);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(firstBody);
    expect(again.headers.get('payment-response')).toBe(firstReceipt);
    expect(await balance(payer)).toBe(FUNDED - PING_PRICE);
    const fees = await stack.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ledger.service_payments WHERE payer = $1`,
      [payer.address.toLowerCase()],
    );
    expect(fees.rows[0]!.n).toBe(1);
  });

  it('refuses another payload under an id already used with 409, and charges nothing for it', async () => {
    const payer = await fundedPayer();
    const id = generatePaymentId();
    const challenge = await pingChallenge();
    expect((await ping(await paymentUnder(payer, challenge, id))).status).toBe(200);

    const other = await ping(await paymentUnder(payer, challenge, id));
    expect(other.status).toBe(409);
    expect(await other.json()).toMatchObject({
      code: 'PAYMENT_IDENTIFIER_CONFLICT',
      retryable: false,
      details: { paymentIdentifier: id },
    });
    expect(await balance(payer)).toBe(FUNDED - PING_PRICE);
  });

  it('refuses a malformed id before anything is verified', async () => {
    const payer = await fundedPayer();
    const payload = decodePaymentSignatureHeader(
      await paymentUnder(payer, await pingChallenge(), generatePaymentId()),
    );
    (payload.extensions![PAYMENT_IDENTIFIER] as { info: { id: string } }).info.id = 'short';
    const response = await ping(encodePaymentSignatureHeader(payload));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'PAYMENT_IDENTIFIER_INVALID' });
    expect(await balance(payer)).toBe(FUNDED);
  });
});

describe('offer-receipt', () => {
  it('offers each 402’s terms signed by the fee receiver (EIP-712)', async () => {
    const offers = extractOffersFromPaymentRequired(await pingChallenge());
    expect(offers).toHaveLength(1);
    const verified = await verifyOfferSignatureEIP712(offers[0] as EIP712SignedOffer);
    expect(verified.signer.toLowerCase()).toBe(devnet.info.addresses.feeReceiver.toLowerCase());
    expect(verified.payload).toMatchObject({
      resourceUrl: expect.stringMatching(/\/ping_service$/),
      amount: PING_PRICE.toString(),
      network: 'eip155:196',
    });
  });

  it('gives every paid answer a receipt the package’s verifier accepts, naming the route, the amount and the payer', async () => {
    const payer = await fundedPayer();
    const response = await officialFetch(payer, {
      network: `eip155:${funding().chainId}`,
      asset: funding().token.address.toLowerCase(),
    })(`${stack.url}/ping_service`);
    expect(response.status).toBe(200);
    const receipt = extractReceiptFromResponse(response) as EIP712SignedReceipt;
    expect(receipt.format).toBe('eip712');
    const verified = await verifyReceiptSignatureEIP712(receipt);
    const feeReceiver = devnet.info.addresses.feeReceiver.toLowerCase();
    expect(verified.signer.toLowerCase()).toBe(feeReceiver);
    expect(verified.payload).toMatchObject({
      resourceUrl: expect.stringMatching(/\/ping_service$/),
      payer: payer.address.toLowerCase(),
      network: 'eip155:196',
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    // The amount is named by the offer of what was paid, signed beside the receipt.
    const settlement = decodePaymentResponseHeader(response.headers.get('payment-response')!);
    const { offer } = (settlement.extensions as any)['offer-receipt'].info;
    const paidOffer = await verifyOfferSignatureEIP712(offer as EIP712SignedOffer);
    expect(paidOffer.signer.toLowerCase()).toBe(feeReceiver);
    expect(paidOffer.payload.amount).toBe(PING_PRICE.toString());
    const [decoded] = decodeSignedOffers([offer]);
    expect(verifyReceiptMatchesOffer(receipt, decoded!, [payer.address])).toBe(true);
  });
});

describe('bazaar', () => {
  it('describes the priced route in its 402, valid against the package’s schema', async () => {
    const extension = (await pingChallenge()).extensions?.bazaar as any;
    expect(extension.info.input).toMatchObject({ type: 'http', method: 'GET' });
    expect(validateDiscoveryExtension(extension)).toEqual({ valid: true });
    const preflight = await fetch(`${stack.url}/preflight_payment`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ policyId: '1', intentHash: `0x${'ab'.repeat(32)}` }),
    });
    expect(preflight.status).toBe(402);
    const posted = decodePaymentRequiredHeader(preflight.headers.get('payment-required')!)
      .extensions?.bazaar as any;
    expect(posted.info.input).toMatchObject({ type: 'http', method: 'POST', bodyType: 'json' });
    expect(validateDiscoveryExtension(posted)).toEqual({ valid: true });
  });

  it('describes every priced route in /.well-known/x402, each valid against the package’s schema', async () => {
    const discovery = (await (await fetch(`${stack.url}/.well-known/x402`)).json()) as any;
    expect(discovery.resources.length).toBeGreaterThan(5);
    for (const resource of discovery.resources) {
      expect(resource.extensions.bazaar.info.input.method).toBe(resource.method);
      expect(validateDiscoveryExtension(resource.extensions.bazaar)).toEqual({ valid: true });
    }
  });
});
