// A settlement whose answer was lost (issue 27, item 1), end to end on the devnet (anvil eip155:196)
// with the official x402 client: the service settles through an RPC proxy on 127.0.0.1 that hands
// the one `eth_sendRawTransaction` to the chain and answers the service 502 (automine off, so the
// transfer waits in the mempool). The facilitator then reports a failure with no transaction hash;
// since the transaction was handed to the node, nothing proves it unspent: the claim is parked, the
// client gets 503 PAYMENT_SETTLEMENT_PENDING (never a fresh 402 to pay again), the same header stays
// pending while the transfer waits, and once it is mined the reconciler books it and the same header
// gets the call. For a fee and for the funding of a consumer intent (whose one live funding slot
// stays taken, its treasury moving on chain as the ledger booked it). Last, the books: nobody paid
// twice, every asset balanced, the ledger's fee receiver equal to the chain.
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import { devnetConsumerRails } from '../../devnet/consumerRails';
import {
  type AnvilTestClient,
  type ChainPublicClient,
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
} from '../../platform/chain/clients';
import { mintToken, readTokenBalance } from '../../platform/chain/tokens';
import { accountId, FLOAT_REF } from '../../subgraphs/ledger';
import type { ConsumerRails } from '../../subgraphs/kit';
import {
  FUNDING_AMOUNT,
  type SeededPolicy,
  seedAwaitingFunding,
  seedConsumerPolicy,
} from '../support/consumerSeed';
import { type LossyRpc, startLossyRpc } from '../support/lossyRpc';
import { officialFetch } from '../support/officialClient';
import { startTestStack, type TestStack } from '../support/stack';
import { feeReceiverDrift, trialBalanceLines } from '../support/x402Books';

const POLLING = { pollingIntervalMs: 20 };
const PING_PRICE = 10_000n;
const FUNDED = 1_000_000n;

let devnet: DevnetChains;
let proxy: LossyRpc;
let rails: ConsumerRails;
let stack: TestStack;
let publicClient: ChainPublicClient;
let anvil: AnvilTestClient;
let token: Address;

function funding() {
  return devnet.info.chains.funding;
}

async function newPayer(): Promise<PrivateKeyAccount> {
  const payer = privateKeyToAccount(generatePrivateKey());
  const minter = createChainWalletClient(funding(), devnet.keys.deployer.account, POLLING);
  await mintToken({ publicClient, minter, token, to: payer.address, amountAtomic: FUNDED });
  return payer;
}

function balance(address: Address): Promise<bigint> {
  return readTokenBalance(publicClient, token, address);
}

async function paymentsBy(payer: Address) {
  const { rows } = await stack.db.pool.query<{ payment_id: string; state: string }>(
    'SELECT payment_id, state FROM ledger.service_payments WHERE payer = $1 ORDER BY created_at',
    [payer.toLowerCase()],
  );
  return rows;
}

async function pendingAnswer(response: Response): Promise<Record<string, unknown>> {
  const body = (await response.json()) as { code?: string; details?: Record<string, unknown> };
  expect([response.status, body.code]).toEqual([503, 'PAYMENT_SETTLEMENT_PENDING']);
  expect(response.headers.get('payment-required')).toBeNull();
  return body.details!;
}

/** Runs `present` with automine off and the next send's answer lost; the transfer waits in the mempool. */
async function withLostSend<T>(present: () => Promise<T>): Promise<T> {
  await anvil.setAutomine(false);
  proxy.loseSends(1);
  try {
    const result = await present();
    expect(proxy.lost).toBeGreaterThan(0);
    return result;
  } finally {
    proxy.loseSends(0);
  }
}

/** The funding treasury on chain and in the ledger (TREASURY:<asset>:float). */
async function fundingTreasury(): Promise<{ chain: bigint; ledger: bigint }> {
  const account = accountId('TREASURY', `${funding().caip2}|${token.toLowerCase()}`, FLOAT_REF);
  const { rows } = await stack.db.pool.query<{ balance: string }>(
    'SELECT COALESCE(sum(amount), 0)::text AS balance FROM ledger.entries WHERE account_id = $1',
    [account],
  );
  return { chain: await balance(rails.funding.treasury), ledger: BigInt(rows[0]!.balance) };
}

async function mineAndReconcile(): Promise<void> {
  await anvil.mine({ blocks: 1 });
  await anvil.setAutomine(true);
  await stack.stack.gateway.reconciler!.sweep();
}

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
  proxy = await startLossyRpc(funding().rpcUrl);
  rails = devnetConsumerRails(devnet.info, {});
  publicClient = createChainPublicClient(funding(), POLLING);
  anvil = createAnvilTestClient(funding());
  token = funding().token.address;
  stack = await startTestStack({
    x402: { devnet, settleTimeoutMs: 4_000, rpcUrl: proxy.url },
    consumer: { rails },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await proxy?.close();
  await devnet?.stop();
});

describe('a fee whose settlement answer was lost', () => {
  it('503 pending (no fresh 402), the same header stays pending, then the reconciler books it once mined and the same header gets the call: paid once', async () => {
    const payer = await newPayer();
    const sent: string[] = [];
    const pay = officialFetch(payer, { network: 'eip155:196', asset: token, sentSignatures: sent });
    const ping = `${stack.url}/ping_service`;
    const presented = (header: string) => fetch(ping, { headers: { 'payment-signature': header } });

    await withLostSend(async () => {
      await pendingAnswer(await pay(ping));
      expect(sent).toHaveLength(1);
      // The transfer still waits in the mempool: the same authorization stays pending.
      await pendingAnswer(await presented(sent[0]!));
      const [parked] = await paymentsBy(payer.address);
      expect(parked?.state).toBe('PENDING');
    });
    await mineAndReconcile();
    expect((await paymentsBy(payer.address)).map((row) => row.state)).toEqual(['SETTLED']);

    const answered = await presented(sent[0]!);
    expect(answered.status).toBe(200);
    const receipt = decodePaymentResponseHeader(answered.headers.get('payment-response')!);
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const again = await presented(sent[0]!);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(await answered.json());
    expect(await balance(payer.address)).toBe(FUNDED - PING_PRICE);
    expect(await paymentsBy(payer.address)).toHaveLength(1);
  });
});

describe('the funding of a consumer intent whose settlement answer was lost', () => {
  let policy: SeededPolicy & { wallet: string };
  let consumer: PrivateKeyAccount;

  beforeAll(async () => {
    consumer = await newPayer();
    policy = { ...(await seedConsumerPolicy(stack, rails, consumer)), wallet: consumer.address };
  });

  it('503 pending; the slot stays taken (a new authorization is 409 uncharged); once mined the intent is FUNDED by the first payment, charged once', async () => {
    const intent = await seedAwaitingFunding(stack, rails, policy);
    const fundUrl = `${stack.url}/consumer/intents/${intent.intentId}/fund`;
    const init = { method: 'POST', headers: { authorization: `Bearer ${policy.session}` } };
    const sent: string[] = [];
    const pay = officialFetch(consumer, {
      network: 'eip155:196',
      asset: token,
      sentSignatures: sent,
    });
    const presented = (header: string) =>
      fetch(fundUrl, { ...init, headers: { ...init.headers, 'payment-signature': header } });
    const before = await balance(consumer.address);
    const treasuryBefore = await fundingTreasury();

    await withLostSend(async () => {
      await pendingAnswer(await pay(fundUrl, init));
      expect(sent).toHaveLength(1);
      await pendingAnswer(await presented(sent[0]!));
      // The consumer's client tries again with a fresh authorization: refused before any charge.
      const second = await pay(fundUrl, init);
      expect(second.status).toBe(409);
      expect(((await second.json()) as { code: string }).code).toBe('INTENT_NOT_FUNDABLE');
    });
    await mineAndReconcile();

    const funded = await presented(sent[0]!);
    expect(funded.status).toBe(200);
    const body = (await funded.json()) as { intent: { state: string } };
    expect(body.intent.state).toBe('FUNDED');
    expect(await balance(consumer.address)).toBe(before - FUNDING_AMOUNT);
    const { rows } = await stack.db.pool.query<{ state: string }>(
      'SELECT state FROM ledger.service_payments WHERE intent_ref = $1',
      [intent.intentId],
    );
    expect(rows.map((row) => row.state)).toEqual(['ANSWERED']);
    // The funding treasury moved on chain exactly as the ledger booked it.
    const treasuryAfter = await fundingTreasury();
    expect(treasuryAfter.chain - treasuryBefore.chain).toBe(FUNDING_AMOUNT);
    expect(treasuryAfter.ledger - treasuryBefore.ledger).toBe(FUNDING_AMOUNT);
  });
});

describe('the books after every lost answer above', () => {
  it('trial balance zero per asset; the fee receiver holds on chain what the ledger says', async () => {
    for (const line of await trialBalanceLines(stack))
      expect(line).toMatchObject({ netAtomic: '0', balanced: true });
    for (const chain of await feeReceiverDrift(stack, devnet))
      expect(chain.onchainAtomic).toBe(chain.ledgerAtomic);
  });
});
