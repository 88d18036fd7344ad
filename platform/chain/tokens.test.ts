// EIP-3009 end to end on two real anvil chains: our token's EIP-712 domain, a gasless payer whose
// signed TransferWithAuthorization a relayer submits, and every refusal that protects the payer
// (replay, expiry, not-yet-valid, tampering, another chain, cancellation, payee-only receive).
import {
  type Address,
  type Hex,
  encodeAbiParameters,
  encodeFunctionData,
  hashDomain,
  keccak256,
  parseEventLogs,
  stringToHex,
} from 'viem';
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
import { deployArtifact, hasContractCode } from './deploy';
import { authorizationState } from './eip3009Facts';
import { generateKeyStore } from './keys';
import {
  type SignedTransferAuthorization,
  mintToken,
  readTokenBalance,
  readTokenDomain,
  revertErrorName,
  signTransferWithAuthorization,
  submitTransferWithAuthorization,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
} from './tokens';

interface TestChain {
  node: AnvilNode;
  publicClient: ChainPublicClient;
  deployer: ChainWalletClient;
  relayer: ChainWalletClient;
}

const keys = generateKeyStore();
const payer = privateKeyToAccount(generatePrivateKey());
const payee = privateKeyToAccount(generatePrivateKey()).address;
const ONE_TOKEN_ATOMIC = 1_000_000n;

async function failureOf(promise: Promise<unknown>): Promise<string | null> {
  try {
    await promise;
  } catch (error) {
    return revertErrorName(error) ?? `not a revert: ${(error as Error).message}`;
  }
  return null;
}

async function setUpChain(chainId: number): Promise<TestChain> {
  const node = await startAnvil({ chainId });
  const options = { pollingIntervalMs: 20 };
  const testClient = createAnvilTestClient(node);
  await testClient.setBalance({ address: keys.deployer.address, value: 10n ** 20n });
  await testClient.setBalance({ address: keys.relayer.address, value: 10n ** 20n });
  return {
    node,
    publicClient: createChainPublicClient(node, options),
    deployer: createChainWalletClient(node, keys.deployer.account, options),
    relayer: createChainWalletClient(node, keys.relayer.account, options),
  };
}

async function deployToken(
  chain: TestChain,
  name: string,
  symbol: string,
  version: string,
): Promise<Address> {
  const { address } = await deployArtifact({
    publicClient: chain.publicClient,
    walletClient: chain.deployer,
    contractName: symbol,
    abi: eip3009TokenAbi,
    bytecode: eip3009TokenBytecode,
    args: [name, symbol, version],
  });
  await mintToken({
    publicClient: chain.publicClient,
    minter: chain.deployer,
    token: address,
    to: payer.address,
    amountAtomic: 100n * ONE_TOKEN_ATOMIC,
  });
  return address;
}

async function chainNowUnixS(chain: TestChain): Promise<bigint> {
  return (await chain.publicClient.getBlock()).timestamp;
}

describe('EIP-3009 token on two anvil chains', () => {
  let funding: TestChain;
  let settlement: TestChain;
  let usdt0: Address;
  let usdc: Address;
  /** Same name, version and address as usdt0 but on 8453: only the chain id tells them apart. */
  let usdt0Twin: Address;

  beforeAll(async () => {
    [funding, settlement] = await Promise.all([setUpChain(196), setUpChain(8453)]);
    usdt0 = await deployToken(funding, 'USD\u20AE0', 'USDT0', '1');
    usdt0Twin = await deployToken(settlement, 'USD\u20AE0', 'USDT0', '1');
    usdc = await deployToken(settlement, 'USD Coin', 'USDC', '2');
  });

  afterAll(async () => {
    await Promise.all([funding?.node.stop(), settlement?.node.stop()]);
  });

  const authorize = async (
    chain: TestChain,
    token: Address,
    overrides: { validAfterUnixS?: bigint; validBeforeUnixS?: bigint } = {},
  ) =>
    signTransferWithAuthorization({
      publicClient: chain.publicClient,
      token,
      signer: payer,
      to: payee,
      valueAtomic: ONE_TOKEN_ATOMIC,
      validBeforeUnixS: overrides.validBeforeUnixS ?? (await chainNowUnixS(chain)) + 600n,
      ...(overrides.validAfterUnixS !== undefined
        ? { validAfterUnixS: overrides.validAfterUnixS }
        : {}),
    });

  const submit = (chain: TestChain, authorization: SignedTransferAuthorization) =>
    submitTransferWithAuthorization({
      publicClient: chain.publicClient,
      relayer: chain.relayer,
      authorization,
    });

  it('deploys tokens whose EIP-712 domain matches an independent computation', async () => {
    for (const [chain, token, name, version, chainId] of [
      [funding, usdt0, 'USD\u20AE0', '1', 196],
      [settlement, usdc, 'USD Coin', '2', 8453],
    ] as const) {
      expect(await hasContractCode(chain.publicClient, token)).toBe(true);
      const domain = await readTokenDomain(chain.publicClient, token);
      expect(domain).toEqual({ name, version, chainId, verifyingContract: token });

      const onChainSeparator = await chain.publicClient.readContract({
        address: token,
        abi: eip3009TokenAbi,
        functionName: 'DOMAIN_SEPARATOR',
      });
      const viaViem = hashDomain({
        domain: { name, version, chainId: BigInt(chainId), verifyingContract: token },
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'version', type: 'string' },
            { name: 'chainId', type: 'uint256' },
            { name: 'verifyingContract', type: 'address' },
          ],
        },
      });
      const byHand = keccak256(
        encodeAbiParameters(
          [
            { type: 'bytes32' },
            { type: 'bytes32' },
            { type: 'bytes32' },
            { type: 'uint256' },
            { type: 'address' },
          ],
          [
            keccak256(
              stringToHex(
                'EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)',
              ),
            ),
            keccak256(stringToHex(name)),
            keccak256(stringToHex(version)),
            BigInt(chainId),
            token,
          ],
        ),
      );
      expect(onChainSeparator).toBe(viaViem);
      expect(onChainSeparator).toBe(byHand);
    }
    const decimals = await funding.publicClient.readContract({
      address: usdt0,
      abi: eip3009TokenAbi,
      functionName: 'decimals',
    });
    expect(decimals).toBe(6);
    expect(usdt0Twin).toBe(usdt0); // same deployer, same nonce: the address cannot tell the chains apart
  });

  it('moves exactly the authorized value when a relayer submits a gasless payer’s signature', async () => {
    expect(await funding.publicClient.getBalance({ address: payer.address })).toBe(0n);
    const payerBefore = await readTokenBalance(funding.publicClient, usdt0, payer.address);
    const payeeBefore = await readTokenBalance(funding.publicClient, usdt0, payee);
    const relayerBefore = await readTokenBalance(funding.publicClient, usdt0, keys.relayer.address);
    const authorization = await authorize(funding, usdt0);
    expect(
      await authorizationState(
        funding.publicClient,
        usdt0,
        payer.address,
        authorization.message.nonce,
      ),
    ).toBe(false);

    const mined = await submit(funding, authorization);

    expect(await readTokenBalance(funding.publicClient, usdt0, payer.address)).toBe(
      payerBefore - ONE_TOKEN_ATOMIC,
    );
    expect(await readTokenBalance(funding.publicClient, usdt0, payee)).toBe(
      payeeBefore + ONE_TOKEN_ATOMIC,
    );
    expect(await readTokenBalance(funding.publicClient, usdt0, keys.relayer.address)).toBe(
      relayerBefore,
    );
    expect(await funding.publicClient.getBalance({ address: payer.address })).toBe(0n);
    expect(
      await authorizationState(
        funding.publicClient,
        usdt0,
        payer.address,
        authorization.message.nonce,
      ),
    ).toBe(true);

    const receipt = await funding.publicClient.getTransactionReceipt({ hash: mined.txHash });
    const events = parseEventLogs({ abi: eip3009TokenAbi, logs: receipt.logs });
    expect(events.map((event) => event.eventName)).toEqual(['AuthorizationUsed', 'Transfer']);
    expect(events[0].args).toEqual({
      authorizer: payer.address,
      nonce: authorization.message.nonce,
    });
    expect(receipt.from.toLowerCase()).toBe(keys.relayer.address.toLowerCase());
  });

  it('refuses a replay of a used authorization with AuthorizationAlreadyUsed', async () => {
    const authorization = await authorize(funding, usdt0);
    await submit(funding, authorization);
    const balanceAfterFirst = await readTokenBalance(funding.publicClient, usdt0, payer.address);
    expect(await failureOf(submit(funding, authorization))).toBe('AuthorizationAlreadyUsed');

    // Forced past the simulation (fixed gas, no estimate): the chain itself rejects it.
    const { from, to, value, validAfter, validBefore, nonce } = authorization.message;
    const forcedHash = await funding.relayer.sendTransaction({
      to: usdt0,
      gas: 200_000n,
      data: encodeFunctionData({
        abi: eip3009TokenAbi,
        functionName: 'transferWithAuthorization',
        args: [from, to, value, validAfter, validBefore, nonce, authorization.signature],
      }),
    });
    expect(
      (await funding.publicClient.waitForTransactionReceipt({ hash: forcedHash })).status,
    ).toBe('reverted');
    expect(await readTokenBalance(funding.publicClient, usdt0, payer.address)).toBe(
      balanceAfterFirst,
    );
  });

  it('refuses an expired authorization and one not valid yet', async () => {
    const now = await chainNowUnixS(funding);
    expect(
      await failureOf(
        submit(funding, await authorize(funding, usdt0, { validBeforeUnixS: now - 1n })),
      ),
    ).toBe('AuthorizationExpired');
    expect(
      await failureOf(
        submit(
          funding,
          await authorize(funding, usdt0, {
            validAfterUnixS: now + 3_600n,
            validBeforeUnixS: now + 7_200n,
          }),
        ),
      ),
    ).toBe('AuthorizationNotYetValid');
  });

  it('refuses a tampered value or recipient with InvalidSignature', async () => {
    const authorization = await authorize(funding, usdt0);
    const moreValue = {
      ...authorization,
      message: { ...authorization.message, value: authorization.message.value + 1n },
    };
    const otherPayee = {
      ...authorization,
      message: { ...authorization.message, to: keys.relayer.address },
    };
    expect(await failureOf(submit(funding, moreValue))).toBe('InvalidSignature');
    expect(await failureOf(submit(funding, otherPayee))).toBe('InvalidSignature');
    expect(
      await authorizationState(
        funding.publicClient,
        usdt0,
        payer.address,
        authorization.message.nonce,
      ),
    ).toBe(false);
  });

  it('refuses the same signature on the other chain, even on a twin token at the same address', async () => {
    const authorization = await authorize(funding, usdt0);
    expect(await failureOf(submit(settlement, authorization))).toBe('InvalidSignature'); // usdt0Twin
    expect(await failureOf(submit(settlement, { ...authorization, token: usdc }))).toBe(
      'InvalidSignature',
    );
    await submit(funding, authorization); // still good where it was meant
  });

  it('accepts the bytes-signature form and shares its nonce space with (v, r, s)', async () => {
    const authorization = await authorize(settlement, usdc);
    const { from, to, value, validAfter, validBefore, nonce } = authorization.message;
    const args = [
      from,
      to,
      value,
      validAfter,
      validBefore,
      nonce,
      authorization.signature,
    ] as const;
    const txHash = await settlement.relayer.writeContract({
      address: usdc,
      abi: eip3009TokenAbi,
      functionName: 'transferWithAuthorization',
      args,
    });
    expect((await settlement.publicClient.waitForTransactionReceipt({ hash: txHash })).status).toBe(
      'success',
    );
    expect(await failureOf(submit(settlement, authorization))).toBe('AuthorizationAlreadyUsed');
  });

  it('lets a payer cancel an unused authorization, after which it cannot be used', async () => {
    const authorization = await authorize(settlement, usdc);
    const domain = await readTokenDomain(settlement.publicClient, usdc);
    const cancelSignature = await payer.signTypedData({
      domain,
      types: {
        CancelAuthorization: [
          { name: 'authorizer', type: 'address' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'CancelAuthorization',
      message: { authorizer: payer.address, nonce: authorization.message.nonce },
    });
    const txHash = await settlement.relayer.writeContract({
      address: usdc,
      abi: eip3009TokenAbi,
      functionName: 'cancelAuthorization',
      args: [payer.address, authorization.message.nonce, cancelSignature],
    });
    expect((await settlement.publicClient.waitForTransactionReceipt({ hash: txHash })).status).toBe(
      'success',
    );
    expect(await failureOf(submit(settlement, authorization))).toBe('AuthorizationAlreadyUsed');
  });

  it('lets only the payee submit a receiveWithAuthorization', async () => {
    const now = await chainNowUnixS(funding);
    const message = {
      from: payer.address,
      to: payee,
      value: ONE_TOKEN_ATOMIC,
      validAfter: 0n,
      validBefore: now + 600n,
      nonce: keccak256(stringToHex(`receive-${now}`)) as Hex,
    };
    const signature = await payer.signTypedData({
      domain: await readTokenDomain(funding.publicClient, usdt0),
      types: {
        // The same fields as TransferWithAuthorization under another primary type (EIP-3009).
        ReceiveWithAuthorization: TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization,
      },
      primaryType: 'ReceiveWithAuthorization',
      message,
    });
    const byRelayer = funding.publicClient.simulateContract({
      address: usdt0,
      abi: eip3009TokenAbi,
      functionName: 'receiveWithAuthorization',
      args: [
        message.from,
        message.to,
        message.value,
        message.validAfter,
        message.validBefore,
        message.nonce,
        signature,
      ],
      account: keys.relayer.account,
    });
    expect(await failureOf(byRelayer)).toBe('CallerMustBePayee');
  });

  it('mints only for the deployer', async () => {
    const notMinter = mintToken({
      publicClient: funding.publicClient,
      minter: funding.relayer,
      token: usdt0,
      to: payee,
      amountAtomic: 1n,
    });
    expect(await failureOf(notMinter)).toBe('NotMinter');
  });
});
