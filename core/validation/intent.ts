// validateSpendIntent: the wire SpendIntent (DECISIONS "SpendIntent (wire)") checked against
// every bound before any rule runs, and turned into domain form: bigint amounts, lowercase
// addresses, canonical endpoint, unix-second deadline, itemHash and intentHash. Never reads a clock.
import { stringToBytes, type Address, type Hex } from 'viem';
import { keccak256Hex } from '../canon/keccak';
import type { FieldError } from '../errors';
import { canonicalEndpoint, EndpointError, MAX_ENDPOINT_LENGTH } from '../canon/endpoint';
import { intentHash } from '../canon/intent-hash';
import { canonicalJson, CanonicalJsonError, type JsonValue } from '../canon/jcs';
import { AmountFormatError, parseAtomicAmount, UINT256_MAX } from '../money/amount';
import {
  ADDRESS_PATTERN,
  AGENT_ID_PATTERN,
  CATEGORY_PATTERN,
  fieldPath,
  HASH_PATTERN,
  has,
  isPlainObject,
  NETWORK_PATTERN,
  rejectUnknownKeys,
  ROOT_FIELD,
  UINT256_DECIMAL_PATTERN,
  type FieldErrors,
} from './fields';
import { formatIsoSeconds, parseIsoTimestamp } from './timestamp';

export const INTENT_BOUNDS = {
  providerMaxChars: 253,
  itemDescriptionMaxChars: 500,
  canonicalItemMaxBytes: 4096,
} as const;

export const CAPABILITY_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z0-9_*]+)*$/;
const CAPABILITY_MAX_CHARS = 64;
// Provider names are host-like; whitespace or control characters would make look-alikes.
const PROVIDER_PATTERN = new RegExp(`^[\\x21-\\x7e]{1,${INTENT_BOUNDS.providerMaxChars}}$`);

export const SPEND_INTENT_WIRE_FIELDS = [
  'policyId',
  'policyHash',
  'agentId',
  'category',
  'provider',
  'capability',
  'item',
  'recipient',
  'network',
  'token',
  'amount',
  'deadline',
  'nonce',
  'endpoint',
] as const;

const KNOWN_FIELDS: ReadonlySet<string> = new Set(SPEND_INTENT_WIRE_FIELDS);

export type JsonObject = { readonly [key: string]: JsonValue };

/** A SpendIntent as it travels: amounts and nonce as decimal strings, deadline ISO-8601. */
export interface SpendIntentWire {
  readonly policyId: string;
  readonly policyHash: string;
  readonly agentId: string;
  readonly category: string;
  readonly provider: string;
  readonly capability: string;
  readonly item: JsonObject;
  readonly recipient: string;
  readonly network: string;
  readonly token: string;
  readonly amount: string;
  readonly deadline: string;
  readonly nonce: string;
  readonly endpoint: string;
}

/** A validated intent in domain units, with the two hashes that bind it. */
export interface SpendIntent {
  readonly policyId: string;
  readonly policyHash: Hex;
  readonly agentId: string;
  readonly category: string;
  readonly provider: string;
  readonly capability: string;
  readonly item: JsonObject;
  readonly itemHash: Hex;
  readonly recipient: Address;
  readonly network: string;
  readonly token: Address;
  readonly amountAtomic: bigint;
  readonly deadlineUnixSeconds: number;
  readonly nonce: bigint;
  /** Canonical form (see canonicalEndpoint). */
  readonly endpoint: string;
  /** EIP-712 hash over all of the above; approvals and signatures bind to it. */
  readonly intentHash: Hex;
}

export type SpendIntentValidation =
  { ok: true; intent: SpendIntent } | { ok: false; errors: FieldError[] };

type HashedFields = Omit<SpendIntent, 'item' | 'intentHash'>;
type WireReading =
  { ok: true; fields: HashedFields; item: JsonObject } | { ok: false; errors: FieldError[] };

/**
 * Checks every bound and returns either the domain intent or every field error found.
 * `now` (unix ms or Date) is the caller's clock reading: the deadline must lie after it.
 */
export function validateSpendIntent(raw: unknown, now: Date | number): SpendIntentValidation {
  const reading = readWireIntent(raw, now);
  if (!reading.ok) return reading;
  const { fields } = reading;
  // One literal with every field, never a spread: the engine reads these objects millions of
  // times a second, and intents built alike share one hidden class (a spread copy does not).
  const intent: SpendIntent = {
    policyId: fields.policyId,
    policyHash: fields.policyHash,
    agentId: fields.agentId,
    category: fields.category,
    provider: fields.provider,
    capability: fields.capability,
    item: reading.item,
    itemHash: fields.itemHash,
    recipient: fields.recipient,
    network: fields.network,
    token: fields.token,
    amountAtomic: fields.amountAtomic,
    deadlineUnixSeconds: fields.deadlineUnixSeconds,
    nonce: fields.nonce,
    endpoint: fields.endpoint,
    intentHash: intentHash(fields),
  };
  return { ok: true, intent };
}

/**
 * The same checks as validateSpendIntent without building the intent or its EIP-712 hash: for a
 * caller that only refuses malformed intents (the gateway, before it takes a payment).
 */
export function spendIntentErrors(raw: unknown, now: Date | number): FieldError[] {
  const reading = readWireIntent(raw, now);
  return reading.ok ? [] : reading.errors;
}

function readWireIntent(raw: unknown, now: Date | number): WireReading {
  const nowMs = now instanceof Date ? now.getTime() : now;
  if (typeof nowMs !== 'number' || !Number.isFinite(nowMs))
    throw new TypeError('now must be a Date or unix milliseconds');
  if (!isPlainObject(raw))
    return { ok: false, errors: [{ field: ROOT_FIELD, reason: 'must be a JSON object' }] };
  const errors: FieldErrors = [];
  rejectUnknownKeys(raw, KNOWN_FIELDS, '', errors);
  for (const field of SPEND_INTENT_WIRE_FIELDS) {
    if (!has(raw, field)) errors.push({ field, reason: 'is required' });
  }

  const text = (field: string, pattern: RegExp, reason: string): string | undefined => {
    const value = raw[field];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !pattern.test(value)) {
      errors.push({ field, reason });
      return undefined;
    }
    return value;
  };

  const policyId = text('policyId', UINT256_DECIMAL_PATTERN, 'must be a uint256 decimal string');
  if (policyId !== undefined && BigInt(policyId) > UINT256_MAX)
    errors.push({ field: 'policyId', reason: 'must be a uint256 decimal string' });
  const policyHash = text('policyHash', HASH_PATTERN, 'must be 0x followed by 64 hex characters');
  const agentId = text(
    'agentId',
    AGENT_ID_PATTERN,
    'must be 1–128 characters of A–Z a–z 0–9 . _ : -',
  );
  const category = text('category', CATEGORY_PATTERN, 'must be 1–64 characters of a–z 0–9 . -');
  const provider = text(
    'provider',
    PROVIDER_PATTERN,
    'must be 1–253 printable characters without spaces',
  );
  let capability = text(
    'capability',
    CAPABILITY_PATTERN,
    'must match ^[a-z][a-z0-9_]*(\\.[a-z0-9_*]+)*$',
  );
  if (capability !== undefined && capability.length > CAPABILITY_MAX_CHARS) {
    errors.push({
      field: 'capability',
      reason: `must be at most ${CAPABILITY_MAX_CHARS} characters`,
    });
    capability = undefined;
  }
  const recipient = text('recipient', ADDRESS_PATTERN, 'must be 0x followed by 40 hex characters');
  const network = text('network', NETWORK_PATTERN, 'must be a CAIP-2 network like eip155:196');
  const token = text('token', ADDRESS_PATTERN, 'must be 0x followed by 40 hex characters');
  const amountAtomic = readAmount(raw.amount, errors);
  const deadlineUnixSeconds = readDeadline(raw.deadline, nowMs, errors);
  const nonce = readNonce(raw.nonce, errors);
  const endpoint = readEndpoint(raw.endpoint, errors);
  const item = readItem(raw.item, errors);

  if (errors.length > 0) return { ok: false, errors };
  const fields = {
    policyId: policyId!,
    policyHash: policyHash!.toLowerCase() as Hex,
    agentId: agentId!,
    category: category!,
    provider: provider!,
    capability: capability!,
    itemHash: item!.itemHash,
    recipient: recipient!.toLowerCase() as Address,
    network: network!,
    token: token!.toLowerCase() as Address,
    amountAtomic: amountAtomic!,
    deadlineUnixSeconds: deadlineUnixSeconds!,
    nonce: nonce!,
    endpoint: endpoint!,
  };
  return { ok: true, fields, item: item!.value };
}

function readAmount(value: unknown, errors: FieldErrors): bigint | undefined {
  if (value === undefined) return undefined;
  try {
    return parseAtomicAmount(value, { allowZero: false });
  } catch (error) {
    if (!(error instanceof AmountFormatError)) throw error;
    errors.push({
      field: 'amount',
      reason: `must match ^[1-9][0-9]{0,29}$ (atomic units): ${error.message}`,
    });
    return undefined;
  }
}

function readDeadline(value: unknown, nowMs: number, errors: FieldErrors): number | undefined {
  if (value === undefined) return undefined;
  const parsed = parseIsoTimestamp(value);
  if (!parsed.ok) {
    errors.push({ field: 'deadline', reason: parsed.reason });
    return undefined;
  }
  if (parsed.unixSeconds * 1000 <= nowMs) {
    errors.push({ field: 'deadline', reason: 'must be in the future' });
    return undefined;
  }
  return parsed.unixSeconds;
}

function readNonce(value: unknown, errors: FieldErrors): bigint | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'string' ||
    !UINT256_DECIMAL_PATTERN.test(value) ||
    BigInt(value) > UINT256_MAX
  ) {
    errors.push({ field: 'nonce', reason: 'must be a uint256 decimal string' });
    return undefined;
  }
  return BigInt(value);
}

function readEndpoint(value: unknown, errors: FieldErrors): string | undefined {
  if (value === undefined) return undefined;
  try {
    return canonicalEndpoint(value as string);
  } catch (error) {
    if (!(error instanceof EndpointError)) throw error;
    errors.push({
      field: 'endpoint',
      reason: `must be an absolute http(s) URL of at most ${MAX_ENDPOINT_LENGTH} characters: ${error.message}`,
    });
    return undefined;
  }
}

function readItem(
  value: unknown,
  errors: FieldErrors,
): { value: JsonObject; itemHash: Hex } | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) {
    errors.push({ field: 'item', reason: 'must be a JSON object' });
    return undefined;
  }
  if (has(value, 'description')) {
    const description = value.description;
    if (
      typeof description !== 'string' ||
      description.length > INTENT_BOUNDS.itemDescriptionMaxChars
    ) {
      errors.push({
        field: fieldPath('item', 'description'),
        reason: `must be a string of at most ${INTENT_BOUNDS.itemDescriptionMaxChars} characters`,
      });
      return undefined;
    }
  }
  let canonical: string;
  try {
    canonical = canonicalJson(value);
  } catch (error) {
    if (!(error instanceof CanonicalJsonError)) throw error;
    errors.push({
      field: error.path === '' ? 'item' : fieldPath('item', error.path),
      reason: error.message,
    });
    return undefined;
  }
  const bytes = stringToBytes(canonical);
  if (bytes.length > INTENT_BOUNDS.canonicalItemMaxBytes) {
    errors.push({
      field: 'item',
      reason: `must be at most ${INTENT_BOUNDS.canonicalItemMaxBytes} bytes as canonical JSON`,
    });
    return undefined;
  }
  // Same bytes as itemHash(item) would hash; computed here to avoid canonicalising twice. The
  // copy parsed back from them is detached from the caller's object, which could still change.
  return { value: JSON.parse(canonical) as JsonObject, itemHash: keccak256Hex(bytes) };
}

/** The wire form of a validated intent (what create_spend_intent stores and returns). */
export function spendIntentToWire(intent: SpendIntent): SpendIntentWire {
  return {
    policyId: intent.policyId,
    policyHash: intent.policyHash,
    agentId: intent.agentId,
    category: intent.category,
    provider: intent.provider,
    capability: intent.capability,
    item: intent.item,
    recipient: intent.recipient,
    network: intent.network,
    token: intent.token,
    amount: intent.amountAtomic.toString(),
    deadline: formatIsoSeconds(intent.deadlineUnixSeconds),
    nonce: intent.nonce.toString(),
    endpoint: intent.endpoint,
  };
}
