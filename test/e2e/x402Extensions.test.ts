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
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import { createChainPublicClient, createChainWalletClient } from '../../platform/chain/clients';
import { mintToken, readTokenBalance } from '../../platform/chain/tokens';
import { officialClient } from '../support/officialClient';
import { startTestStack, type TestStack } from '../support/stack';

const POLLING = { pollingIntervalMs: 20 };
const PING_PRICE = 10_000n;
const FUNDED = 1_000_000n;

let devnet: DevnetChains;
let stack: TestStack;

function funding() {
  return devnet.info.chains.funding;
}

async function fundedPayer(): Promise<PrivateKeyAccount> {
  const payer = privateKeyToAccount(generatePrivateKey());
  await mintToken({
    publicClient: createChainPublicClient(funding(), POLLING),
    minter: createChainWalletClient(funding(), devnet.keys.deployer.account, POLLING),
    token: funding().token.address,
    to: payer.address,
    amountAtomic: FUNDED,
  });
  return payer;
}

function balance(payer: PrivateKeyAccount): Promise<bigint> {
  return readTokenBalance(
    createChainPublicClient(funding(), POLLING),
    funding().token.address,
    payer.address,
  );
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
