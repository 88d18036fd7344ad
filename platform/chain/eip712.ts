// EIP-712 typed-data hashing for the paid path's hot spots (the payer's authorization in the group
// check, the x402 receipts and offers we sign), giving exactly viem's hashTypedData, at a fraction
// of its cost. viem hashes the domain, the type string and every field with @noble/hashes' keccak
// on each call (about 30 µs a keccak here, seven per authorization); this keeps each domain
// separator and each struct's type hash once computed (by viem itself), and hashes a message's
// fields with js-sha3 (core/canon/keccak, ~3.5x faster). Only flat structs of the atomic types
// below take the short path, and only with values that viem would accept unchanged (an address in
// lower case or with a valid checksum, an integer in range, a string, bytesN of exactly N bytes);
// any other input goes to viem's hashTypedData whole, so it hashes, or refuses, exactly as viem
// does. eip712.test.ts holds the two to the same digest on random messages and domains.
import {
  checksumAddress,
  domainSeparator,
  hashTypedData,
  type HashTypedDataParameters,
  type Hex,
  hexToBytes,
  type TypedData,
  type TypedDataDefinition,
  validateTypedData,
  getTypesForEIP712Domain,
} from 'viem';
import { keccak256Bytes, keccak256Hex } from '../../core/canon/keccak';

type TypedDataInput = Parameters<typeof hashTypedData>[0];
type TypeField = { readonly name: string; readonly type: string };
type Types = Readonly<Record<string, readonly TypeField[]>>;

/** How one field of a flat struct is encoded into its 32-byte word; null: the value is not for the short path. */
type FieldEncoder = (value: unknown, word: Uint8Array) => boolean;

interface StructLayout {
  readonly typeHash: Uint8Array;
  readonly fields: ReadonlyArray<{ readonly name: string; readonly encode: FieldEncoder }>;
}

/** Domain separators kept, by domain (a signer or a token has one or a few). */
const DOMAINS_KEPT = 256;
const domainSeparators = new Map<string, Uint8Array>();
/** Struct layouts by types object (the libraries pass the same constant each time), then primary type. */
const layouts = new WeakMap<object, Map<string, StructLayout | null>>();

/** viem's validateReference, as a pattern: a struct name that is not an atomic type's. */
const STRUCT_NAME = /^(?!(address|bool|string|(u?int|bytes)[0-9]*)$)[A-Za-z0-9_$:]+$/;
const LOWER_ADDRESS = /^0x[0-9a-f]{40}$/;
const ANY_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** viem's strict isAddress: lower case, or mixed case with the EIP-55 checksum. */
function isStrictAddress(value: string): boolean {
  if (!ANY_ADDRESS.test(value)) return false;
  return LOWER_ADDRESS.test(value) || checksumAddress(value as Hex) === value;
}

function encodeAddress(value: unknown, word: Uint8Array): boolean {
  if (typeof value !== 'string' || !isStrictAddress(value)) return false;
  word.set(hexToBytes(value as Hex), 12);
  return true;
}

function unsignedEncoder(bits: number): FieldEncoder {
  const limit = 1n << BigInt(bits);
  return (value, word) => {
    let n: bigint;
    if (typeof value === 'bigint') n = value;
    else if (typeof value === 'number' && Number.isSafeInteger(value)) n = BigInt(value);
    else return false;
    if (n < 0n || n >= limit) return false;
    for (let index = 31; index >= 0 && n > 0n; index -= 1) {
      word[index] = Number(n & 0xffn);
      n >>= 8n;
    }
    return true;
  };
}

function fixedBytesEncoder(size: number): FieldEncoder {
  const pattern = new RegExp(`^0x[0-9a-fA-F]{${size * 2}}$`);
  return (value, word) => {
    if (typeof value !== 'string' || !pattern.test(value)) return false;
    word.set(hexToBytes(value as Hex), 0);
    return true;
  };
}

function encodeString(value: unknown, word: Uint8Array): boolean {
  if (typeof value !== 'string') return false;
  word.set(keccak256Bytes(value), 0);
  return true;
}

function encodeBool(value: unknown, word: Uint8Array): boolean {
  if (typeof value !== 'boolean') return false;
  word[31] = value ? 1 : 0;
  return true;
}

/** The encoder of an atomic type the short path takes; null for any other (structs, arrays, bytes, int). */
function encoderOf(type: string): FieldEncoder | null {
  if (type === 'address') return encodeAddress;
  if (type === 'string') return encodeString;
  if (type === 'bool') return encodeBool;
  const uint = /^uint(\d{1,3})$/.exec(type);
  if (uint) {
    const bits = Number(uint[1]);
    return bits >= 8 && bits <= 256 && bits % 8 === 0 ? unsignedEncoder(bits) : null;
  }
  const bytes = /^bytes(\d{1,2})$/.exec(type);
  if (bytes) {
    const size = Number(bytes[1]);
    return size >= 1 && size <= 32 ? fixedBytesEncoder(size) : null;
  }
  return null;
}

function layoutOf(types: Types, primaryType: string): StructLayout | null {
  let byPrimary = layouts.get(types);
  if (!byPrimary) {
    byPrimary = new Map();
    layouts.set(types, byPrimary);
  }
  if (byPrimary.has(primaryType)) return byPrimary.get(primaryType)!;
  let layout: StructLayout | null = null;
  const fields = types[primaryType];
  // One struct, named as viem accepts a struct name; anything more is viem's to validate and hash.
  const alone = Object.keys(types).length === 1 && STRUCT_NAME.test(primaryType);
  if (alone && Array.isArray(fields)) {
    const encoders = fields.map((field) => ({ name: field.name, encode: encoderOf(field.type) }));
    if (
      encoders.every((field) => field.encode !== null) &&
      new Set(fields.map((f) => f.name)).size === fields.length
    )
      layout = {
        typeHash: keccak256Bytes(
          `${primaryType}(${fields.map((field) => `${field.type} ${field.name}`).join(',')})`,
        ),
        fields: encoders as StructLayout['fields'],
      };
  }
  byPrimary.set(primaryType, layout);
  return layout;
}

/** The fields an EIP-712 domain may hold, in the order viem types them. */
const DOMAIN_FIELDS: readonly string[] = [
  'name',
  'version',
  'chainId',
  'verifyingContract',
  'salt',
];

function domainKey(domain: Record<string, unknown>): string | null {
  const parts: string[] = [];
  for (const name of DOMAIN_FIELDS) {
    const value = domain[name];
    // viem leaves a null or absent field out of the domain's type alike.
    if (value === undefined || value === null) parts.push('-');
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint')
      parts.push(`${typeof value}:${String(value)}`);
    else return null;
  }
  if (Object.keys(domain).some((name) => !DOMAIN_FIELDS.includes(name))) return null;
  return parts.join('\u0000');
}

/** The domain's separator, validated and computed by viem the first time it is seen; null: viem's to refuse. */
function domainSeparatorOf(domain: Record<string, unknown>): Uint8Array | null {
  const key = domainKey(domain);
  if (key === null) return null;
  let separator = domainSeparators.get(key);
  if (!separator) {
    try {
      validateTypedData({
        domain,
        types: { EIP712Domain: getTypesForEIP712Domain({ domain }) },
        primaryType: 'EIP712Domain',
      } as unknown as Parameters<typeof validateTypedData>[0]);
      separator = hexToBytes(domainSeparator({ domain }));
    } catch {
      return null;
    }
    if (domainSeparators.size >= DOMAINS_KEPT)
      domainSeparators.delete(domainSeparators.keys().next().value as string);
    domainSeparators.set(key, separator);
  }
  return separator;
}

/**
 * The digest by the short path, or null when the input is not one it takes (then only viem's
 * hashTypedData can answer). Where it answers, the answer is viem's.
 */
export function shortPathDigest(typedData: TypedDataDefinition | TypedDataInput): Hex | null {
  const { types, primaryType, message, domain } = typedData as unknown as {
    types: Types;
    primaryType: string;
    message: Record<string, unknown>;
    domain?: Record<string, unknown>;
  };
  if (
    types === null ||
    typeof types !== 'object' ||
    typeof message !== 'object' ||
    message === null
  )
    return null;
  const layout = layoutOf(types, primaryType);
  const separator = layout ? domainSeparatorOf(domain ?? {}) : null;
  if (!layout || !separator) return null;
  const data = new Uint8Array(32 * (layout.fields.length + 1));
  data.set(layout.typeHash, 0);
  const fieldsFit = layout.fields.every((field, index) =>
    field.encode(message[field.name], data.subarray(32 * (index + 1), 32 * (index + 2))),
  );
  if (!fieldsFit) return null;
  const envelope = new Uint8Array(66);
  envelope[0] = 0x19;
  envelope[1] = 0x01;
  envelope.set(separator, 2);
  envelope.set(keccak256Bytes(data), 34);
  return keccak256Hex(envelope);
}

/** The EIP-712 digest of `typedData`, exactly as viem's hashTypedData gives it (or refuses it). */
export function hashTypedDataFast<
  const typedData extends TypedData | Record<string, unknown>,
  primaryType extends keyof typedData | 'EIP712Domain',
>(typedData: HashTypedDataParameters<typedData, primaryType>): Hex {
  return shortPathDigest(typedData as TypedDataInput) ?? hashTypedData(typedData);
}
