// The EIP-3009 facts on a real anvil chain: authorization state at a pinned block, the transaction
// that used or canceled a nonce found by a paged search in either order (and not outside its
// bounds), a receipt's Transfers and AuthorizationUsed events, and the Transfers touching an
// account over a span, stopped by its page bound.
import { type Address, type Hex, keccak256, stringToHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { eip3009TokenAbi, eip3009TokenBytecode } from '../../contracts/artifacts/abis';
import { type AnvilNode, startAnvil } from './anvil';
import {
  type ChainPublicClient,
  type ChainWalletClient,
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
} from './clients';
import { deployArtifact } from './deploy';
import {
  authorizationState,
  authorizationsUsedInReceipt,
  findAuthorizationUse,
  findTransfersTouching,
  readReceipt,
  transfersInReceipt,
} from './eip3009Facts';
import { generateKeyStore } from './keys';
import {
  type MinedTransaction,
  mintToken,
  readTokenDomain,
  signTransferWithAuthorization,
  submitTransferWithAuthorization,
} from './tokens';

const keys = generateKeyStore();
const payer = privateKeyToAccount(generatePrivateKey());
const payee = privateKeyToAccount(generatePrivateKey()).address;
const VALUE_ATOMIC = 1_500_000n;
const PAGE_BLOCKS = 3n;

describe('EIP-3009 chain facts on an anvil chain', () => {
  let node: AnvilNode;
  let chain: ChainPublicClient;
  let relayer: ChainWalletClient;
  let token: Address;
  let nonce: Hex;
  let paid: MinedTransaction;
  let latest: bigint;

  beforeAll(async () => {
    node = await startAnvil({ chainId: 8453 });
    const testClient = createAnvilTestClient(node);
    for (const address of [keys.deployer.address, keys.relayer.address])
      await testClient.setBalance({ address, value: 10n ** 20n });
    chain = createChainPublicClient(node, { pollingIntervalMs: 20 });
    const deployer = createChainWalletClient(node, keys.deployer.account, {
      pollingIntervalMs: 20,
    });
    relayer = createChainWalletClient(node, keys.relayer.account, { pollingIntervalMs: 20 });
    ({ address: token } = await deployArtifact({
      publicClient: chain,
      walletClient: deployer,
      contractName: 'USDC',
      abi: eip3009TokenAbi,
      bytecode: eip3009TokenBytecode,
      args: ['USD Coin', 'USDC', '2'],
    }));
    await mintToken({
      publicClient: chain,
      minter: deployer,
      token,
      to: payer.address,
      amountAtomic: 10n * VALUE_ATOMIC,
    });
    await testClient.mine({ blocks: 7 });
    const validBeforeUnixS = (await chain.getBlock()).timestamp + 600n;
    const authorization = await signTransferWithAuthorization({
      publicClient: chain,
      token,
      signer: payer,
      to: payee,
      valueAtomic: VALUE_ATOMIC,
      validBeforeUnixS,
    });
    nonce = authorization.message.nonce;
    paid = await submitTransferWithAuthorization({ publicClient: chain, relayer, authorization });
    await testClient.mine({ blocks: 7 });
    latest = await chain.getBlockNumber({ cacheTime: 0 });
  });

  afterAll(async () => {
    await node?.stop();
  });

  it('reads authorizationState at a pinned block: unused before the transfer, used from its block', async () => {
    expect(
      await authorizationState(chain, token, payer.address, nonce, paid.blockNumber - 1n),
    ).toBe(false);
    expect(await authorizationState(chain, token, payer.address, nonce, paid.blockNumber)).toBe(
      true,
    );
    expect(await authorizationState(chain, token, payer.address, nonce)).toBe(true);
  });

  it('finds the transaction that used a nonce page by page, oldest or newest first', async () => {
    const expected = { txHash: paid.txHash, blockNumber: paid.blockNumber };
    const authorization = { authorizer: payer.address, nonce };
    for (const order of ['oldest-first', 'newest-first'] as const)
      expect(
        await findAuthorizationUse(chain, token, authorization, {
          fromBlock: 0n,
          toBlock: latest,
          pageBlocks: PAGE_BLOCKS,
          order,
        }),
      ).toEqual(expected);
  });

  it('finds nothing outside its bounds: a span before the use, or too few pages', async () => {
    const authorization = { authorizer: payer.address, nonce };
    const before = { fromBlock: 0n, toBlock: paid.blockNumber - 1n, pageBlocks: PAGE_BLOCKS };
    expect(await findAuthorizationUse(chain, token, authorization, before)).toBeUndefined();
    const onePage = { fromBlock: 0n, toBlock: latest, pageBlocks: PAGE_BLOCKS, maxPages: 1 };
    expect(await findAuthorizationUse(chain, token, authorization, onePage)).toBeUndefined();
    const otherNonce = { authorizer: payer.address, nonce: keccak256(stringToHex('never used')) };
    const all = { fromBlock: 0n, toBlock: latest, pageBlocks: PAGE_BLOCKS };
    expect(await findAuthorizationUse(chain, token, otherNonce, all)).toBeUndefined();
  });

  it('finds the cancellation of a nonce as its use', async () => {
    const cancelled = keccak256(stringToHex(`cancel-${latest}`));
    const signature = await payer.signTypedData({
      domain: await readTokenDomain(chain, token),
      types: {
        CancelAuthorization: [
          { name: 'authorizer', type: 'address' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'CancelAuthorization',
      message: { authorizer: payer.address, nonce: cancelled },
    });
    const txHash = await relayer.writeContract({
      address: token,
      abi: eip3009TokenAbi,
      functionName: 'cancelAuthorization',
      args: [payer.address, cancelled, signature],
    });
    const receipt = await chain.waitForTransactionReceipt({ hash: txHash });
    const span = { fromBlock: 0n, toBlock: receipt.blockNumber, pageBlocks: PAGE_BLOCKS };
    const authorization = { authorizer: payer.address, nonce: cancelled };
    expect(await findAuthorizationUse(chain, token, authorization, span)).toEqual({
      txHash,
      blockNumber: receipt.blockNumber,
    });
    expect(transfersInReceipt(receipt, token)).toEqual([]);
  });

  it("reads a receipt's Transfers and AuthorizationUsed events of the token only", async () => {
    const receipt = await readReceipt(chain, paid.txHash);
    expect(receipt?.blockNumber).toBe(paid.blockNumber);
    expect(transfersInReceipt(receipt!, token)).toEqual([
      {
        txHash: paid.txHash.toLowerCase(),
        logIndex: expect.any(Number),
        blockNumber: paid.blockNumber,
        from: payer.address.toLowerCase(),
        to: payee.toLowerCase(),
        value: VALUE_ATOMIC,
      },
    ]);
    expect(authorizationsUsedInReceipt(receipt!, token)).toEqual([
      { authorizer: payer.address.toLowerCase(), nonce: nonce.toLowerCase() },
    ]);
    expect(transfersInReceipt(receipt!, payee)).toEqual([]);
    expect(authorizationsUsedInReceipt(receipt!, payee)).toEqual([]);
  });

  it('answers undefined for a transaction the chain does not have', async () => {
    expect(await readReceipt(chain, keccak256(stringToHex('no such transaction')))).toBeUndefined();
  });

  it('finds the Transfers touching an account over a span, and says when its page bound stopped it', async () => {
    const all = await findTransfersTouching(chain, token, payee, {
      fromBlock: 0n,
      toBlock: latest,
      pageBlocks: PAGE_BLOCKS,
    });
    expect(all.complete).toBe(true);
    expect(all.found.map((transfer) => [transfer.txHash, transfer.value])).toEqual([
      [paid.txHash.toLowerCase(), VALUE_ATOMIC],
    ]);
    const payerSide = await findTransfersTouching(chain, token, payer.address, {
      fromBlock: 0n,
      toBlock: latest,
      pageBlocks: PAGE_BLOCKS,
    });
    // The mint into the payer, then the payment out of it.
    expect(payerSide.found.map((transfer) => transfer.value)).toEqual([
      10n * VALUE_ATOMIC,
      VALUE_ATOMIC,
    ]);
    const bounded = await findTransfersTouching(chain, token, payee, {
      fromBlock: 0n,
      toBlock: latest,
      pageBlocks: PAGE_BLOCKS,
      maxPages: 1,
    });
    expect(bounded).toMatchObject({ complete: false, pages: 1, found: [] });
  });
});
