// Actions on EIP-3009 tokens (our devnet token, and real USDC/USDT0 which share the interface):
// balances, signing a TransferWithAuthorization with the domain read from the contract, relaying
// it, and devnet minting (authorization state and events: eip3009Facts.ts). Amounts are atomic bigints; nothing here holds keys.
import crypto from 'node:crypto';
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  type Hex,
  type LocalAccount,
  type TypedDataDomain,
  bytesToHex,
  encodeFunctionData,
  parseAbiItem,
  parseSignature,
  size,
  toFunctionSelector,
} from 'viem';
import { getEip712Domain } from 'viem/actions';
import { eip3009TokenAbi } from '../../contracts/artifacts/abis';
import type { ChainPublicClient, ChainWalletClient } from './clients';
import { TransactionRevertedError } from './errors';

export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** A relayed transfer's receipt arrives in milliseconds locally; on a real chain in seconds. */
export const DEFAULT_RECEIPT_TIMEOUT_MS = 120_000;
const ECDSA_SIGNATURE_BYTES = 65;

export interface TransferAuthorizationMessage {
  readonly from: Address;
  readonly to: Address;
  readonly value: bigint;
  readonly validAfter: bigint;
  readonly validBefore: bigint;
  readonly nonce: Hex;
}

export interface SignedTransferAuthorization {
  readonly token: Address;
  readonly domain: TypedDataDomain;
  readonly message: TransferAuthorizationMessage;
  readonly signature: Hex;
}

export interface MinedTransaction {
  readonly txHash: Hex;
  readonly blockNumber: bigint;
  readonly gasUsed: bigint;
}

/** The v, r, s form of transferWithAuthorization (EIP-3009), the one every such token has. */
const TRANSFER_WITH_AUTHORIZATION_VRS = parseAbiItem(
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
);
const TRANSFER_WITH_AUTHORIZATION_VRS_SELECTOR = toFunctionSelector(
  TRANSFER_WITH_AUTHORIZATION_VRS,
);

/**
 * The calldata of transferWithAuthorization(…, v, r, s) for a signed authorization, to simulate
 * or send it. The selector is computed once, and addresses are encoded as given (checksummed or
 * lower case) without a checksum per call: one payment's simulation encoded this way costs a few
 * microseconds where viem's per-call ABI lookup cost about 40.
 */
export function transferWithAuthorizationCalldata(
  authorization: TransferAuthorizationMessage & { readonly signature: Hex },
): Hex {
  const { v, yParity, r, s } = parseSignature(authorization.signature);
  return encodeFunctionData({
    abi: [TRANSFER_WITH_AUTHORIZATION_VRS],
    functionName: TRANSFER_WITH_AUTHORIZATION_VRS_SELECTOR,
    args: [
      authorization.from.toLowerCase() as Address,
      authorization.to.toLowerCase() as Address,
      authorization.value,
      authorization.validAfter,
      authorization.validBefore,
      authorization.nonce,
      Number(v ?? yParity),
      r,
      s,
    ],
  });
}

/** The owner's balance at `blockNumber` (default: the latest block). */
export function readTokenBalance(
  publicClient: ChainPublicClient,
  token: Address,
  owner: Address,
  blockNumber?: bigint,
): Promise<bigint> {
  return publicClient.readContract({
    address: token,
    abi: eip3009TokenAbi,
    functionName: 'balanceOf',
    args: [owner],
    ...(blockNumber === undefined ? {} : { blockNumber }),
  });
}

/** The token's own EIP-712 domain (ERC-5267); never hard-coded, names differ per deployment. */
export async function readTokenDomain(
  publicClient: ChainPublicClient,
  token: Address,
): Promise<TypedDataDomain> {
  const { domain } = await getEip712Domain(publicClient, { address: token });
  return {
    name: domain.name,
    version: domain.version,
    chainId: domain.chainId,
    verifyingContract: domain.verifyingContract,
  };
}

/** 32 random bytes from the OS CSPRNG: EIP-3009 nonces are unordered, so only uniqueness matters. */
export function randomAuthorizationNonce(): Hex {
  return bytesToHex(crypto.randomBytes(32));
}

export interface SignTransferParameters {
  readonly publicClient: ChainPublicClient;
  readonly token: Address;
  /** The payer; signs off-chain and needs no gas. */
  readonly signer: LocalAccount;
  readonly to: Address;
  readonly valueAtomic: bigint;
  /** The authorization is valid strictly after this time; default 0 (immediately). */
  readonly validAfterUnixS?: bigint;
  /** …and strictly before this time. Required: every authorization must expire. */
  readonly validBeforeUnixS: bigint;
  /** Default: a fresh random nonce. */
  readonly nonce?: Hex;
}

export async function signTransferWithAuthorization(
  params: SignTransferParameters,
): Promise<SignedTransferAuthorization> {
  if (params.valueAtomic <= 0n)
    throw new RangeError(`valueAtomic must be positive, got ${params.valueAtomic}`);
  const domain = await readTokenDomain(params.publicClient, params.token);
  const message: TransferAuthorizationMessage = {
    from: params.signer.address,
    to: params.to,
    value: params.valueAtomic,
    validAfter: params.validAfterUnixS ?? 0n,
    validBefore: params.validBeforeUnixS,
    nonce: params.nonce ?? randomAuthorizationNonce(),
  };
  const signature = await params.signer.signTypedData({
    domain,
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  return { token: params.token, domain, message, signature };
}

export interface SubmitTransferParameters {
  readonly publicClient: ChainPublicClient;
  /** Pays the gas; gains nothing from the transfer. */
  readonly relayer: ChainWalletClient;
  readonly authorization: SignedTransferAuthorization;
  readonly timeoutMs?: number;
}

/**
 * Simulates first, so a doomed authorization (used, expired, bad signature) fails with the token's
 * decoded custom error and costs no gas; then sends and waits for the receipt. 65-byte signatures
 * use the (v, r, s) entry point that every USDC/USDT0 deployment has; others the `bytes` form.
 */
export async function submitTransferWithAuthorization(
  params: SubmitTransferParameters,
): Promise<MinedTransaction> {
  const { publicClient, relayer, authorization } = params;
  const { from, to, value, validAfter, validBefore, nonce } = authorization.message;
  const base = {
    address: authorization.token,
    abi: eip3009TokenAbi,
    functionName: 'transferWithAuthorization',
  } as const;
  let txHash: Hex;
  if (size(authorization.signature) === ECDSA_SIGNATURE_BYTES) {
    const { r, s, yParity } = parseSignature(authorization.signature);
    const { request } = await publicClient.simulateContract({
      ...base,
      account: relayer.account,
      args: [from, to, value, validAfter, validBefore, nonce, 27 + yParity, r, s],
    });
    txHash = await relayer.writeContract(request);
  } else {
    const { request } = await publicClient.simulateContract({
      ...base,
      account: relayer.account,
      args: [from, to, value, validAfter, validBefore, nonce, authorization.signature],
    });
    txHash = await relayer.writeContract(request);
  }
  return waitForSuccess(publicClient, txHash, 'transferWithAuthorization', params.timeoutMs);
}

export interface MintParameters {
  readonly publicClient: ChainPublicClient;
  /** Must be the token's immutable minter (the devnet deployer). */
  readonly minter: ChainWalletClient;
  readonly token: Address;
  readonly to: Address;
  readonly amountAtomic: bigint;
  readonly timeoutMs?: number;
}

/** Devnet only: real USDC/USDT0 have no such entry point for us. */
export async function mintToken(params: MintParameters): Promise<MinedTransaction> {
  if (params.amountAtomic <= 0n)
    throw new RangeError(`amountAtomic must be positive, got ${params.amountAtomic}`);
  const { request } = await params.publicClient.simulateContract({
    address: params.token,
    abi: eip3009TokenAbi,
    functionName: 'mint',
    args: [params.to, params.amountAtomic],
    account: params.minter.account,
  });
  const txHash = await params.minter.writeContract(request);
  return waitForSuccess(params.publicClient, txHash, 'mint', params.timeoutMs);
}

async function waitForSuccess(
  publicClient: ChainPublicClient,
  txHash: Hex,
  action: string,
  timeoutMs: number | undefined,
): Promise<MinedTransaction> {
  const receipt = await publicClient.waitForTransactionReceipt({
    hash: txHash,
    timeout: timeoutMs ?? DEFAULT_RECEIPT_TIMEOUT_MS,
  });
  if (receipt.status !== 'success') throw new TransactionRevertedError(action, txHash);
  return { txHash, blockNumber: receipt.blockNumber, gasUsed: receipt.gasUsed };
}

/**
 * The custom error name a contract reverted with (e.g. `AuthorizationAlreadyUsed`), found anywhere
 * in a viem error chain; null when the failure was not a decoded revert (network, timeout, …).
 */
export function revertErrorName(error: unknown): string | null {
  if (!(error instanceof BaseError)) return null;
  const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError);
  return reverted instanceof ContractFunctionRevertedError
    ? (reverted.data?.errorName ?? null)
    : null;
}
