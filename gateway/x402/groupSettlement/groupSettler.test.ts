// Group settlement against a real anvil chain, real token and real signatures, below the paywall:
// a group carrying one authorization with a bad signature, one from a payer without balance and
// one whose nonce is already used, beside good ones, goes out as one transaction; the good ones
// settle and each member learns its own outcome from the receipt; the three move nothing.
import type { PaymentRequirements } from '@x402/core/types';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type LocalAccount } from 'viem/accounts';
import { type DevnetChains, startDevnetChains } from '../../../devnet/chains';
import {
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
} from '../../../platform/chain/clients';
import { authorizationState } from '../../../platform/chain/eip3009Facts';
import {
  createGroupRelayer,
  type GroupAuthorization,
} from '../../../platform/chain/settlementContract';
import {
  mintToken,
  readTokenBalance,
  signTransferWithAuthorization,
  submitTransferWithAuthorization,
} from '../../../platform/chain/tokens';
import { startLossyRpc } from '../../../test/support/lossyRpc';
import { hostPortOf, startTcpProxy, type TcpProxy } from '../../../test/support/tcpProxy';
import { GroupSettler } from './groupSettler';

const POLLING = { pollingIntervalMs: 20 };
const PRICE = 10_000n;

let devnet: DevnetChains;

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
}, 120_000);

afterAll(async () => {
  await devnet?.stop();
});

function chain() {
  const funding = devnet.info.chains.funding;
  const publicClient = createChainPublicClient(funding, POLLING);
  return { funding, publicClient, token: funding.token.address };
}

async function funded(amount: bigint): Promise<LocalAccount> {
  const { funding, publicClient, token } = chain();
  const payer = privateKeyToAccount(generatePrivateKey());
  if (amount > 0n) {
    const minter = createChainWalletClient(funding, devnet.keys.deployer.account, POLLING);
    await mintToken({ publicClient, minter, token, to: payer.address, amountAtomic: amount });
  }
  return payer;
}

async function authorize(payer: LocalAccount, to: Address, nonce?: `0x${string}`) {
  const { publicClient, token } = chain();
  const signed = await signTransferWithAuthorization({
    publicClient,
    token,
    signer: payer,
    to,
    valueAtomic: PRICE,
    validBeforeUnixS: BigInt(Math.floor(Date.now() / 1000) + 600),
    ...(nonce ? { nonce } : {}),
  });
  const authorization: GroupAuthorization = { ...signed.message, signature: signed.signature };
  return { signed, authorization };
}

/** What each member's outcome is judged against: PRICE of the funding token to `payTo`. */
function requirementsFor(payTo: Address): PaymentRequirements {
  const { funding, token } = chain();
  return {
    scheme: 'exact',
    network: funding.caip2,
    asset: token,
    amount: PRICE.toString(),
    payTo,
    maxTimeoutSeconds: 60,
    extra: {},
  } as PaymentRequirements;
}

function relayerFor(contract: Address) {
  const { funding, token } = chain();
  return createGroupRelayer({
    ...funding,
    relayerPrivateKey: devnet.keys.relayer.exportPrivateKey(),
    contract,
    token,
    confirmationTimeoutMs: 10_000,
    ...POLLING,
  });
}

describe('a group with three doomed authorizations among good ones', () => {
  it('settles the good ones in one transaction and moves nothing for exactly the other three', async () => {
    const { funding, publicClient, token } = chain();
    const payTo = devnet.info.addresses.feeReceiver;
    const contract = funding.groupSettlement!;
    const good: LocalAccount[] = [];
    for (let i = 0; i < 4; i += 1) good.push(await funded(PRICE)); // one minter: one at a time
    const goodAuths = await Promise.all(good.map((payer) => authorize(payer, payTo)));

    // A bad signature: signed by another key in the payer's name.
    const victim = await funded(PRICE);
    const forged = await authorize(privateKeyToAccount(generatePrivateKey()), payTo);
    const badSignature = { ...forged.authorization, from: victim.address };
    // No balance at all.
    const broke = (await authorize(await funded(0n), payTo)).authorization;
    // Its nonce already used by a transfer to someone else.
    const spender = await funded(2n * PRICE);
    const earlier = await authorize(spender, privateKeyToAccount(generatePrivateKey()).address);
    const relayerWallet = createChainWalletClient(funding, devnet.keys.relayer.account, POLLING);
    await submitTransferWithAuthorization({
      publicClient,
      relayer: relayerWallet,
      authorization: earlier.signed,
    });
    const used = (await authorize(spender, payTo, earlier.signed.message.nonce)).authorization;

    const relayer = relayerFor(contract);
    // A long wait, so every member below is queued before the one group goes.
    const settler = new GroupSettler(relayer, token, { contract, maxSize: 64, maxWaitMs: 300 });
    const requirements = requirementsFor(payTo);
    const receiverBefore = await readTokenBalance(publicClient, token, payTo);
    const members = [...goodAuths.map((auth) => auth.authorization), badSignature, broke, used];
    const outcomes = await Promise.all(
      members.map((authorization) =>
        settler.submit({ authorization, requirements, network: funding.caip2 }),
      ),
    );

    expect(settler.stats).toEqual({ groups: 1, authorizations: 7 });
    const goodOutcomes = outcomes.slice(0, 4);
    const txHash = goodOutcomes[0]!.transaction;
    for (const outcome of goodOutcomes)
      expect(outcome).toMatchObject({ success: true, confirmed: true, transaction: txHash });
    // Nonce used: a chain-proven refusal (402). Bad signature and no balance: nothing moved, but
    // only validBefore makes that final, so they are parked on the group's transaction.
    expect(outcomes[6]).toMatchObject({
      success: false,
      broadcast: false,
      errorReason: 'invalid_exact_evm_nonce_already_used',
    });
    expect(outcomes[4]).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_evm_signature',
      transaction: txHash,
    });
    expect(outcomes[5]).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_evm_insufficient_balance',
      transaction: txHash,
    });

    const receipt = await publicClient.getTransactionReceipt({ hash: txHash as `0x${string}` });
    expect(receipt.status).toBe('success');
    expect(await readTokenBalance(publicClient, token, payTo)).toBe(receiverBefore + 4n * PRICE);
    for (const payer of good)
      expect(await readTokenBalance(publicClient, token, payer.address)).toBe(0n);
    expect(await readTokenBalance(publicClient, token, victim.address)).toBe(PRICE);
    expect(
      await authorizationState(publicClient, token, badSignature.from, badSignature.nonce),
    ).toBe(false);
    expect(await authorizationState(publicClient, token, broke.from, broke.nonce)).toBe(false);
    expect(await readTokenBalance(publicClient, token, spender.address)).toBe(PRICE);
  }, 120_000);

  it('reverts a group where nothing settles, as a single settlement would', async () => {
    const { funding, publicClient, token } = chain();
    const contract = funding.groupSettlement!;
    const broke = (await authorize(await funded(0n), devnet.info.addresses.feeReceiver))
      .authorization;
    const relayer = relayerFor(contract);
    const outcome = await relayer.send([broke]);
    expect(outcome.kind).toBe('reverted');
    expect(await authorizationState(publicClient, token, broke.from, broke.nonce)).toBe(false);
  }, 60_000);
});

describe('groups on a chain that mines in blocks', () => {
  it.each([
    { when: 'after the overlap delay', maxSize: 64, overlapAfterMs: 50 },
    { when: 'at once when a full group waits', maxSize: 1, overlapAfterMs: 60_000 },
  ])(
    'hands the next group to the node while the last one waits for its block ($when): both settle in one block',
    async ({ maxSize, overlapAfterMs }) => {
      const { funding, publicClient, token } = chain();
      const payTo = devnet.info.addresses.feeReceiver;
      const contract = funding.groupSettlement!;
      const first = await authorize(await funded(PRICE), payTo);
      const second = await authorize(await funded(PRICE), payTo);
      const requirements = requirementsFor(payTo);
      const relayer = relayerFor(contract);
      const settler = new GroupSettler(relayer, token, {
        contract,
        maxSize,
        maxWaitMs: 0,
        overlapAfterMs,
      });
      const anvil = createAnvilTestClient(funding);
      const sent = (blockTag: 'latest' | 'pending') =>
        publicClient.getTransactionCount({ address: relayer.relayer, blockTag });
      /** Waits until the node holds `count` of the relayer's transactions, mined or not. */
      const handedUntil = async (count: number) => {
        for (let tries = 0; tries < 250; tries += 1) {
          if ((await sent('pending')) >= count) return;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        throw new Error(`the node never held ${count} of the relayer's transactions`);
      };
      const mined = await sent('latest');
      await anvil.setAutomine(false);
      try {
        const firstOutcome = settler.submit({
          authorization: first.authorization,
          requirements,
          network: funding.caip2,
        });
        await handedUntil(mined + 1);
        const secondOutcome = settler.submit({
          authorization: second.authorization,
          requirements,
          network: funding.caip2,
        });
        // The first group has no receipt yet (nothing is mined), and the second is handed anyway.
        await handedUntil(mined + 2);
        expect(await sent('latest')).toBe(mined);
        await anvil.mine({ blocks: 1 });
        const outcomes = await Promise.all([firstOutcome, secondOutcome]);
        for (const outcome of outcomes)
          expect(outcome).toMatchObject({ success: true, confirmed: true });
        expect(settler.stats).toEqual({ groups: 2, authorizations: 2 });
        const receipts = await Promise.all(
          outcomes.map((outcome) =>
            publicClient.getTransactionReceipt({ hash: outcome.transaction as `0x${string}` }),
          ),
        );
        expect(receipts[0]!.transactionHash).not.toBe(receipts[1]!.transactionHash);
        expect(receipts[0]!.blockNumber).toBe(receipts[1]!.blockNumber);
        expect(await sent('latest')).toBe(mined + 2);
        await settler.drain();
      } finally {
        await anvil.setAutomine(true);
      }
    },
    60_000,
  );
});

describe('a group while the relayer cannot reach the chain', () => {
  let proxy: TcpProxy;

  beforeEach(async () => {
    proxy = await startTcpProxy(hostPortOf(devnet.info.chains.funding.rpcUrl));
  });

  afterEach(async () => {
    await proxy?.stop();
  });

  /** A relayer of its own (fresh key with gas: no nonce shared with other tests) behind `rpcUrl`. */
  async function relayerBehind(rpcUrl: string) {
    const { funding, token } = chain();
    const key = generatePrivateKey();
    await createAnvilTestClient(funding).setBalance({
      address: privateKeyToAccount(key).address,
      value: 10n ** 18n,
    });
    return createGroupRelayer({
      chainId: funding.chainId,
      rpcUrl,
      relayerPrivateKey: key,
      contract: funding.groupSettlement!,
      token,
      confirmationTimeoutMs: 15_000,
      ...POLLING,
    });
  }

  it('is unsent when the reads before signing fail: nothing moves, and the same authorizations settle once it answers', async () => {
    const { publicClient, token } = chain();
    const payTo = devnet.info.addresses.feeReceiver;
    const payer = await funded(PRICE);
    const { authorization } = await authorize(payer, payTo);
    const relayer = await relayerBehind(proxy.url);

    await proxy.cut();
    // No nonce known yet: the relayer must read it, and cannot.
    expect(await relayer.send([authorization])).toEqual({ kind: 'unsent' });
    expect(await authorizationState(publicClient, token, payer.address, authorization.nonce)).toBe(
      false,
    );

    await proxy.restore();
    const outcome = await relayer.send([authorization]);
    expect(outcome.kind).toBe('mined');
    expect(await readTokenBalance(publicClient, token, payer.address)).toBe(0n);
  }, 60_000);

  it('hands the same signed transaction to the node again when its send lost the answer: mined, not left unknown', async () => {
    const { publicClient, token } = chain();
    const payTo = devnet.info.addresses.feeReceiver;
    const payer = await funded(PRICE);
    const { authorization } = await authorize(payer, payTo);
    const lossy = await startLossyRpc(devnet.info.chains.funding.rpcUrl);
    try {
      const relayer = await relayerBehind(lossy.url);
      // The send and the next two hand-overs fail before reaching the chain (502): the relayer
      // cannot tell that from a node that took the transaction and lost the answer.
      lossy.dropSends(3);
      const outcome = await relayer.send([authorization]);
      expect(lossy.dropped).toBe(3);
      expect(outcome.kind).toBe('mined');
      expect(
        await authorizationState(publicClient, token, payer.address, authorization.nonce),
      ).toBe(true);
      expect(await readTokenBalance(publicClient, token, payer.address)).toBe(0n);
    } finally {
      await lossy.close();
    }
  }, 60_000);
});
