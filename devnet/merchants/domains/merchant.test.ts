// The devnet domains merchant as a buyer meets it: a real anvil eip155:8453 with the devnet USDC, real
// HTTP on 127.0.0.1 and the official @x402/fetch client paying. The v2 challenge on the wire, a
// paid answer moving exactly 50000 from payer to payTo, one payment per authorization however
// often it is presented, and each fault switch: refuse (nothing paid), drop after settling (socket
// error, exactly one Transfer), lie (inverted answer), slow (answer after the delay).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { x402HTTPClient } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { Address } from 'viem';
import { type PrivateKeyAccount, generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { eip3009TokenAbi } from '../../../contracts/artifacts/abis';
import { type ChainPublicClient, createChainPublicClient } from '../../../platform/chain/clients';
import { readTokenBalance } from '../../../platform/chain/tokens';
import { type DevnetChains, startDevnetChains } from '../../chains';
import { faucet } from '../../faucet';
import { NO_FAULTS } from './faults';
import { DEVNET_REGISTERED_DOMAINS, normaliseDomain } from './names';
import type { DomainsMerchant } from './server';
import { startDevnetDomainsMerchant } from './start';

const PRICE = 50_000n;
const PAYER_GRANT = 1_000_000n; // the faucet's "1.00"

let dataDir: string;
let devnet: DevnetChains;
let merchant: DomainsMerchant;
let chain: ChainPublicClient;
let token: Address;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'devnet-merchant-test-'));
  devnet = await startDevnetChains({ dataDir });
  const settlement = devnet.info.chains.settlement;
  token = settlement.token.address;
  chain = createChainPublicClient(settlement, { pollingIntervalMs: 20 });
  merchant = await startDevnetDomainsMerchant({ settlement, dataDir: null });
});

afterAll(async () => {
  await merchant?.stop();
  await devnet?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

afterEach(() => {
  merchant.resetFaults();
});

async function fundedPayer(): Promise<PrivateKeyAccount> {
  const payer = privateKeyToAccount(generatePrivateKey());
  await faucet({ dataDir, address: payer.address, amount: '1.00' });
  return payer;
}

function officialClient(payer: PrivateKeyAccount): x402Client {
  const client = new x402Client().register('eip155:8453', new ExactEvmScheme(payer));
  // The devnet USDC is not Base's real USDC address, so the client must be told to accept it.
  client.setSpendControls({ allowedAssets: [{ network: 'eip155:8453', asset: token }] });
  return client;
}

function officialFetch(payer: PrivateKeyAccount): typeof fetch {
  return wrapFetchWithPayment(fetch, officialClient(payer)) as typeof fetch;
}

const balance = (owner: Address) => readTokenBalance(chain, token, owner);

/** Every token Transfer the payer ever sent (a fresh payer has sent none before its test). */
async function transfersFrom(payer: Address) {
  const events = await chain.getContractEvents({
    address: token,
    abi: eip3009TokenAbi,
    eventName: 'Transfer',
    args: { from: payer },
    fromBlock: 0n,
  });
  return events.map((event) => ({
    to: event.args.to,
    value: event.args.value,
    txHash: event.transactionHash,
  }));
}

async function patchFaults(body: unknown): Promise<Response> {
  return fetch(`${merchant.url}/__faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('the 402 challenge', () => {
  it('answers a v2 payment-required header naming eip155:8453, the devnet USDC, 50000 and its payTo', async () => {
    const response = await fetch(merchant.checkUrl('example.test'));
    expect(response.status).toBe(402);
    expect(await response.json()).toEqual({});
    const required = decodePaymentRequiredHeader(response.headers.get('payment-required')!);
    expect(required.x402Version).toBe(2);
    expect(required.resource.url).toBe(`${merchant.url}/domains/check?domain=example.test`);
    expect(required.accepts).toEqual([
      {
        scheme: 'exact',
        network: 'eip155:8453',
        amount: '50000',
        asset: token,
        payTo: merchant.payTo,
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2' },
      },
    ]);
    expect(merchant.payTo).not.toBe(merchant.relayer);
  });

  it.each([
    ['no domain', '/domains/check', 400],
    ['a malformed domain', '/domains/check?domain=bad..name', 400],
    ['a single label', '/domains/check?domain=localhost', 400],
    ['another path', '/domains/other?domain=example.test', 404],
  ])('refuses %s without a challenge', async (_case, target, status) => {
    const response = await fetch(`${merchant.url}${target}`);
    expect(response.status).toBe(status);
    expect(response.headers.get('payment-required')).toBeNull();
  });

  it('serves GET only', async () => {
    const response = await fetch(merchant.checkUrl('example.test'), { method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
    expect(response.headers.get('payment-required')).toBeNull();
  });
});

describe('a paid check', () => {
  it('is paid by the official client, answers {domain, available, checkedAt} and moves exactly 50000 to payTo', async () => {
    const payer = await fundedPayer();
    const payToBefore = await balance(merchant.payTo);
    const pay = officialFetch(payer);

    const free = await pay(merchant.checkUrl('Fresh-Name.test'));
    expect(free.status).toBe(200);
    const body = (await free.json()) as { domain: string; available: boolean; checkedAt: string };
    expect(body).toEqual({
      domain: 'fresh-name.test',
      available: true,
      checkedAt: expect.any(String),
    });
    expect(new Date(body.checkedAt).toISOString()).toBe(body.checkedAt);
    const receipt = decodePaymentResponseHeader(free.headers.get('payment-response')!);
    expect(receipt).toMatchObject({ success: true, network: 'eip155:8453', payer: payer.address });

    const taken = await pay(merchant.checkUrl('taken.test'));
    expect(taken.status).toBe(200);
    expect(await taken.json()).toMatchObject({ domain: 'taken.test', available: false });

    expect(await balance(payer.address)).toBe(PAYER_GRANT - 2n * PRICE);
    expect(await balance(merchant.payTo)).toBe(payToBefore + 2n * PRICE);
    const transfers = await transfersFrom(payer.address);
    expect(transfers).toHaveLength(2);
    expect(transfers[0]).toEqual({ to: merchant.payTo, value: PRICE, txHash: receipt.transaction });
  });

  it('never pays twice for one authorization, presented concurrently or again later', async () => {
    const payer = await fundedPayer();
    const httpClient = new x402HTTPClient(officialClient(payer));
    const url = merchant.checkUrl('example.test');
    const challenge = await fetch(url);
    const required = httpClient.getPaymentRequiredResponse(
      (name) => challenge.headers.get(name),
      await challenge.json(),
    );
    const headers = httpClient.encodePaymentSignatureHeader(
      await httpClient.createPaymentPayload(required),
    );

    // Three copies race each other through verify and settle; the chain lets one through.
    const racing = await Promise.all([
      fetch(url, { headers }),
      fetch(url, { headers }),
      fetch(url, { headers }),
    ]);
    expect(racing.map((response) => response.status).sort()).toEqual([200, 402, 402]);
    const paid = racing.find((response) => response.status === 200)!;
    expect(await paid.json()).toMatchObject({ domain: 'example.test', available: false });
    expect((await fetch(url, { headers })).status).toBe(402);

    expect(await transfersFrom(payer.address)).toHaveLength(1);
    expect(await balance(payer.address)).toBe(PAYER_GRANT - PRICE);
  });
});

describe('fault switches', () => {
  it('reads, patches and resets the switches over the admin API, refusing what it does not know', async () => {
    expect(await (await fetch(`${merchant.url}/__faults`)).json()).toEqual(NO_FAULTS);
    const patched = await patchFaults({ lieAboutAvailability: true, delayMs: 5 });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toEqual({ ...NO_FAULTS, lieAboutAvailability: true, delayMs: 5 });
    expect(merchant.faults).toEqual({ ...NO_FAULTS, lieAboutAvailability: true, delayMs: 5 });

    for (const bad of [
      { explode: true },
      { delayMs: -1 },
      { delayMs: 1.5 },
      { dropAfterSettle: 'yes' },
      { askAtomic: 49_000 },
      { askAtomic: '0' },
      { invalidAnswer: 1 },
      [true],
    ]) {
      expect((await patchFaults(bad)).status).toBe(400);
    }
    const notJson = await fetch(`${merchant.url}/__faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(notJson.status).toBe(400);
    expect(merchant.faults).toEqual({ ...NO_FAULTS, lieAboutAvailability: true, delayMs: 5 });

    expect(await (await fetch(`${merchant.url}/__faults`, { method: 'DELETE' })).json()).toEqual(
      NO_FAULTS,
    );
    expect(merchant.faults).toEqual(NO_FAULTS);
  });

  it('refuseBeforePayment: 503 before any 402, so nothing is paid', async () => {
    const payer = await fundedPayer();
    merchant.setFaults({ refuseBeforePayment: true });
    const response = await officialFetch(payer)(merchant.checkUrl('example.test'));
    expect(response.status).toBe(503);
    expect(response.headers.get('payment-required')).toBeNull();
    expect(await transfersFrom(payer.address)).toEqual([]);
    expect(await balance(payer.address)).toBe(PAYER_GRANT);
  });

  it('dropAfterSettle: the buyer sees a socket error while the chain shows exactly one payment', async () => {
    const payer = await fundedPayer();
    const payToBefore = await balance(merchant.payTo);
    expect((await patchFaults({ dropAfterSettle: true })).status).toBe(200);

    const failure = await officialFetch(payer)(merchant.checkUrl('lost-answer.test')).then(
      () => null,
      (error: unknown) => error as Error & { cause?: { code?: string } },
    );
    // undici's "fetch failed" (a TypeError from another realm than jest's, so compared by name).
    expect(failure).toMatchObject({ name: 'TypeError', message: 'fetch failed' });
    expect(failure?.cause?.code).toBe('UND_ERR_SOCKET');

    const transfers = await transfersFrom(payer.address);
    expect(transfers).toEqual([{ to: merchant.payTo, value: PRICE, txHash: expect.any(String) }]);
    expect(await balance(merchant.payTo)).toBe(payToBefore + PRICE);
  });

  it('lieAboutAvailability: answers the opposite, still paid', async () => {
    const payer = await fundedPayer();
    merchant.setFaults({ lieAboutAvailability: true });
    const pay = officialFetch(payer);
    expect(await (await pay(merchant.checkUrl('taken.test'))).json()).toMatchObject({
      domain: 'taken.test',
      available: true,
    });
    expect(await (await pay(merchant.checkUrl('unregistered.test'))).json()).toMatchObject({
      domain: 'unregistered.test',
      available: false,
    });
    expect(await transfersFrom(payer.address)).toHaveLength(2);
  });

  it('delayMs: the paid answer comes only after the delay', async () => {
    const payer = await fundedPayer();
    const delayMs = 400;
    merchant.setFaults({ delayMs });
    const startedMs = performance.now();
    const response = await officialFetch(payer)(merchant.checkUrl('slow.test'));
    const elapsedMs = performance.now() - startedMs;
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ domain: 'slow.test', available: true });
    expect(elapsedMs).toBeGreaterThanOrEqual(delayMs);
  });
});

describe('domain names', () => {
  it('normalises plain DNS names and refuses everything else', () => {
    expect(normaliseDomain('Example.TEST')).toBe('example.test');
    expect(normaliseDomain('xn--bcher-kva.test')).toBe('xn--bcher-kva.test');
    for (const bad of [
      '',
      'test',
      'a..test',
      '-a.test',
      'a-.test',
      'a.test.',
      'a b.test',
      'ä.test',
      `${'a'.repeat(64)}.test`,
      7,
      null,
    ]) {
      expect(normaliseDomain(bad)).toBeNull();
    }
    expect(DEVNET_REGISTERED_DOMAINS).toEqual(
      expect.arrayContaining(['example.test', 'taken.test']),
    );
  });
});
