// POST /consumer/intents/:intentId/fund end to end on the devnet (anvil eip155:196, the EIP-3009
// USD₮0): priced per intent (its funding amount, paid to the funding treasury), refusals before
// any 402, the official client paying, the FUNDING group consuming the reservation with the
// intent FUNDED, replay without a second charge, one payment per intent, an unconfirmed
// settlement parked and booked once the chain shows it, a payment for an intent that expired
// meanwhile booked and owed back. Last, the books.
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { devnetConsumerRails } from '../../devnet/consumerRails';
import { signedPaymentHeader } from '../../devnet/agents/x402Payer';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import {
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
  type ChainPublicClient,
} from '../../platform/chain/clients';
import { mintToken, readTokenBalance } from '../../platform/chain/tokens';
import type { ConsumerRails } from '../../subgraphs/kit';
import { getConsumerIntent } from '../../subgraphs/intent/consumer/store';
import { transitionConsumerIntent } from '../../subgraphs/intent/consumer/transition';
import {
  FUNDING_AMOUNT,
  type SeededPolicy,
  seedAwaitingFunding,
  seedConsumerPolicy,
} from '../support/consumerSeed';
import { startTestStack, type TestStack } from '../support/stack';
import { trialBalanceLines } from '../support/x402Books';
import { officialFetch } from '../support/officialClient';

const POLLING = { pollingIntervalMs: 20 };

let devnet: DevnetChains;
let rails: ConsumerRails;
let stack: TestStack;
let publicClient: ChainPublicClient;
let token: Address;
let treasury: Address;
let ledgerAsset: string;
let consumer: PrivateKeyAccount;
let policy: SeededPolicy & { wallet: string };

function newAccount(): PrivateKeyAccount {
  return privateKeyToAccount(generatePrivateKey());
}

async function fundWallet(account: { address: Address }, amountAtomic: bigint): Promise<void> {
  const minter = createChainWalletClient(
    devnet.info.chains.funding,
    devnet.keys.deployer.account,
    POLLING,
  );
  await mintToken({ publicClient, minter, token, to: account.address, amountAtomic });
}

function balance(address: Address): Promise<bigint> {
  return readTokenBalance(publicClient, token, address);
}

function fundUrl(intentId: string): string {
  return `${stack.url}/consumer/intents/${intentId}/fund`;
}

function fundInit(session: string | null, payment?: string): RequestInit {
  return {
    method: 'POST',
    headers: {
      ...(session === null ? {} : { authorization: `Bearer ${session}` }),
      ...(payment === undefined ? {} : { 'payment-signature': payment }),
    },
  };
}

async function fund(intentId: string, session: string | null, payment?: string) {
  const response = await fetch(fundUrl(intentId), fundInit(session, payment));
  return { response, body: (await response.json()) as any };
}

async function challengeFor(intentId: string): Promise<PaymentRequired> {
  const { response } = await fund(intentId, policy.session);
  expect(response.status).toBe(402);
  return decodePaymentRequiredHeader(response.headers.get('payment-required')!);
}

async function query<T>(sql: string, params: unknown[]): Promise<T[]> {
  return (await stack.db.pool.query(sql, params)).rows as T[];
}

async function accountBalance(account: string): Promise<bigint> {
  const [row] = await query<{ balance: string }>(
    'SELECT COALESCE(sum(amount), 0)::text AS balance FROM ledger.entries WHERE account_id = $1',
    [account],
  );
  return BigInt(row!.balance);
}

async function groupsOf(intentId: string) {
  return query<{ group_id: string; kind: string; asset: string; idempotency_key: string }>(
    `SELECT group_id, kind::text, asset, idempotency_key FROM ledger.groups
      WHERE idempotency_key IN ($1, $2, $3) ORDER BY seq`,
    [`funding:${intentId}`, `refund-owed:${intentId}`, `refund-paid:${intentId}`],
  );
}

async function entriesOf(groupId: string) {
  return query<{ account_id: string; amount: string }>(
    'SELECT account_id, amount::text AS amount FROM ledger.entries WHERE group_id = $1 ORDER BY amount DESC',
    [groupId],
  );
}

async function paymentsOf(intentId: string) {
  return query<{
    payment_id: string;
    state: string;
    purpose: string;
    fee_group_id: string | null;
    funding_group_id: string | null;
    refund_group_id: string | null;
    payer: string;
  }>(`SELECT * FROM ledger.service_payments WHERE intent_ref = $1 ORDER BY created_at`, [intentId]);
}

async function reservationState(reservationId: string): Promise<string> {
  const [row] = await query<{ state: string }>(
    'SELECT state FROM intent.reservations WHERE reservation_id = $1',
    [reservationId],
  );
  return row!.state;
}

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
  rails = devnetConsumerRails(devnet.info, {});
  publicClient = createChainPublicClient(devnet.info.chains.funding, POLLING);
  token = rails.funding.token;
  treasury = rails.funding.treasury;
  ledgerAsset = `eip155:196|${token.toLowerCase()}`;
  stack = await startTestStack({
    x402: { devnet, settleTimeoutMs: 1_500 },
    // The execution worker only pays refunds owed here; its rounds are stepped by hand.
    consumer: {
      rails,
      execution: {
        treasuryKey: devnet.keys.treasury,
        relayerKey: devnet.keys.relayer,
        intervalMs: 0,
        wakeOnNotify: false,
      },
    },
  });
  consumer = newAccount();
  await fundWallet(consumer, 10_000_000n);
  const seeded = await seedConsumerPolicy(stack, rails, consumer);
  policy = { ...seeded, wallet: consumer.address };
});

afterAll(async () => {
  await stack?.stop();
  await devnet?.stop();
});

describe('before any payment', () => {
  it('unpaid: 402 offering exactly the funding amount in USD₮0 to the funding treasury, not the fee receiver', async () => {
    const intent = await seedAwaitingFunding(stack, rails, policy);
    const { response, body } = await fund(intent.intentId, policy.session);
    expect(response.status).toBe(402);
    expect(body).toEqual({});
    const required = decodePaymentRequiredHeader(response.headers.get('payment-required')!);
    expect(required.accepts).toHaveLength(1);
    expect(required.accepts[0]).toMatchObject({
      scheme: 'exact',
      network: 'eip155:196',
      amount: FUNDING_AMOUNT.toString(),
      maxTimeoutSeconds: 300,
    });
    expect(required.accepts[0]!.asset.toLowerCase()).toBe(token.toLowerCase());
    expect(required.accepts[0]!.payTo.toLowerCase()).toBe(treasury.toLowerCase());
    expect(required.accepts[0]!.payTo.toLowerCase()).not.toBe(
      devnet.info.addresses.feeReceiver.toLowerCase(),
    );
    expect(required.resource.url).toBe(`http://127.0.0.1/consumer/intents/${intent.intentId}/fund`);
  });

  it('no session: 401 AUTH_REQUIRED; another policy’s session: 404 CONSUMER_INTENT_NOT_FOUND; a malformed id: 400', async () => {
    const intent = await seedAwaitingFunding(stack, rails, policy);
    const anonymous = await fund(intent.intentId, null);
    expect([anonymous.response.status, anonymous.body.code]).toEqual([401, 'AUTH_REQUIRED']);

    const stranger = newAccount();
    const other = await seedConsumerPolicy(stack, rails, stranger);
    const foreign = await fund(intent.intentId, other.session);
    expect([foreign.response.status, foreign.body.code]).toEqual([
      404,
      'CONSUMER_INTENT_NOT_FOUND',
    ]);
    const missing = await fund(`ci_${'0'.repeat(24)}`, policy.session);
    expect([missing.response.status, missing.body.code]).toEqual([
      404,
      'CONSUMER_INTENT_NOT_FOUND',
    ]);
    const malformed = await fund('ci_nope', policy.session);
    expect([malformed.response.status, malformed.body.code]).toEqual([400, 'REQUEST_INVALID']);
    expect(foreign.response.headers.get('payment-required')).toBeNull();
    expect(await paymentsOf(intent.intentId)).toEqual([]);
  });

  it('an expired quote: 409 QUOTE_EXPIRED before any 402, and a payment header is not charged', async () => {
    const intent = await seedAwaitingFunding(stack, rails, policy, {
      quoteExpiresAt: new Date(Date.now() - 1_000),
    });
    const unpaid = await fund(intent.intentId, policy.session);
    expect([unpaid.response.status, unpaid.body.code]).toEqual([409, 'QUOTE_EXPIRED']);
    expect(unpaid.response.headers.get('payment-required')).toBeNull();

    const fresh = await seedAwaitingFunding(stack, rails, policy);
    const required = await challengeFor(fresh.intentId);
    const header = await signedPaymentHeader(required, consumer);
    const before = await balance(consumer.address);
    const paid = await fund(intent.intentId, policy.session, header);
    expect([paid.response.status, paid.body.code]).toEqual([409, 'QUOTE_EXPIRED']);
    expect(await balance(consumer.address)).toBe(before);
    expect(await paymentsOf(intent.intentId)).toEqual([]);
  });
});

describe('the official client funds an intent', () => {
  let intentId: string;
  let reservationId: string;
  let sent: string[];
  let answer: any;
  let treasuryAfter: bigint;

  it('200 with PAYMENT-RESPONSE and {intent, funding}: FUNDED, the money moved on 196, a FUNDING group consuming the reservation', async () => {
    const intent = await seedAwaitingFunding(stack, rails, policy);
    intentId = intent.intentId;
    reservationId = intent.reservationId!;
    const consumerBefore = await balance(consumer.address);
    const treasuryBefore = await balance(treasury);
    sent = [];
    const response = await officialFetch(consumer, {
      network: 'eip155:196',
      asset: token,
      sentSignatures: sent,
    })(fundUrl(intentId), fundInit(policy.session));
    expect(response.status).toBe(200);
    answer = await response.json();
    expect(sent).toHaveLength(1);
    const receipt = decodePaymentResponseHeader(response.headers.get('payment-response')!);
    expect(receipt).toMatchObject({ success: true, network: 'eip155:196' });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);

    expect(answer.intent).toMatchObject({
      intentId,
      policyId: policy.policyId,
      state: 'FUNDED',
      fundingAmount: FUNDING_AMOUNT.toString(),
    });
    expect(answer.funding).toEqual({
      paymentId: expect.stringMatching(/^pay_[0-9a-f]{24}$/),
      payer: consumer.address.toLowerCase(),
      payTo: treasury.toLowerCase(),
      network: 'eip155:196',
      asset: token.toLowerCase(),
      amount: FUNDING_AMOUNT.toString(),
      txHash: receipt.transaction,
      groupId: expect.stringMatching(/^lg_[0-9a-f]{24}$/),
      fundedAt: expect.any(String),
    });
    expect(answer.intent.funding).toEqual(answer.funding);

    expect(await balance(consumer.address)).toBe(consumerBefore - FUNDING_AMOUNT);
    treasuryAfter = await balance(treasury);
    expect(treasuryAfter).toBe(treasuryBefore + FUNDING_AMOUNT);

    const groups = await groupsOf(intentId);
    expect(groups).toEqual([
      {
        group_id: answer.funding.groupId,
        kind: 'FUNDING',
        asset: ledgerAsset,
        idempotency_key: `funding:${intentId}`,
      },
    ]);
    const entries = await entriesOf(answer.funding.groupId);
    expect(entries).toEqual([
      { account_id: `TREASURY:${ledgerAsset}:float`, amount: FUNDING_AMOUNT.toString() },
      {
        account_id: `USER_OBLIGATION:${ledgerAsset}:${policy.policyId}`,
        amount: (-FUNDING_AMOUNT).toString(),
      },
    ]);
    expect(entries.reduce((sum, entry) => sum + BigInt(entry.amount), 0n)).toBe(0n);
    expect(await reservationState(reservationId)).toBe('CONSUMED');
    expect(await paymentsOf(intentId)).toEqual([
      expect.objectContaining({
        payment_id: answer.funding.paymentId,
        state: 'ANSWERED',
        purpose: 'FUNDING',
        fee_group_id: answer.funding.groupId,
        funding_group_id: answer.funding.groupId,
        refund_group_id: null,
      }),
    ]);
    const [event] = await query<{ from_state: string; to_state: string }>(
      `SELECT from_state, to_state FROM intent.consumer_intent_events WHERE intent_id = $1 ORDER BY event_id DESC LIMIT 1`,
      [intentId],
    );
    expect(event).toEqual({ from_state: 'AWAITING_FUNDING', to_state: 'FUNDED' });
  });

  it('the same payment header again: the same answer, no second transfer', async () => {
    const again = await fund(intentId, policy.session, sent[0]);
    expect(again.response.status).toBe(200);
    expect(again.body).toEqual(answer);
    expect(
      decodePaymentResponseHeader(again.response.headers.get('payment-response')!),
    ).toMatchObject({
      transaction: answer.funding.txHash,
    });
    expect(await balance(treasury)).toBe(treasuryAfter);
    expect(await paymentsOf(intentId)).toHaveLength(1);
    expect(await groupsOf(intentId)).toHaveLength(1);
  });

  it('a second, different payment for the FUNDED intent: 409 INTENT_NOT_FUNDABLE before any charge', async () => {
    const unpaid = await fund(intentId, policy.session);
    expect([unpaid.response.status, unpaid.body.code]).toEqual([409, 'INTENT_NOT_FUNDABLE']);
    expect(unpaid.response.headers.get('payment-required')).toBeNull();

    const other = await seedAwaitingFunding(stack, rails, policy);
    const header = await signedPaymentHeader(await challengeFor(other.intentId), consumer);
    const consumerBefore = await balance(consumer.address);
    const second = await fund(intentId, policy.session, header);
    expect([second.response.status, second.body.code]).toEqual([409, 'INTENT_NOT_FUNDABLE']);
    expect(await balance(consumer.address)).toBe(consumerBefore);
    expect(await balance(treasury)).toBe(treasuryAfter);
    expect(await paymentsOf(intentId)).toHaveLength(1);
  });
});

describe('one payment per intent', () => {
  it('two different authorizations presented together: one funds the intent, the other is refused uncharged', async () => {
    const intent = await seedAwaitingFunding(stack, rails, policy);
    const required = await challengeFor(intent.intentId);
    const payers = [newAccount(), newAccount()];
    for (const payer of payers) await fundWallet(payer, 1_000_000n);
    const headers = await Promise.all(payers.map((payer) => signedPaymentHeader(required, payer)));
    const answers = await Promise.all(
      headers.map((header) => fund(intent.intentId, policy.session, header)),
    );
    const statuses = answers.map((answer) => answer.response.status).sort();
    expect(statuses).toEqual([200, 409]);
    const balances = await Promise.all(payers.map((payer) => balance(payer.address)));
    expect(balances.sort()).toEqual([1_000_000n - FUNDING_AMOUNT, 1_000_000n].sort());
    const payments = await paymentsOf(intent.intentId);
    expect(payments.map((payment) => payment.state)).toEqual(['ANSWERED']);
    expect(await groupsOf(intent.intentId)).toHaveLength(1);
  });
});

describe('a settlement the chain has not confirmed', () => {
  async function parkedPayment(intentId: string) {
    const header = await signedPaymentHeader(await challengeFor(intentId), consumer);
    const anvil = createAnvilTestClient(devnet.info.chains.funding);
    await anvil.setAutomine(false);
    let first: Awaited<ReturnType<typeof fund>>;
    try {
      first = await fund(intentId, policy.session, header);
    } finally {
      await anvil.setAutomine(true);
    }
    expect([first.response.status, first.body.code]).toEqual([503, 'PAYMENT_SETTLEMENT_PENDING']);
    const [parked] = await paymentsOf(intentId);
    expect(parked).toMatchObject({ state: 'PENDING', purpose: 'FUNDING', funding_group_id: null });
    const suspense = `SUSPENSE:${ledgerAsset}:${parked!.payment_id}`;
    expect(await accountBalance(suspense)).toBe(FUNDING_AMOUNT);
    return { header, anvil, parked: parked!, suspense, pendingTx: first.body.details.transaction };
  }

  it('is parked in SUSPENSE and answered 503, the intent still AWAITING_FUNDING; once mined, the same header funds it, charged once', async () => {
    const intent = await seedAwaitingFunding(stack, rails, policy);
    const consumerBefore = await balance(consumer.address);
    const { header, anvil, parked, suspense, pendingTx } = await parkedPayment(intent.intentId);
    const waiting = await fund(intent.intentId, policy.session);
    expect(waiting.response.status).toBe(402);

    await anvil.mine({ blocks: 1 });
    const paid = await fund(intent.intentId, policy.session, header);
    expect(paid.response.status).toBe(200);
    expect(paid.body.intent.state).toBe('FUNDED');
    expect(paid.body.funding.txHash).toBe(pendingTx);
    expect(await accountBalance(suspense)).toBe(0n);
    const [payment] = await paymentsOf(intent.intentId);
    expect(payment).toMatchObject({
      state: 'ANSWERED',
      fee_group_id: parked.fee_group_id,
      funding_group_id: paid.body.funding.groupId,
    });
    expect(await reservationState(intent.reservationId!)).toBe('CONSUMED');
    expect(await balance(consumer.address)).toBe(consumerBefore - FUNDING_AMOUNT);
    const again = await fund(intent.intentId, policy.session, header);
    expect(again.body).toEqual(paid.body);
    expect(await balance(consumer.address)).toBe(consumerBefore - FUNDING_AMOUNT);
  });

  it('a payment that lands after the intent expired is booked and owed back, never lost', async () => {
    const intent = await seedAwaitingFunding(stack, rails, policy);
    const consumerBefore = await balance(consumer.address);
    const { header, anvil, suspense } = await parkedPayment(intent.intentId);
    // The quote lapses and the intent expires while the settlement is unconfirmed.
    const expired = await transitionConsumerIntent(
      stack.db.pool,
      intent.intentId,
      'AWAITING_FUNDING',
      'EXPIRED',
      { now: new Date(), reason: 'quote expired' },
    );
    expect(expired?.state).toBe('EXPIRED');
    await anvil.mine({ blocks: 1 });

    const late = await fund(intent.intentId, policy.session, header);
    expect([late.response.status, late.body.code]).toEqual([409, 'INTENT_NOT_FUNDABLE']);
    expect(late.response.headers.get('payment-response')).not.toBeNull();
    expect(late.body.details.funding.refundOwed).toMatchObject({
      amount: FUNDING_AMOUNT.toString(),
    });
    expect(await balance(consumer.address)).toBe(consumerBefore - FUNDING_AMOUNT);
    expect(await accountBalance(suspense)).toBe(0n);
    expect((await groupsOf(intent.intentId)).map((group) => group.kind)).toEqual([
      'FUNDING',
      'REFUND',
    ]);
    const [payment] = await paymentsOf(intent.intentId);
    expect(payment!.refund_group_id).toMatch(/^lg_/);
    expect(await accountBalance(`REFUND_PAYABLE:${ledgerAsset}:${policy.policyId}`)).toBeLessThan(
      0n,
    );
    const again = await fund(intent.intentId, policy.session, header);
    expect(again.body).toEqual(late.body);
    expect(await balance(consumer.address)).toBe(consumerBefore - FUNDING_AMOUNT);

    // The worker pays what is owed back on chain; the intent stays EXPIRED, its record says so.
    await stack.stack.consumerExecution!.runOnce();
    expect(await balance(consumer.address)).toBe(consumerBefore);
    expect((await groupsOf(intent.intentId)).map((group) => group.kind)).toEqual([
      'FUNDING',
      'REFUND',
      'REFUND',
    ]);
    expect(await accountBalance(`REFUND_PAYABLE:${ledgerAsset}:${policy.policyId}`)).toBe(0n);
    const after = await getConsumerIntent(stack.db.pool, intent.intentId);
    expect(after?.state).toBe('EXPIRED');
    expect(after?.refund).toMatchObject({
      amount: FUNDING_AMOUNT.toString(),
      to: consumer.address.toLowerCase(),
      txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      refundedAt: expect.any(String),
    });
    // A second round finds nothing more to pay.
    await stack.stack.consumerExecution!.runOnce();
    expect(await balance(consumer.address)).toBe(consumerBefore);
  });
});

describe('the books after every payment above', () => {
  it('trial balance zero per asset', async () => {
    const lines = await trialBalanceLines(stack);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatchObject({ netAtomic: '0', balanced: true });
  });
});
