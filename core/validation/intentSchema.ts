// The wire SpendIntent (DECISIONS "SpendIntent (wire)") as a zod schema: every bound and every
// reason of the field details, and the parse into domain units (bigint amount and nonce, lowercase
// addresses, canonical endpoint, unix-second deadline, itemHash). Knows no clock: see intent.ts.
import { stringToBytes, type Address, type Hex } from 'viem';
import { z } from 'zod';
import { canonicalEndpoint, EndpointError, MAX_ENDPOINT_LENGTH } from '../canon/endpoint';
import { canonicalJson, CanonicalJsonError, type JsonValue } from '../canon/jcs';
import { keccak256Hex } from '../canon/keccak';
import { AmountFormatError, parseAtomicAmount, UINT256_MAX } from '../money/amount';
import {
  ADDRESS_PATTERN,
  AGENT_ID_PATTERN,
  CATEGORY_PATTERN,
  HASH_PATTERN,
  isPlainObject,
  NETWORK_PATTERN,
  UINT256_DECIMAL_PATTERN,
} from './fields';
import { parseIsoTimestamp } from './timestamp';
import { plainObject, present, requiredOr } from './zodDetails';

export const INTENT_BOUNDS = {
  providerMaxChars: 253,
  itemDescriptionMaxChars: 500,
  canonicalItemMaxBytes: 4096,
} as const;

/** The one capability grammar (DECISIONS "Bounds"): every reader of a capability name judges by it. */
export const CAPABILITY_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z0-9_*]+)*$/;
export const CAPABILITY_MAX_CHARS = 64;

/** Whether `value` is a capability name: 1–64 characters of CAPABILITY_PATTERN. */
export function isCapabilityName(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length <= CAPABILITY_MAX_CHARS &&
    CAPABILITY_PATTERN.test(value)
  );
}
// Provider names are host-like; whitespace or control characters would make look-alikes.
export const PROVIDER_PATTERN = new RegExp(`^[\\x21-\\x7e]{1,${INTENT_BOUNDS.providerMaxChars}}$`);

export type JsonObject = { readonly [key: string]: JsonValue };

const UINT256_REASON = 'must be a uint256 decimal string';
const ADDRESS_REASON = 'must be 0x followed by 40 hex characters';
const OBJECT_REASON = 'must be a JSON object';

function text(pattern: RegExp, reason: string) {
  return z.string(requiredOr(reason)).regex(pattern, { error: reason });
}

function isUint256(value: string): boolean {
  return UINT256_DECIMAL_PATTERN.test(value) && BigInt(value) <= UINT256_MAX;
}

const uint256Text = z.string(requiredOr(UINT256_REASON)).refine(isUint256, UINT256_REASON);

const address = text(ADDRESS_PATTERN, ADDRESS_REASON).transform(
  (value) => value.toLowerCase() as Address,
);

const capability = text(CAPABILITY_PATTERN, 'must match ^[a-z][a-z0-9_]*(\\.[a-z0-9_*]+)*$').pipe(
  z.string().max(CAPABILITY_MAX_CHARS, `must be at most ${CAPABILITY_MAX_CHARS} characters`),
);

const amountAtomic = present().transform((value, ctx) => {
  try {
    return parseAtomicAmount(value, { allowZero: false });
  } catch (error) {
    if (!(error instanceof AmountFormatError)) throw error;
    ctx.addIssue({
      code: 'custom',
      message: `must match ^[1-9][0-9]{0,29}$ (atomic units): ${error.message}`,
    });
    return z.NEVER;
  }
});

/** Unix seconds; whether they lie after the caller's clock is intent.ts's to judge. */
const deadline = present().transform((value, ctx) => {
  const parsed = parseIsoTimestamp(value);
  if (parsed.ok) return parsed.unixSeconds;
  ctx.addIssue({ code: 'custom', message: parsed.reason });
  return z.NEVER;
});

const endpoint = present().transform((value, ctx) => {
  try {
    return canonicalEndpoint(value as string);
  } catch (error) {
    if (!(error instanceof EndpointError)) throw error;
    ctx.addIssue({
      code: 'custom',
      message: `must be an absolute http(s) URL of at most ${MAX_ENDPOINT_LENGTH} characters: ${error.message}`,
    });
    return z.NEVER;
  }
});

export interface ReadItem {
  readonly value: JsonObject;
  readonly itemHash: Hex;
}

function itemProblem(value: unknown): { path: string[]; reason: string } | string {
  if (!isPlainObject(value)) return { path: [], reason: OBJECT_REASON };
  const description = value.description;
  if (
    description !== undefined &&
    (typeof description !== 'string' || description.length > INTENT_BOUNDS.itemDescriptionMaxChars)
  ) {
    const reason = `must be a string of at most ${INTENT_BOUNDS.itemDescriptionMaxChars} characters`;
    return { path: ['description'], reason };
  }
  try {
    return canonicalJson(value);
  } catch (error) {
    if (!(error instanceof CanonicalJsonError)) throw error;
    // The error's path is already in `a.b[0]` form: one segment, joined to `item.` as it is.
    return { path: error.path === '' ? [] : [error.path], reason: error.message };
  }
}

const item = present().transform((value, ctx): ReadItem => {
  const canonical = itemProblem(value);
  if (typeof canonical !== 'string') {
    ctx.addIssue({ code: 'custom', path: canonical.path, message: canonical.reason });
    return z.NEVER;
  }
  const bytes = stringToBytes(canonical);
  if (bytes.length > INTENT_BOUNDS.canonicalItemMaxBytes) {
    ctx.addIssue({
      code: 'custom',
      message: `must be at most ${INTENT_BOUNDS.canonicalItemMaxBytes} bytes as canonical JSON`,
    });
    return z.NEVER;
  }
  // Same bytes as itemHash(item) would hash; computed here to avoid canonicalising twice. The
  // copy parsed back from them is detached from the caller's object, which could still change.
  return { value: JSON.parse(canonical) as JsonObject, itemHash: keccak256Hex(bytes) };
});

/** The order in which malformed fields are listed (item last: it is the costliest to check). */
export const INTENT_CHECK_ORDER = [
  'policyId',
  'policyHash',
  'agentId',
  'category',
  'provider',
  'capability',
  'recipient',
  'network',
  'token',
  'amount',
  'deadline',
  'nonce',
  'endpoint',
  'item',
] as const;

/**
 * Fields in the order their problems are listed (item last: it is the costliest to check); the
 * missing ones are listed before them, in wire order (see intent.ts).
 */
export const spendIntentWireSchema = plainObject(OBJECT_REASON).pipe(
  z.strictObject({
    policyId: uint256Text,
    policyHash: text(HASH_PATTERN, 'must be 0x followed by 64 hex characters').transform(
      (value) => value.toLowerCase() as Hex,
    ),
    agentId: text(AGENT_ID_PATTERN, 'must be 1–128 characters of A–Z a–z 0–9 . _ : -'),
    category: text(CATEGORY_PATTERN, 'must be 1–64 characters of a–z 0–9 . -'),
    provider: text(PROVIDER_PATTERN, 'must be 1–253 printable characters without spaces'),
    capability,
    recipient: address,
    network: text(NETWORK_PATTERN, 'must be a CAIP-2 network like eip155:196'),
    token: address,
    amount: amountAtomic,
    deadline,
    nonce: uint256Text.transform((value) => BigInt(value)),
    endpoint,
    item,
  }),
);

export type SpendIntentFields = z.output<typeof spendIntentWireSchema>;
