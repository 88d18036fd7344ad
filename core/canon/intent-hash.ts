// The EIP-712 typed data of a SpendIntent and its hash, the intentHash. Exported whole (domain,
// types, message builder) because owners sign exactly this in their wallets: a wallet signature
// over it is a valid approval, so the definition here is a public contract and must not drift.
import type { Address, Hex } from 'viem';
import { canonicalEndpoint } from './endpoint';
import { hashJson } from './jcs';
import { keccak256Bytes, keccak256Hex } from './keccak';

export const SPEND_INTENT_DOMAIN = {
  name: 'AgentSpendControl',
  version: '1',
  chainId: 196,
} as const;

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

/**
 * The same typed data as `eth_signTypedData_v4` JSON: the EIP712Domain type spelled out and every
 * uint256 as a decimal string, so a browser wallet signs exactly what the service recovers.
 */
export function spendIntentTypedDataJson(message: SpendIntentMessage): Record<string, unknown> {
  return {
    domain: SPEND_INTENT_DOMAIN,
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
      ],
      ...SPEND_INTENT_TYPES,
    },
    primaryType: SPEND_INTENT_PRIMARY_TYPE,
    message: {
      ...message,
      policyId: message.policyId.toString(),
      amount: message.amount.toString(),
      deadline: message.deadline.toString(),
      nonce: message.nonce.toString(),
    },
  };
}

// The EIP-712 digest, encoded directly: the type hash and the domain separator never change, so
// they are computed once; encodeData is fourteen 32-byte words (strings as the keccak256 of their
// UTF-8, addresses left-padded, uint256 big-endian). Equal to viem's hashTypedData over
// spendIntentTypedData (a property test holds them together) at a fifth of its cost. Plain
// Node's Buffer where there is one, plain Uint8Array in browsers (the agent SDK) — same digest.
const TYPE_HASH = keccak256Bytes(SPEND_INTENT_TYPE_STRING);
const UINT256_LIMIT = 1n << 256n;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The value of one hex digit's character code (0–9, a–f, A–F; callers checked the text). */
function nibble(code: number): number {
  return code <= 0x39 ? code - 0x30 : (code | 0x20) - 0x57;
}

/** Writes `hex` (an even number of hex digits, no 0x) into `target` from `offset`. */
function writeHexBytes(target: Uint8Array, offset: number, hex: string): void {
  for (let i = 0; i < hex.length; i += 2)
    target[offset + i / 2] = (nibble(hex.charCodeAt(i)) << 4) | nibble(hex.charCodeAt(i + 1));
}

// Node's Buffer writes hex natively (the hot path of every preflight); a browser has no Buffer.
// The SDK's tests hash the same intent with Buffer taken away and expect the same digest.
type NodeBytes = Uint8Array & {
  write(text: string, offset: number, length: number, encoding: 'hex'): number;
};
// Declared here, not taken from Node's types, so the SDK's browser build compiles this file too.
declare const Buffer: { alloc(length: number): NodeBytes } | undefined;
const NODE_BUFFER = typeof Buffer === 'undefined' ? undefined : Buffer;
const newWords: (length: number) => Uint8Array =
  NODE_BUFFER === undefined
    ? (length) => new Uint8Array(length)
    : (length) => NODE_BUFFER.alloc(length);
const writeHex: (target: Uint8Array, offset: number, hex: string) => void =
  NODE_BUFFER === undefined
    ? writeHexBytes
    : (target, offset, hex) => {
        (target as NodeBytes).write(hex, offset, hex.length / 2, 'hex');
      };

const DOMAIN_SEPARATOR = (() => {
  const words = newWords(32 * 4);
  words.set(keccak256Bytes('EIP712Domain(string name,string version,uint256 chainId)'), 0);
  words.set(keccak256Bytes(SPEND_INTENT_DOMAIN.name), 32);
  words.set(keccak256Bytes(SPEND_INTENT_DOMAIN.version), 64);
  writeHex(words, 96, SPEND_INTENT_DOMAIN.chainId.toString(16).padStart(64, '0'));
  return keccak256Bytes(words);
})();

class SpendIntentEncoding {
  readonly words = newWords(32 * 15);
  private offset = 32;

  constructor() {
    this.words.set(TYPE_HASH, 0);
  }

  uint256(name: string, value: bigint): this {
    if (typeof value !== 'bigint' || value < 0n || value >= UINT256_LIMIT)
      throw new RangeError(`${name} is not a uint256`);
    writeHex(this.words, this.offset, value.toString(16).padStart(64, '0'));
    this.offset += 32;
    return this;
  }

  bytes32(name: string, value: string): this {
    if (!BYTES32.test(value)) throw new RangeError(`${name} is not a bytes32`);
    writeHex(this.words, this.offset, value.slice(2));
    this.offset += 32;
    return this;
  }

  address(name: string, value: string): this {
    if (!ADDRESS.test(value)) throw new RangeError(`${name} is not an address`);
    writeHex(this.words, this.offset + 12, value.slice(2));
    this.offset += 32;
    return this;
  }

  string(name: string, value: string): this {
    if (typeof value !== 'string') throw new TypeError(`${name} is not a string`);
    this.words.set(keccak256Bytes(value), this.offset);
    this.offset += 32;
    return this;
  }
}

export function hashSpendIntentMessage(message: SpendIntentMessage): Hex {
  const encoding = new SpendIntentEncoding()
    .uint256('policyId', message.policyId)
    .bytes32('policyHash', message.policyHash)
    .string('agentId', message.agentId)
    .string('category', message.category)
    .string('provider', message.provider)
    .string('capability', message.capability)
    .bytes32('itemHash', message.itemHash)
    .address('recipient', message.recipient)
    .string('network', message.network)
    .address('token', message.token)
    .uint256('amount', message.amount)
    .uint256('deadline', message.deadline)
    .uint256('nonce', message.nonce)
    .string('endpoint', message.endpoint);
  const digestInput = new Uint8Array(66);
  digestInput[0] = 0x19;
  digestInput[1] = 0x01;
  digestInput.set(DOMAIN_SEPARATOR, 2);
  digestInput.set(keccak256Bytes(encoding.words), 34);
  return keccak256Hex(digestInput);
}

/** intentHash of an intent given in domain units. */
export function intentHash(fields: SpendIntentFields): Hex {
  return hashSpendIntentMessage(spendIntentMessage(fields));
}
