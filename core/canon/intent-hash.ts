// The EIP-712 typed data of a SpendIntent and its hash, the intentHash. Exported whole (domain,
// types, message builder) because owners sign exactly this in their wallets: a wallet signature
// over it is a valid approval, so the definition here is a public contract and must not drift.
import { hashTypedData, type Address, type Hex } from 'viem';
import { canonicalEndpoint } from './endpoint';
import { hashJson } from './jcs';

export const SPEND_INTENT_DOMAIN = { name: 'AgentSpendControl', version: '1', chainId: 196 } as const;

export const SPEND_INTENT_PRIMARY_TYPE = 'SpendIntent';

/** Field order is part of the hash; it matches SPEND_INTENT_TYPE_STRING exactly. */
export const SPEND_INTENT_TYPES = {
  SpendIntent: [
    { name: 'policyId', type: 'uint256' },
    { name: 'policyHash', type: 'bytes32' },
    { name: 'agentId', type: 'string' },
    { name: 'category', type: 'string' },
    { name: 'provider', type: 'string' },
    { name: 'capability', type: 'string' },
    { name: 'itemHash', type: 'bytes32' },
    { name: 'recipient', type: 'address' },
    { name: 'network', type: 'string' },
    { name: 'token', type: 'address' },
    { name: 'amount', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
    { name: 'endpoint', type: 'string' },
  ],
} as const;

export const SPEND_INTENT_TYPE_STRING =
  'SpendIntent(uint256 policyId,bytes32 policyHash,string agentId,string category,string provider,string capability,bytes32 itemHash,address recipient,string network,address token,uint256 amount,uint256 deadline,uint256 nonce,string endpoint)';

/** `itemHash = hashJson(item)`: the item is bound by its canonical JSON, not its spelling. */
export function itemHash(item: unknown): Hex {
  return hashJson(item);
}

/** The EIP-712 message, field for field as signed. */
export interface SpendIntentMessage {
  readonly policyId: bigint;
  readonly policyHash: Hex;
  readonly agentId: string;
  readonly category: string;
  readonly provider: string;
  readonly capability: string;
  readonly itemHash: Hex;
  readonly recipient: Address;
  readonly network: string;
  readonly token: Address;
  readonly amount: bigint;
  readonly deadline: bigint;
  readonly nonce: bigint;
  readonly endpoint: string;
}

/** What the domain knows about an intent, in domain units, before it becomes a message. */
export interface SpendIntentFields {
  readonly policyId: string | bigint;
  readonly policyHash: Hex | string;
  readonly agentId: string;
  readonly category: string;
  readonly provider: string;
  readonly capability: string;
  /** itemHash(item), computed once when the intent is validated. */
  readonly itemHash: Hex | string;
  readonly recipient: Address | string;
  readonly network: string;
  readonly token: Address | string;
  readonly amountAtomic: bigint;
  readonly deadlineUnixSeconds: number | bigint;
  readonly nonce: bigint;
  /** Raw or canonical; it is canonicalised here so a wallet and the service sign the same text. */
  readonly endpoint: string;
}

export function spendIntentMessage(fields: SpendIntentFields): SpendIntentMessage {
  return {
    policyId: BigInt(fields.policyId),
    policyHash: fields.policyHash.toLowerCase() as Hex,
    agentId: fields.agentId,
    category: fields.category,
    provider: fields.provider,
    capability: fields.capability,
    itemHash: fields.itemHash.toLowerCase() as Hex,
    recipient: fields.recipient.toLowerCase() as Address,
    network: fields.network,
    token: fields.token.toLowerCase() as Address,
    amount: fields.amountAtomic,
    deadline: BigInt(fields.deadlineUnixSeconds),
    nonce: fields.nonce,
    endpoint: canonicalEndpoint(fields.endpoint),
  };
}

/** Everything a wallet's `signTypedData` needs, ready to pass through unchanged. */
export function spendIntentTypedData(message: SpendIntentMessage) {
  return {
    domain: SPEND_INTENT_DOMAIN,
    types: SPEND_INTENT_TYPES,
    primaryType: SPEND_INTENT_PRIMARY_TYPE,
    message,
  } as const;
}

export function hashSpendIntentMessage(message: SpendIntentMessage): Hex {
  return hashTypedData(spendIntentTypedData(message));
}

/** intentHash of an intent given in domain units. */
export function intentHash(fields: SpendIntentFields): Hex {
  return hashSpendIntentMessage(spendIntentMessage(fields));
}
