// Deploys a compiled contract (ABI + creation bytecode from contracts/artifacts) from a wallet
// client and waits for its receipt; also answers "does this address still hold code?", which is how
// the devnet notices a lost chain state. One confirmation: the callers are local or operator-run.
import { type Abi, type Address, type ContractConstructorArgs, type Hex, getAddress } from 'viem';
import type { ChainPublicClient, ChainWalletClient } from './clients';
import { DeploymentFailedError } from './errors';

/** A deployment receipt on a local chain arrives in milliseconds; on a real chain in seconds. */
export const DEFAULT_DEPLOY_TIMEOUT_MS = 120_000;

export interface DeployArtifactParameters<TAbi extends Abi> {
  readonly publicClient: ChainPublicClient;
  readonly walletClient: ChainWalletClient;
  /** For messages only. */
  readonly contractName: string;
  readonly abi: TAbi;
  readonly bytecode: Hex;
  readonly args: ContractConstructorArgs<TAbi>;
  readonly timeoutMs?: number;
}

export interface Deployment {
  readonly address: Address;
  readonly txHash: Hex;
  readonly blockNumber: bigint;
}

export async function deployArtifact<const TAbi extends Abi>(
  params: DeployArtifactParameters<TAbi>,
): Promise<Deployment> {
  const { publicClient, walletClient, contractName } = params;
  // The generic constructor-args type cannot be narrowed through viem's conditional parameter type.
  const txHash = await walletClient.deployContract({
    abi: params.abi as Abi,
    bytecode: params.bytecode,
    args: params.args as readonly unknown[],
  });
  const receipt = await publicClient.waitForTransactionReceipt({
    hash: txHash,
    timeout: params.timeoutMs ?? DEFAULT_DEPLOY_TIMEOUT_MS,
  });
  if (receipt.status !== 'success')
    throw new DeploymentFailedError(contractName, txHash, 'constructor reverted');
  if (!receipt.contractAddress)
    throw new DeploymentFailedError(contractName, txHash, 'receipt has no contract address');
  // Receipts carry lowercase addresses; callers compare and record the EIP-55 form.
  return { address: getAddress(receipt.contractAddress), txHash, blockNumber: receipt.blockNumber };
}

export async function hasContractCode(
  publicClient: ChainPublicClient,
  address: Address,
): Promise<boolean> {
  const code = await publicClient.getCode({ address });
  return code !== undefined && code !== '0x';
}
