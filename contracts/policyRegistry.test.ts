// PolicyRegistry on a real anvil (chain 196, Cancun) with the committed artifact: it derives the
// same policyId as the service, refuses a taken id, and lets only the owner update, pause and
// resume, each with its event.
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  type Hex,
  parseEther,
  parseEventLogs,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { policyIdFor } from '../core/canon/policy-identity';
import { type AnvilNode, startAnvil } from '../platform/chain/anvil';
import {
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
  type ChainPublicClient,
} from '../platform/chain/clients';
import { deployArtifact } from '../platform/chain/deploy';
import { policyRegistryAbi, policyRegistryBytecode } from './artifacts/abis';

const HASH_1 = `0x${'11'.repeat(32)}` as Hex;
const HASH_2 = `0x${'22'.repeat(32)}` as Hex;

let node: AnvilNode;
let publicClient: ChainPublicClient;
let registry: Address;
const owner = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());

function walletOf(account: typeof owner) {
  return createChainWalletClient(node, account, { pollingIntervalMs: 20 });
}

async function send(
  account: typeof owner,
  functionName: 'register' | 'update' | 'pause' | 'resume',
  args: readonly unknown[],
) {
  const hash = await walletOf(account).writeContract({
    address: registry,
    abi: policyRegistryAbi,
    functionName,
    args,
  } as never);
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
  return parseEventLogs({ abi: policyRegistryAbi, logs: receipt.logs });
}

/** The custom error a call reverts with, found by simulating it. */
async function revertName(
  account: typeof owner,
  functionName: 'register' | 'update' | 'pause' | 'resume',
  args: readonly unknown[],
): Promise<string> {
  try {
    await publicClient.simulateContract({
      account,
      address: registry,
      abi: policyRegistryAbi,
      functionName,
      args,
    } as never);
  } catch (error) {
    const reverted =
      error instanceof BaseError
        ? error.walk((e) => e instanceof ContractFunctionRevertedError)
        : null;
    if (reverted instanceof ContractFunctionRevertedError)
      return reverted.data?.errorName ?? 'unknown';
    throw error;
  }
  throw new Error(`${functionName} did not revert`);
}

beforeAll(async () => {
  node = await startAnvil({ chainId: 196 });
  publicClient = createChainPublicClient(node, { pollingIntervalMs: 20 });
  const testClient = createAnvilTestClient(node);
  for (const account of [owner, stranger])
    await testClient.setBalance({ address: account.address, value: parseEther('10') });
  ({ address: registry } = await deployArtifact({
    publicClient,
    walletClient: walletOf(owner),
    contractName: 'PolicyRegistry',
    abi: policyRegistryAbi,
    bytecode: policyRegistryBytecode,
    args: [],
  }));
});

afterAll(async () => {
  await node?.stop();
});

describe('PolicyRegistry', () => {
  it('derives the service’s policyId from the sender and the owner nonce', async () => {
    for (const nonce of [1n, 2n, 2n ** 200n]) {
      const onChain = await publicClient.readContract({
        address: registry,
        abi: policyRegistryAbi,
        functionName: 'policyIdOf',
        args: [owner.address, nonce],
      });
      expect(onChain.toString()).toBe(policyIdFor(owner.address, nonce));
    }
  });

  it('registers under the derived id with PolicyRegistered(policyId, owner, policyHash, expiresAt), once', async () => {
    const events = await send(owner, 'register', [1n, HASH_1, 1_830_000_000n]);
    expect(events).toHaveLength(1);
    expect(events[0].eventName).toBe('PolicyRegistered');
    expect(events[0].args).toEqual({
      policyId: BigInt(policyIdFor(owner.address, 1n)),
      owner: owner.address,
      policyHash: HASH_1,
      expiresAt: 1_830_000_000n,
    });
    const record = await publicClient.readContract({
      address: registry,
      abi: policyRegistryAbi,
      functionName: 'recordOf',
      args: [BigInt(policyIdFor(owner.address, 1n))],
    });
    expect(record).toEqual({
      owner: owner.address,
      policyHash: HASH_1,
      expiresAt: 1_830_000_000n,
      paused: false,
    });
    expect(await revertName(owner, 'register', [1n, HASH_2, 0n])).toBe('PolicyIdTaken');
  });

  it('refuses nonce 0 and the zero hash', async () => {
    expect(await revertName(owner, 'register', [0n, HASH_1, 0n])).toBe('OwnerNonceZero');
    expect(await revertName(owner, 'register', [9n, `0x${'00'.repeat(32)}`, 0n])).toBe(
      'PolicyHashZero',
    );
  });

  it('lets only the owner update, pause and resume, each with its event', async () => {
    const policyId = BigInt(policyIdFor(owner.address, 1n));
    expect(await revertName(stranger, 'update', [policyId, HASH_2, 0n])).toBe('NotPolicyOwner');
    expect(await revertName(stranger, 'pause', [policyId])).toBe('NotPolicyOwner');
    expect(
      await revertName(owner, 'update', [BigInt(policyIdFor(owner.address, 77n)), HASH_2, 0n]),
    ).toBe('PolicyNotRegistered');

    expect((await send(owner, 'update', [policyId, HASH_2, 0n]))[0]).toMatchObject({
      eventName: 'PolicyUpdated',
      args: { policyId, policyHash: HASH_2, expiresAt: 0n },
    });
    expect((await send(owner, 'pause', [policyId]))[0]).toMatchObject({
      eventName: 'PolicyPaused',
      args: { policyId },
    });
    expect(await revertName(owner, 'pause', [policyId])).toBe('PolicyAlreadyPaused');
    expect((await send(owner, 'resume', [policyId]))[0]).toMatchObject({
      eventName: 'PolicyResumed',
      args: { policyId },
    });
    expect(await revertName(owner, 'resume', [policyId])).toBe('PolicyNotPaused');
  });

  it('gives another sender the same nonce under a different id: nobody registers in another owner’s name', async () => {
    const events = await send(stranger, 'register', [1n, HASH_1, 0n]);
    expect(events[0].args).toMatchObject({
      policyId: BigInt(policyIdFor(stranger.address, 1n)),
      owner: stranger.address,
    });
  });
});
