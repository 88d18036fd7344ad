// A paid call's verification reads go to the chain while PostgreSQL is still claiming the payment,
// end to end on the devnet (anvil eip155:196, the group path, a JSON-RPC proxy counting what the
// service asks the chain): a claim held up by a competing uncommitted key row does not hold up the
// simulation; once the claim goes through, that simulation stands in for the settlement's (one
// eth_call per payment, as before), and the payment is settled, booked and answered once. A
// simulation whose authorization has meanwhile come within the settlement margin of validBefore
// is not used: the payment is checked again and refused before anything is sent.
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import type { PoolClient } from 'pg';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import { fundingBalance, mintedPayer } from '../support/devnetPayers';
import { officialFetch } from '../support/officialClient';
import { signedPaymentHeader } from '../../devnet/agents/x402Payer';
import { type RpcProxy, startRpcProxy } from '../support/rpcProxy';
import { startTestStack, type TestStack } from '../support/stack';
import { until } from '../support/websockets';
import { trialBalanceLines } from '../support/x402Books';

const PING_PRICE = 10_000n;
const FUNDED = 1_000_000n;

let devnet: DevnetChains;
let proxy: RpcProxy;
let stack: TestStack;

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
  proxy = await startRpcProxy(devnet.info.chains.funding.rpcUrl);
  stack = await startTestStack({ x402: { devnet, rpcUrl: proxy.url } });
  // One paid call first, so the token's code and domain (read once per process) are known and
  // every later count is a payment's own.
  const warm = await mintedPayer(devnet, FUNDED);
  const funding = devnet.info.chains.funding;
  const response = await officialFetch(warm, {
    network: funding.caip2 as `${string}:${string}`,
    asset: funding.token.address,
  })(`${stack.url}/ping_service`);
  expect(response.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await proxy?.stop();
  await devnet?.stop();
});

async function challenge(): Promise<PaymentRequired> {
  const response = await fetch(`${stack.url}/ping_service`);
  expect(response.status).toBe(402);
  return decodePaymentRequiredHeader(response.headers.get('payment-required')!);
}

const simulations = () => proxy.calls.get('eth_call') ?? 0;

/**
 * Holds the payment's claim: a key row for the same authorization, inserted (as the database's
 * superuser) in a transaction left open, makes the claim's insert wait until it ends.
 */
async function holdClaim(header: string): Promise<PoolClient> {
  const { accepted, payload } = decodePaymentSignatureHeader(header);
  const { from, nonce } = (payload as { authorization: { from: string; nonce: string } })
    .authorization;
  const client = await stack.db.adminPool.connect();
  await client.query('BEGIN');
  await client.query(
    `INSERT INTO ledger.payment_authorizations (network, asset, payer, nonce, payment_id)
     VALUES ($1, $2, $3, $4, $5)`,
    [accepted.network, accepted.asset.toLowerCase(), from.toLowerCase(), nonce, `held-${nonce}`],
  );
  return client;
}

/** Resolves once the claim's insert waits on the held key row (a lock wait in pg_stat_activity). */
async function claimWaiting(): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { rows } = await stack.db.adminPool.query<{ waiting: number }>(
      `SELECT count(*)::int AS waiting FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if (rows[0].waiting > 0) return;
    if (Date.now() > deadline) throw new Error('the claim never waited on the held key');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function paymentStates(payer: string): Promise<string[]> {
  const { rows } = await stack.db.pool.query<{ state: string }>(
    'SELECT state FROM ledger.service_payments WHERE payer = $1',
    [payer.toLowerCase()],
  );
  return rows.map((row) => row.state);
}

describe('the verification overlaps the claim', () => {
  it('simulates while the claim waits, then settles on that simulation: charged, booked and answered once', async () => {
    const payer = await mintedPayer(devnet, FUNDED);
    const header = await signedPaymentHeader(
      await challenge(),
      payer,
      BigInt(Math.floor(Date.now() / 1000) + 300),
    );
    const held = await holdClaim(header);
    const before = simulations();
    let answered = false;
    const call = fetch(`${stack.url}/ping_service`, {
      headers: { 'payment-signature': header },
    }).finally(() => {
      answered = true;
    });
    try {
      await claimWaiting();
      // The simulation reached the chain while the claim is still held up.
      await until(() => simulations() > before, 'the simulation reached the chain', 10_000);
      expect(answered).toBe(false);
      expect(await fundingBalance(devnet, payer.address)).toBe(FUNDED);
    } finally {
      await held.query('ROLLBACK');
      held.release();
    }
    const response = await call;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      ok: true,
      tool: 'ping_service',
      ts: expect.any(String),
    });
    // The settlement used that simulation instead of running its own.
    expect(simulations() - before).toBe(1);
    expect(await fundingBalance(devnet, payer.address)).toBe(FUNDED - PING_PRICE);
    expect(await paymentStates(payer.address)).toEqual(['ANSWERED']);
  }, 60_000);

  it('an authorization that came within the margin of validBefore while its claim waited is checked again and refused, nothing sent', async () => {
    const payer = await mintedPayer(devnet, FUNDED);
    const required = await challenge();
    // 8 s ahead passes the 6 s margin now (with up to 2 s to reach the paywall); after the claim
    // waits 4 s it no longer does.
    const header = await signedPaymentHeader(
      required,
      payer,
      BigInt(Math.floor(Date.now() / 1000) + 8),
    );
    const held = await holdClaim(header);
    const sendsBefore = proxy.calls.get('eth_sendRawTransaction') ?? 0;
    const before = simulations();
    const call = fetch(`${stack.url}/ping_service`, { headers: { 'payment-signature': header } });
    try {
      await claimWaiting();
      await until(() => simulations() > before, 'the simulation reached the chain', 10_000);
      await new Promise((resolve) => setTimeout(resolve, 4_000));
    } finally {
      await held.query('ROLLBACK');
      held.release();
    }
    const response = await call;
    expect(response.status).toBe(402);
    expect(decodePaymentRequiredHeader(response.headers.get('payment-required')!).error).toBe(
      'invalid_exact_evm_payload_authorization_valid_before',
    );
    expect(proxy.calls.get('eth_sendRawTransaction') ?? 0).toBe(sendsBefore);
    expect(await fundingBalance(devnet, payer.address)).toBe(FUNDED);
    // The claim was released: no record of this authorization stays.
    expect(await paymentStates(payer.address)).toEqual([]);
  }, 60_000);
});

describe('the books after both', () => {
  it('trial balance zero per asset', async () => {
    const lines = await trialBalanceLines(stack);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatchObject({ netAtomic: '0', balanced: true });
  });
});
