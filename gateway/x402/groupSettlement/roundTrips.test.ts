// RPC round trips per paid settlement, single path against group path, counted by a JSON-RPC proxy
// in front of a real anvil (real token, real signatures, the rail as the paywall uses it): eight
// payments settled at once. Prints both figures; the group path must need fewer per payment.
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type DevnetChains, startDevnetChains } from '../../../devnet/chains';
import { createChainPublicClient, createChainWalletClient } from '../../../platform/chain/clients';
import { mintToken, signTransferWithAuthorization } from '../../../platform/chain/tokens';
import { startRpcProxy } from '../../../test/support/rpcProxy';
import { createSettlementRail } from '../rail';

const POLLING = { pollingIntervalMs: 20 };
const PRICE = 10_000n;
const PAYMENTS = 8;

let devnet: DevnetChains;

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
}, 120_000);

afterAll(async () => {
  await devnet?.stop();
});

async function signedPayments(count: number) {
  const funding = devnet.info.chains.funding;
  const publicClient = createChainPublicClient(funding, POLLING);
  const token = funding.token.address;
  const payTo = devnet.info.addresses.feeReceiver;
  const minter = createChainWalletClient(funding, devnet.keys.deployer.account, POLLING);
  const requirements: PaymentRequirements = {
    scheme: 'exact',
    network: funding.caip2,
    asset: token,
    amount: PRICE.toString(),
    payTo,
    maxTimeoutSeconds: 60,
    extra: { name: funding.token.name, version: funding.token.version },
  };
  const payloads: PaymentPayload[] = [];
  for (let i = 0; i < count; i += 1) {
    const payer = privateKeyToAccount(generatePrivateKey());
    await mintToken({ publicClient, minter, token, to: payer.address, amountAtomic: PRICE });
    const signed = await signTransferWithAuthorization({
      publicClient,
      token,
      signer: payer,
      to: payTo,
      valueAtomic: PRICE,
      validBeforeUnixS: BigInt(Math.floor(Date.now() / 1000) + 600),
    });
    const { message } = signed;
    payloads.push({
      x402Version: 2,
      resource: {
        url: 'http://127.0.0.1/ping_service',
        description: 'ping',
        mimeType: 'application/json',
      },
      accepted: requirements,
      payload: {
        authorization: {
          from: message.from,
          to: message.to,
          value: message.value.toString(),
          validAfter: message.validAfter.toString(),
          validBefore: message.validBefore.toString(),
          nonce: message.nonce,
        },
        signature: signed.signature,
      },
    });
  }
  return { requirements, payloads };
}

async function roundTripsPerPayment(grouped: boolean): Promise<number> {
  const funding = devnet.info.chains.funding;
  const { requirements, payloads } = await signedPayments(PAYMENTS);
  const proxy = await startRpcProxy(funding.rpcUrl);
  try {
    const rail = createSettlementRail({
      chainId: funding.chainId,
      rpcUrl: proxy.url,
      token: funding.token.address,
      relayerPrivateKey: devnet.keys.relayer.exportPrivateKey(),
      confirmationTimeoutMs: 10_000,
      ...POLLING,
      ...(grouped
        ? { group: { contract: funding.groupSettlement!, maxSize: 64, maxWaitMs: 50 } }
        : {}),
    });
    const settled = await Promise.all(
      payloads.map(async (payload) => {
        const settlement = await rail.settle(payload, requirements);
        // The paywall reads the receipt only when the group did not already (settlement.confirmed).
        if (settlement.success && !settlement.confirmed)
          await rail.receipt(settlement.transaction as `0x${string}`);
        return settlement;
      }),
    );
    expect(settled.every((settlement) => settlement.success)).toBe(true);
    const perPayment = proxy.total() / PAYMENTS;
    process.stdout.write(
      `x402 RPC round trips per payment (${grouped ? 'group' : 'single'} path, ${PAYMENTS} at once): ${perPayment.toFixed(2)} ${JSON.stringify(Object.fromEntries(proxy.calls))}\n`,
    );
    return perPayment;
  } finally {
    await proxy.stop();
  }
}

describe('RPC round trips per paid settlement', () => {
  it('the group path needs fewer than one transaction per payment does', async () => {
    const single = await roundTripsPerPayment(false);
    const grouped = await roundTripsPerPayment(true);
    expect(grouped).toBeLessThan(single);
  }, 180_000);
});
