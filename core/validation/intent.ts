// validateSpendIntent: the wire SpendIntent (DECISIONS "SpendIntent (wire)") checked against
// every bound (intentSchema.ts) before any rule runs, then bound by its intentHash. Never reads a
// clock: the deadline is held against the caller's `now`; details listed in one fixed order.
import type { Address, Hex } from 'viem';
import { intentHash } from '../canon/intent-hash';
import type { FieldError } from '../errors';
import { isPlainObject } from './fields';
import { INTENT_CHECK_ORDER, spendIntentWireSchema, type JsonObject } from './intentSchema';
import { formatIsoSeconds, parseIsoTimestamp } from './timestamp';
import { fieldDetails, REQUIRED, UNKNOWN_FIELD } from './zodDetails';

export {
  CAPABILITY_MAX_CHARS,
  CAPABILITY_PATTERN,
  INTENT_BOUNDS,
  isCapabilityName,
  type JsonObject,
} from './intentSchema';

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

const IN_THE_FUTURE = 'must be in the future';

function readWireIntent(raw: unknown, now: Date | number): WireReading {
  const nowMs = now instanceof Date ? now.getTime() : now;
  if (typeof nowMs !== 'number' || !Number.isFinite(nowMs))
    throw new TypeError('now must be a Date or unix milliseconds');
  const parsed = spendIntentWireSchema.safeParse(raw);
  if (parsed.success) {
    const { item, deadline, amount, ...rest } = parsed.data;
    if (deadline * 1000 <= nowMs)
      return { ok: false, errors: [{ field: 'deadline', reason: IN_THE_FUTURE }] };
    const fields = {
      ...rest,
      itemHash: item.itemHash,
      amountAtomic: amount,
      deadlineUnixSeconds: deadline,
    };
    return { ok: true, fields, item: item.value };
  }
  const errors = fieldDetails(parsed.error.issues);
  if (deadlineHasPassed(raw, errors, nowMs))
    errors.push({ field: 'deadline', reason: IN_THE_FUTURE });
  return { ok: false, errors: inListingOrder(errors) };
}

/**
 * zod has no per-parse context to carry the caller's clock, so a well-formed deadline is held
 * against it here; on a refused intent only when nothing else is wrong with the deadline.
 */
function deadlineHasPassed(raw: unknown, errors: readonly FieldError[], nowMs: number): boolean {
  if (!isPlainObject(raw) || errors.some((error) => error.field === 'deadline')) return false;
  const parsed = parseIsoTimestamp(raw.deadline);
  return parsed.ok && parsed.unixSeconds * 1000 <= nowMs;
}

const WIRE_ORDER = new Map<string, number>(
  SPEND_INTENT_WIRE_FIELDS.map((field, index) => [field, index]),
);
const CHECK_ORDER = new Map<string, number>(
  INTENT_CHECK_ORDER.map((field, index) => [field, index]),
);

function topField(field: string): string {
  return field.split(/[.[]/, 1)[0]!;
}

/**
 * The order callers have always seen: unknown fields, then missing ones in wire order, then
 * malformed ones in check order (a past deadline among them, where the deadline is checked).
 */
function inListingOrder(errors: readonly FieldError[]): FieldError[] {
  const rank = (order: ReadonlyMap<string, number>) => (error: FieldError) =>
    order.get(topField(error.field)) ?? order.size;
  const byRank = (order: ReadonlyMap<string, number>) => (a: FieldError, b: FieldError) =>
    rank(order)(a) - rank(order)(b);
  const unknown = errors.filter((error) => error.reason === UNKNOWN_FIELD);
  const missing = errors.filter((error) => error.reason === REQUIRED).sort(byRank(WIRE_ORDER));
  const malformed = errors
    .filter((error) => error.reason !== UNKNOWN_FIELD && error.reason !== REQUIRED)
    .sort(byRank(CHECK_ORDER));
  return [...unknown, ...missing, ...malformed];
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
