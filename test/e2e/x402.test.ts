// x402 v2 on the paid routes, end to end on the devnet (anvil eip155:196 with the EIP-3009 USD₮0
// token): the challenge on the wire, the official client paying, every refusal moving no money,
// one settlement for 20 concurrent copies of a payment, and an ambiguous settlement parked in
// SUSPENSE, answered 503, then resolved from the chain without a second charge. Last, the books.
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { policyDocument, wireIntent } from '../../core/test-support/spend-fixtures';
import { formatIsoSeconds } from '../../core/validation/timestamp';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import {
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
  type ChainPublicClient,
} from '../../platform/chain/clients';
import {
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  mintToken,
  randomAuthorizationNonce,
  readTokenBalance,
  signTransferWithAuthorization,
  submitTransferWithAuthorization,
} from '../../platform/chain/tokens';
import { postJson, startTestStack, type TestStack } from '../support/stack';
import { feeReceiverDrift, trialBalanceLines } from '../support/x402Books';
import { officialFetch } from '../support/officialClient';

const POLLING = { pollingIntervalMs: 20 };
const PING_PRICE = 10_000n;
const PREFLIGHT_PRICE = 50_000n;
const LATTE_PRICE = 40_000n;

let devnet: DevnetChains;
let stack: TestStack;
let publicClient: ChainPublicClient;
let token: Address;
let feeReceiver: Address;

function funding() {
  return devnet.info.chains.funding;
}

async function fund(account: { address: Address }, amountAtomic: bigint): Promise<void> {
  const minter = createChainWalletClient(funding(), devnet.keys.deployer.account, POLLING);
  await mintToken({ publicClient, minter, token, to: account.address, amountAtomic });
}

function balance(address: Address): Promise<bigint> {
  return readTokenBalance(publicClient, token, address);
}

function newPayer(): PrivateKeyAccount {
  return privateKeyToAccount(generatePrivateKey());
}

async function challengeFor(path: string, init: RequestInit = {}): Promise<PaymentRequired> {
  const response = await fetch(`${stack.url}${path}`, init);
  expect(response.status).toBe(402);
  return decodePaymentRequiredHeader(response.headers.get('payment-required')!);
}

interface Tweaks {
  readonly accepted?: Partial<PaymentRequirements>;
  readonly to?: Address;
  readonly value?: bigint;
  readonly validBefore?: bigint;
  readonly nonce?: Hex;
  /** Signs with this key while naming the payer as `from` (a forged signature). */
  readonly signer?: PrivateKeyAccount;
  /** The EIP-712 domain's chain id (default the network's). */
  readonly chainId?: number;
}

/** A v2 PaymentPayload built by hand from a challenge, as a client would, with optional faults. */
async function paymentHeader(
  required: PaymentRequired,
  payer: PrivateKeyAccount,
  tweaks: Tweaks = {},
): Promise<string> {
  const accepted = { ...required.accepts[0], ...tweaks.accepted } as PaymentRequirements;
  const authorization = {
    from: payer.address,
    to: tweaks.to ?? (accepted.payTo as Address),
    value: (tweaks.value ?? BigInt(accepted.amount)).toString(),
    validAfter: '0',
    validBefore: (tweaks.validBefore ?? BigInt(Math.floor(Date.now() / 1000) + 300)).toString(),
    nonce: tweaks.nonce ?? randomAuthorizationNonce(),
  };
  const signature = await (tweaks.signer ?? payer).signTypedData({
    domain: {
      name: String(accepted.extra.name),
      version: String(accepted.extra.version),
      chainId: tweaks.chainId ?? Number(accepted.network.split(':')[1]),
      verifyingContract: accepted.asset as Address,
    },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: 0n,
      validBefore: BigInt(authorization.validBefore),
    },
  });
  return encodePaymentSignatureHeader({
    x402Version: 2,
    resource: required.resource,
    accepted,
    payload: { authorization, signature },
  });
}

async function paidPing(header: string, headerName = 'payment-signature'): Promise<Response> {
  return fetch(`${stack.url}/ping_service`, { headers: { [headerName]: header } });
}

async function paymentRows(
  payer: Address,
): Promise<Array<{ state: string; fee_group_id: string | null; payment_id: string }>> {
  const { rows } = await stack.db.pool.query(
    'SELECT payment_id, state, fee_group_id FROM ledger.service_payments WHERE payer = $1 ORDER BY created_at',
    [payer.toLowerCase()],
  );
  return rows;
}

async function serviceFeeGroups(
  paymentId: string,
): Promise<Array<{ group_id: string; kind: string }>> {
  const { rows } = await stack.db.pool.query(
    `SELECT group_id, kind FROM ledger.groups WHERE idempotency_key LIKE 'x402:%:' || $1 ORDER BY seq`,
    [paymentId],
  );
  return rows;
}

async function accountBalance(account: string): Promise<bigint> {
  const { rows } = await stack.db.pool.query(
    'SELECT COALESCE(sum(amount), 0)::text AS balance FROM ledger.entries WHERE account_id = $1',
    [account],
  );
  return BigInt(rows[0].balance);
}

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
  publicClient = createChainPublicClient(funding(), POLLING);
  token = funding().token.address;
  feeReceiver = devnet.info.addresses.feeReceiver;
  stack = await startTestStack({ x402: { devnet, settleTimeoutMs: 1_500 } });
});

afterAll(async () => {
  await stack?.stop();
  await devnet?.stop();
});

describe('the challenge', () => {
  it('answers an unpaid call with 402, body exactly {}, and the v2 PaymentRequired in the payment-required header', async () => {
    const response = await fetch(`${stack.url}/ping_service`);
    expect(response.status).toBe(402);
    expect(await response.text()).toBe('{}');
    expect(response.headers.get('cache-control')).toBe('no-store');
    const header = response.headers.get('payment-required')!;
    expect(header).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    const required = JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
    expect(required).toEqual({
      x402Version: 2,
      error: 'Payment required',
      resource: {
        url: `${'http://127.0.0.1'}/ping_service`,
        description: expect.any(String),
        mimeType: 'application/json',
      },
      accepts: [
        {
          scheme: 'exact',
          network: 'eip155:196',
          amount: '10000',
          asset: token,
          payTo: feeReceiver,
          maxTimeoutSeconds: 300,
          extra: { name: 'USD\u20AE0', version: '1' },
        },
      ],
      // The extensions the service speaks (x402Extensions.test.ts checks each).
      extensions: expect.objectContaining({ 'payment-identifier': expect.any(Object) }),
    });
  });

  it.each([
    ['GET', '/ping_service', '10000'],
    ['POST', '/preflight_payment', '50000'],
    ['POST', '/detect_duplicate', '20000'],
    ['POST', '/redact_payment_metadata', '20000'],
    ['POST', '/cafe/order/latte', '40000'],
  ])('prices %s %s at %s atomic USDT0 from the route table', async (method, path, amount) => {
    const byHash = { policyId: '1', intentHash: `0x${'ab'.repeat(32)}` };
    const body =
      path === '/preflight_payment' || path === '/detect_duplicate'
        ? byHash
        : path === '/redact_payment_metadata'
          ? { metadata: {} }
          : {};
    const init: RequestInit =
      method === 'POST'
        ? { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
        : {};
    const response = await fetch(`${stack.url}${path}`, init);
    expect(response.status).toBe(402);
    const required = decodePaymentRequiredHeader(response.headers.get('payment-required')!);
    expect(required.accepts[0].amount).toBe(amount);
  });

  it('validates before it charges: a malformed request is a 400 even with a valid payment attached', async () => {
    const payer = newPayer();
    await fund(payer, 1_000_000n);
    const required = await challengeFor('/ping_service');
    const header = await paymentHeader(
      { ...required, accepts: [{ ...required.accepts[0], amount: PREFLIGHT_PRICE.toString() }] },
      payer,
    );
    const response = await fetch(`${stack.url}/preflight_payment`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': header },
      body: JSON.stringify({ intentHash: `0x${'ab'.repeat(32)}` }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).code).toBe('POLICY_ID_REQUIRED');
    expect(await balance(payer.address)).toBe(1_000_000n);
    expect(await paymentRows(payer.address)).toEqual([]);
  });

  it('serves the menu free and lists every paid resource at /.well-known/x402', async () => {
    const menu = await fetch(`${stack.url}/cafe/menu`);
    expect(menu.status).toBe(200);
    expect(((await menu.json()) as any).items[0]).toMatchObject({
      sku: 'latte',
      price: { amountAtomic: '40000', amountDisplay: '0.04' },
    });

    const discovery = (await (await fetch(`${stack.url}/.well-known/x402`)).json()) as any;
    expect(discovery).toMatchObject({
      x402Version: 2,
      network: 'eip155:196',
      payTo: feeReceiver,
      asset: { address: token, decimals: 6 },
    });
    const byPath = Object.fromEntries(
      discovery.resources.map((resource: any) => [`${resource.method} ${resource.path}`, resource]),
    );
    expect(byPath['GET /ping_service'].price).toEqual({
      amountAtomic: '10000',
      amountDisplay: '0.01',
      asset: 'USDT0',
      network: 'eip155:196',
    });
    expect(byPath['POST /preflight_payment'].accepts[0]).toMatchObject({
      amount: '50000',
      payTo: feeReceiver,
      asset: token,
      maxTimeoutSeconds: 300,
    });
    expect(byPath['POST /cafe/order/latte'].price.amountAtomic).toBe('40000');
    expect(byPath['POST /create_spend_intent']).toBeUndefined();
    expect(byPath['GET /cafe/menu']).toBeUndefined();
  });
});

describe('the official client pays', () => {
  it('GET /ping_service: 200, PAYMENT-RESPONSE, the price moved on chain, a SERVICE_FEE group booked', async () => {
    const payer = newPayer();
    await fund(payer, 1_000_000n);
    const receiverBefore = await balance(feeReceiver);
    const treasuryBefore = await accountBalance(
      `TREASURY:eip155:196|${token.toLowerCase()}:fee-receiver`,
    );

    const response = await officialFetch(payer, { network: 'eip155:196', asset: token })(
      `${stack.url}/ping_service`,
    );
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toEqual({ ok: true, tool: 'ping_service', ts: expect.any(String) });
    const receipt = decodePaymentResponseHeader(response.headers.get('payment-response')!);
    expect(receipt).toMatchObject({
      success: true,
      network: 'eip155:196',
      payer: payer.address.toLowerCase(),
    });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);

    expect(await balance(payer.address)).toBe(1_000_000n - PING_PRICE);
    expect(await balance(feeReceiver)).toBe(receiverBefore + PING_PRICE);
    const [payment] = await paymentRows(payer.address);
    expect(payment.state).toBe('ANSWERED');
    expect(await serviceFeeGroups(payment.payment_id)).toEqual([
      { group_id: payment.fee_group_id, kind: 'SERVICE_FEE' },
    ]);
    expect(await accountBalance(`TREASURY:eip155:196|${token.toLowerCase()}:fee-receiver`)).toBe(
      treasuryBefore + PING_PRICE,
    );
    expect(
      await accountBalance(`FEE_REVENUE:eip155:196|${token.toLowerCase()}:ping_service`),
    ).toBeLessThanOrEqual(-PING_PRICE);
  });

  it('POST /preflight_payment: the decision comes back after payment', async () => {
    const owner = newPayer();
    const created = await postJson(
      stack.url,
      '/create_spend_policy',
      { policy: policyDocument({ owner: owner.address }) },
      stack.adminToken,
    );
    expect(created.status).toBe(201);
    const { policyId, policyHash } = created.body;
    const intent = wireIntent(
      { policyId, policyHash },
      {
        token,
        deadline: formatIsoSeconds(Math.floor(Date.now() / 1000) + 3600),
      },
    );
    const payer = newPayer();
    await fund(payer, 1_000_000n);
    const response = await officialFetch(payer, { network: 'eip155:196', asset: token })(
      `${stack.url}/preflight_payment`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ policyId, intent }),
      },
    );
    expect(response.status).toBe(200);
    const decision = (await response.json()) as any;
    expect(decision.policyId).toBe(policyId);
    expect(decision.ruleTrace).toHaveLength(14);
    expect(decodePaymentResponseHeader(response.headers.get('payment-response')!).success).toBe(
      true,
    );
    expect(await balance(payer.address)).toBe(1_000_000n - PREFLIGHT_PRICE);
  });

  it('POST /cafe/order/latte: a demo voucher, paid exactly the latte price', async () => {
    const payer = newPayer();
    await fund(payer, 100_000n);
    const response = await officialFetch(payer, { network: 'eip155:196', asset: token })(
      `${stack.url}/cafe/order/latte`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ cupName: 'Ada' }),
      },
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      orderId: expect.stringMatching(/^ord_[0-9a-f]{24}$/),
      sku: 'latte',
      cupName: 'Ada',
      amountPaid: '0.04',
      currency: 'USDT0',
      status: 'FULFILLED',
      voucherCode: expect.stringMatching(/^LATTE-[0-9A-Z]{5}-[0-9A-Z]{5}$/),
      fulfillment: 'DEMO_VOUCHER',
    });
    expect(await balance(payer.address)).toBe(100_000n - LATTE_PRICE);
  });

  it('accepts X-PAYMENT as an alias of PAYMENT-SIGNATURE', async () => {
    const payer = newPayer();
    await fund(payer, 100_000n);
    const response = await paidPing(
      await paymentHeader(await challengeFor('/ping_service'), payer),
      'x-payment',
    );
    expect(response.status).toBe(200);
    expect(await balance(payer.address)).toBe(100_000n - PING_PRICE);
  });
});

describe('refused payments move no money', () => {
  const otherAddress = privateKeyToAccount(generatePrivateKey()).address;

  async function expectRefused(
    header: string,
    payer: Address,
    reason: string,
    fundedWith: bigint,
  ): Promise<void> {
    const receiverBefore = await balance(feeReceiver);
    const response = await paidPing(header);
    expect(response.status).toBe(402);
    expect(await response.text()).toBe('{}');
    const required = decodePaymentRequiredHeader(response.headers.get('payment-required')!);
    expect(required.error).toBe(reason);
    expect(await balance(payer)).toBe(fundedWith);
    expect(await balance(feeReceiver)).toBe(receiverBefore);
    expect(await paymentRows(payer)).toEqual([]);
  }

  it.each<[string, (required: PaymentRequired) => Tweaks, string]>([
    [
      'wrong amount',
      () => ({ accepted: { amount: '5000' }, value: 5_000n }),
      'invalid_exact_evm_payload_authorization_value_mismatch',
    ],
    [
      'signed amount differs from the offer',
      () => ({ value: 5_000n }),
      'invalid_exact_evm_payload_authorization_value_mismatch',
    ],
    [
      'wrong payTo',
      () => ({ accepted: { payTo: otherAddress }, to: otherAddress }),
      'invalid_exact_evm_recipient_mismatch',
    ],
    ['wrong asset', () => ({ accepted: { asset: otherAddress } }), 'invalid_payment_requirements'],
    ['wrong network', () => ({ accepted: { network: 'eip155:8453' } }), 'invalid_network'],
    [
      'expired validBefore',
      () => ({ validBefore: BigInt(Math.floor(Date.now() / 1000) - 60) }),
      'invalid_exact_evm_payload_authorization_valid_before',
    ],
    [
      'bad signature',
      () => ({ signer: privateKeyToAccount(generatePrivateKey()) }),
      'invalid_exact_evm_signature',
    ],
    ['signature for another chain', () => ({ chainId: 8453 }), 'invalid_exact_evm_signature'],
  ])('%s → 402 with the reason', async (_name, tweaks, reason) => {
    const payer = newPayer();
    await fund(payer, 1_000_000n);
    const required = await challengeFor('/ping_service');
    await expectRefused(
      await paymentHeader(required, payer, tweaks(required)),
      payer.address,
      reason,
      1_000_000n,
    );
  });

  it('insufficient balance → 402 with the reason', async () => {
    const payer = newPayer();
    await fund(payer, PING_PRICE - 1n);
    await expectRefused(
      await paymentHeader(await challengeFor('/ping_service'), payer),
      payer.address,
      'invalid_exact_evm_insufficient_balance',
      PING_PRICE - 1n,
    );
  });

  it('a nonce already used on chain → 402 with the reason', async () => {
    const payer = newPayer();
    await fund(payer, 1_000_000n);
    // The payer spends the authorization nonce elsewhere first (1 unit to another address).
    const nonce = randomAuthorizationNonce();
    const relayer = createChainWalletClient(funding(), devnet.keys.relayer.account, POLLING);
    const elsewhere = await signTransferWithAuthorization({
      publicClient,
      signer: payer,
      token,
      to: otherAddress,
      valueAtomic: 1n,
      validBeforeUnixS: BigInt(Math.floor(Date.now() / 1000) + 300),
      nonce,
    });
    await submitTransferWithAuthorization({ publicClient, relayer, authorization: elsewhere });
    await expectRefused(
      await paymentHeader(await challengeFor('/ping_service'), payer, { nonce }),
      payer.address,
      'invalid_exact_evm_nonce_already_used',
      1_000_000n - 1n,
    );
  });

  it('an undecodable header → 402 invalid_payload', async () => {
    const response = await paidPing('not-base64-json!');
    expect(response.status).toBe(402);
    expect(decodePaymentRequiredHeader(response.headers.get('payment-required')!).error).toBe(
      'invalid_payload',
    );
  });
});

describe('one authorization pays for one call', () => {
  it('20 concurrent copies of one payment: one settlement, one fee group, the same answer 20 times', async () => {
    const payer = newPayer();
    await fund(payer, 1_000_000n);
    const header = await paymentHeader(await challengeFor('/ping_service'), payer);
    const responses = await Promise.all(Array.from({ length: 20 }, () => paidPing(header)));
    const bodies = await Promise.all(responses.map((response) => response.text()));
    expect(responses.map((response) => response.status)).toEqual(Array(20).fill(200));
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0])).toMatchObject({ ok: true, tool: 'ping_service' });
    expect(
      new Set(responses.map((response) => response.headers.get('payment-response'))).size,
    ).toBe(1);
    expect(await balance(payer.address)).toBe(1_000_000n - PING_PRICE);
    const rows = await paymentRows(payer.address);
    expect(rows).toHaveLength(1);
    expect(await serviceFeeGroups(rows[0].payment_id)).toHaveLength(1);

    // Later presentations replay the recorded answer too.
    const again = await paidPing(header);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(bodies[0]);
  });

  it('a paid authorization presented for a different request is refused as used', async () => {
    const payer = newPayer();
    await fund(payer, 1_000_000n);
    const required = await challengeFor('/ping_service');
    const header = await paymentHeader(required, payer);
    expect((await paidPing(header)).status).toBe(200);
    const other = await fetch(`${stack.url}/ping_service?again=1`, {
      headers: { 'payment-signature': header },
    });
    expect(other.status).toBe(402);
    expect(decodePaymentRequiredHeader(other.headers.get('payment-required')!).error).toBe(
      'invalid_exact_evm_nonce_already_used',
    );
    expect(await balance(payer.address)).toBe(1_000_000n - PING_PRICE);
  });
});

describe('ambiguous settlement', () => {
  it('parks the fee in SUSPENSE and answers 503; once the chain confirms, the same header gets the answer, charged once', async () => {
    const payer = newPayer();
    await fund(payer, 1_000_000n);
    const header = await paymentHeader(await challengeFor('/ping_service'), payer);
    const anvil = createAnvilTestClient(funding());
    await anvil.setAutomine(false);
    let first: Response;
    try {
      first = await paidPing(header);
    } finally {
      await anvil.setAutomine(true);
    }
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('5');
    const error = (await first.json()) as any;
    expect(error).toMatchObject({ code: 'PAYMENT_SETTLEMENT_PENDING', retryable: true });
    expect(error.details.transaction).toMatch(/^0x[0-9a-f]{64}$/);

    const [parked] = await paymentRows(payer.address);
    expect(parked.state).toBe('PENDING');
    const suspense = `SUSPENSE:eip155:196|${token.toLowerCase()}:${parked.payment_id}`;
    expect(await accountBalance(suspense)).toBe(PING_PRICE);
    expect(await serviceFeeGroups(parked.payment_id)).toEqual([
      { group_id: parked.fee_group_id, kind: 'SERVICE_FEE' },
    ]);

    // The chain confirms the transaction that was already sent; nothing is re-signed or re-sent.
    await anvil.mine({ blocks: 1 });
    const second = await paidPing(header);
    expect(second.status).toBe(200);
    expect(await second.json()).toMatchObject({ ok: true, tool: 'ping_service' });
    expect(decodePaymentResponseHeader(second.headers.get('payment-response')!).transaction).toBe(
      error.details.transaction,
    );
    expect(await accountBalance(suspense)).toBe(0n);
    expect((await serviceFeeGroups(parked.payment_id)).map((group) => group.kind)).toEqual([
      'SERVICE_FEE',
      'SUSPENSE_MOVE',
    ]);
    expect(await balance(payer.address)).toBe(1_000_000n - PING_PRICE);

    const third = await paidPing(header);
    expect(third.status).toBe(200);
    expect(await balance(payer.address)).toBe(1_000_000n - PING_PRICE);
  });

  it('the reconciler clears a parked payment from chain events without the client', async () => {
    const payer = newPayer();
    await fund(payer, 1_000_000n);
    const header = await paymentHeader(await challengeFor('/ping_service'), payer);
    const anvil = createAnvilTestClient(funding());
    await anvil.setAutomine(false);
    try {
      expect((await paidPing(header)).status).toBe(503);
    } finally {
      await anvil.setAutomine(true);
    }
    await anvil.mine({ blocks: 1 });
    const report = await stack.stack.gateway.reconciler!.sweep();
    expect(report.confirmed).toBeGreaterThanOrEqual(1);
    const [payment] = await paymentRows(payer.address);
    expect(payment.state).toBe('SETTLED');
    expect(
      await accountBalance(`SUSPENSE:eip155:196|${token.toLowerCase()}:${payment.payment_id}`),
    ).toBe(0n);
    // The client comes back later: the call runs now, once.
    const later = await paidPing(header);
    expect(later.status).toBe(200);
    expect(await balance(payer.address)).toBe(1_000_000n - PING_PRICE);
  });
});

describe('the books after every payment above', () => {
  it('trial balance zero per asset; on both chains the fee receiver holds exactly what the ledger says', async () => {
    for (const line of await trialBalanceLines(stack))
      expect(line).toMatchObject({ netAtomic: '0', balanced: true });
    const drift = await feeReceiverDrift(stack, devnet);
    expect(drift).toHaveLength(2);
    for (const chain of drift) expect(chain.onchainAtomic).toBe(chain.ledgerAtomic);
    expect(drift[0].ledgerAtomic).toBeGreaterThan(0n);
  });
});
