// On-chain registration, the policy subgraph's half: it builds the unsigned PolicyRegistry call an
// owner sends from their own wallet (the service holds no owner key), and reads a confirmed
// receipt back: the PolicyRegistered/PolicyUpdated event for this policy, from the configured
// registry, whose hash must equal the stored one. One confirmation (a mined, successful receipt).
import {
  type Address,
  encodeFunctionData,
  getAddress,
  type Hex,
  isAddressEqual,
  parseEventLogs,
  TransactionReceiptNotFoundError,
  zeroAddress,
} from 'viem';
import { policyRegistryAbi } from '../../../contracts/artifacts/abis';
import { AppError } from '../../../core/errors';
import {
  caip2Of,
  createChainPublicClient,
  type ChainPublicClient,
} from '../../../platform/chain/clients';
import type { FundingChainAccess, SubgraphContext } from '../../kit';
import type { PolicyRow } from './reads';

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

export interface RegistrationRequestView {
  policyId: string;
  chainId: number;
  network: string;
  from: string;
  to: string;
  data: Hex;
  value: '0';
  function: 'register' | 'update';
  ownerNonce: string;
  policyHash: string;
  expiresAtUnix: string;
}

/** A registry event for one policy, as read from a confirmed receipt. */
export interface RegistryEvent {
  readonly chainId: number;
  readonly registry: string;
  readonly txHash: string;
  readonly blockNumber: bigint;
  readonly logIndex: number;
  readonly event: 'PolicyRegistered' | 'PolicyUpdated';
  readonly policyHash: string;
  /** Set for PolicyRegistered only. */
  readonly owner: string | null;
}

interface RegistryAccess {
  readonly chain: FundingChainAccess;
  readonly registry: Address;
  readonly client: ChainPublicClient;
}

function registryAccess(ctx: SubgraphContext): RegistryAccess {
  const chain = ctx.chains?.funding;
  if (chain === undefined || chain.policyRegistry === null)
    throw new AppError('POLICY_REGISTRY_NOT_CONFIGURED');
  return {
    chain,
    registry: getAddress(chain.policyRegistry),
    client: createChainPublicClient(chain),
  };
}

function chainUnavailable(error: unknown): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    'The funding chain did not answer; retry shortly.',
    undefined,
    { cause: error },
  );
}

function expiresAtUnix(policy: PolicyRow): bigint {
  return policy.expiresAt === null ? 0n : BigInt(Math.floor(policy.expiresAt.getTime() / 1000));
}

/** register(ownerNonce, hash, expiresAt) for a policy the registry does not know; update(…) once it does. */
export async function registrationRequest(
  ctx: SubgraphContext,
  policy: PolicyRow,
): Promise<RegistrationRequestView> {
  const access = registryAccess(ctx);
  if (policy.ownerNonce === null) {
    throw new AppError(
      'REQUEST_INVALID',
      'This policy has no recorded owner nonce, so it cannot be registered under its id.',
    );
  }
  let registeredOwner: Address;
  try {
    const record = await access.client.readContract({
      address: access.registry,
      abi: policyRegistryAbi,
      functionName: 'recordOf',
      args: [BigInt(policy.id)],
    });
    registeredOwner = record.owner;
  } catch (error) {
    throw chainUnavailable(error);
  }
  const hash = policy.policyHash as Hex;
  const expiresAt = expiresAtUnix(policy);
  const registered = registeredOwner !== zeroAddress;
  const data = registered
    ? encodeFunctionData({
        abi: policyRegistryAbi,
        functionName: 'update',
        args: [BigInt(policy.id), hash, expiresAt],
      })
    : encodeFunctionData({
        abi: policyRegistryAbi,
        functionName: 'register',
        args: [BigInt(policy.ownerNonce), hash, expiresAt],
      });
  return {
    policyId: policy.id,
    chainId: access.chain.chainId,
    network: caip2Of(access.chain.chainId),
    from: getAddress(policy.owner),
    to: access.registry,
    data,
    value: '0',
    function: registered ? 'update' : 'register',
    ownerNonce: policy.ownerNonce,
    policyHash: policy.policyHash,
    expiresAtUnix: expiresAt.toString(),
  };
}

/** The last registry event for `policyId` in the confirmed transaction `txHash`. */
export async function readRegistryEvent(
  ctx: SubgraphContext,
  policyId: string,
  txHash: string,
): Promise<RegistryEvent> {
  if (!TX_HASH.test(txHash)) {
    throw new AppError('REQUEST_INVALID', 'txHash must be 0x followed by 64 hex characters.', [
      { field: 'txHash', reason: 'must be 0x + 64 hex' },
    ]);
  }
  const access = registryAccess(ctx);
  let receipt;
  try {
    receipt = await access.client.getTransactionReceipt({ hash: txHash as Hex });
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError)
      throw new AppError('POLICY_REGISTRATION_PENDING');
    throw chainUnavailable(error);
  }
  if (receipt.status !== 'success') {
    throw new AppError(
      'POLICY_REGISTRATION_INVALID',
      'The transaction reverted; nothing was registered.',
    );
  }
  const events = parseEventLogs({
    abi: policyRegistryAbi,
    eventName: ['PolicyRegistered', 'PolicyUpdated'],
    logs: receipt.logs.filter((log) => isAddressEqual(log.address, access.registry)),
  }).filter((log) => log.args.policyId === BigInt(policyId));
  const last = events[events.length - 1];
  if (last === undefined) {
    throw new AppError(
      'POLICY_REGISTRATION_INVALID',
      `The transaction emitted no registry event for policy ${policyId} from ${access.registry}.`,
    );
  }
  return {
    chainId: access.chain.chainId,
    registry: access.registry.toLowerCase(),
    txHash: txHash.toLowerCase(),
    blockNumber: receipt.blockNumber,
    logIndex: last.logIndex,
    event: last.eventName,
    policyHash: last.args.policyHash.toLowerCase(),
    owner: last.eventName === 'PolicyRegistered' ? last.args.owner.toLowerCase() : null,
  };
}
