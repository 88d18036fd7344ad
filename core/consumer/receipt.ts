// The public receipt of a consumer intent (DECISIONS "Receipts", docs/receipts.md "Consumer
// receipts"): built by picking the allow-listed fields one by one out of the private record, never
// by copying it and deleting what is secret, so a field added to the record stays private until
// it is named here. The merchant's word (providerAttested) and the service's own finding
// (serviceVerified) are two separate objects, never merged. Pure: no clock, no database.
import type { Hex } from 'viem';
import { hashJson, type JsonValue } from '../canon/jcs';
import { keccak256Hex } from '../canon/keccak';
import { isTerminal, type ConsumerIntentState } from './lifecycle';

type JsonObject = { readonly [key: string]: JsonValue };
type Json = Record<string, unknown>;

export interface ReceiptPaymentLeg {
  readonly chain: string | null;
  readonly asset: string | null;
  readonly amount: string | null;
  readonly sender: string | null;
  readonly recipient: string | null;
  readonly txHash: string | null;
}

/** The anchor object; PENDING until anchoring (issue #19) adds the other four states. */
export type ReceiptAnchor = { readonly state: 'PENDING'; readonly receiptId: string };

export interface ConsumerReceiptBody {
  readonly intentId: string;
  readonly capability: string;
  readonly state: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly policy: {
    readonly policyId: string;
    readonly policyHash: string | null;
    readonly policyVersion: number | null;
    readonly decision: string | null;
  };
  readonly providerAttested: {
    readonly status: string | null;
    readonly attestedAt: string | null;
    readonly fields: JsonObject | null;
  } | null;
  readonly serviceVerified: {
    readonly verified: boolean;
    readonly method: string | null;
    readonly source: string | null;
    readonly checkedAt: string | null;
    readonly detail: JsonValue;
  } | null;
  readonly paymentLegs: {
    readonly funding: ReceiptPaymentLeg | null;
    readonly settlement: ReceiptPaymentLeg | null;
  };
  readonly fee: string | null;
  readonly spread: string | null;
  /**
   * A human's resolution of a review (DECISIONS "Human exits"): what was decided and when, never
   * who nor the evidence. Absent (not null) while there is none, so a receipt without one keeps
   * the digest it always had.
   */
  readonly resolution?: { readonly outcome: string; readonly resolvedAt: string };
  readonly anchor: ReceiptAnchor;
}

export interface ConsumerReceipt extends ConsumerReceiptBody {
  readonly integrity: { readonly digest: Hex };
}

/** What a receipt is built from: the intent's private record (store.ts's row has all of it). */
export interface ReceiptSource {
  readonly intentId: string;
  readonly policyId: string;
  readonly capability: string;
  readonly state: ConsumerIntentState;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly quote: Json | null;
  readonly decision: Json | null;
  readonly funding: Json | null;
  readonly settlement: Json | null;
  readonly providerAttested: Json | null;
  /** The service's own finding (column service_verified, issue #18 item 1); absent = null. */
  readonly serviceVerified?: Json | null;
  /** An operator's resolution (column resolution); only its outcome and time are public. */
  readonly resolution?: Json | null;
}

/** Domain-separation prefix of receipt ids: keccak256(utf8(prefix ‖ intentId)). */
export const CONSUMER_RECEIPT_ID_PREFIX = 'spend-control/consumer-receipt/v1:';

/** The receipt id of an intent (0x + 64 hex): derived, so it is the same on every write. */
export function consumerReceiptId(intentId: string): Hex {
  return keccak256Hex(CONSUMER_RECEIPT_ID_PREFIX + intentId);
}

/** A receipt is final once its intent is terminal: nothing in it changes again but its anchor. */
export function isFinalReceiptState(state: ConsumerIntentState): boolean {
  return isTerminal(state);
}

function objectAt(value: unknown, key?: string): Json | null {
  const found = key === undefined ? value : objectAt(value)?.[key];
  return typeof found === 'object' && found !== null && !Array.isArray(found)
    ? (found as Json)
    : null;
}

function text(value: unknown, key: string): string | null {
  const found = objectAt(value)?.[key];
  return typeof found === 'string' ? found : null;
}

/** Addresses and hashes as stored, lowercased (the chain's case carries no meaning here). */
function hex(value: unknown, key: string): string | null {
  return text(value, key)?.toLowerCase() ?? null;
}

/** A JSON value as-is (round-tripped, so only plain JSON survives); anything else is null. */
function jsonValue(value: unknown): JsonValue {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value) ?? 'null') as JsonValue;
}

function fundingLeg(funding: Json | null): ReceiptPaymentLeg | null {
  if (funding === null) return null;
  return {
    chain: text(funding, 'network'),
    asset: hex(funding, 'asset'),
    amount: text(funding, 'amount'),
    sender: hex(funding, 'payer'),
    recipient: hex(funding, 'payTo'),
    txHash: hex(funding, 'txHash'),
  };
}

/** The merchant's payment, once the chain shows it (settlement.txHash); null before that. */
function settlementLeg(settlement: Json | null, quote: Json | null): ReceiptPaymentLeg | null {
  if (text(settlement, 'txHash') === null) return null;
  const authorization = objectAt(settlement, 'authorization');
  const cost = objectAt(quote, 'providerCost');
  return {
    chain: text(cost, 'network'),
    asset: hex(cost, 'asset'),
    amount: text(authorization, 'value') ?? text(cost, 'amount'),
    sender: hex(authorization, 'from'),
    recipient: hex(authorization, 'to') ?? hex(objectAt(quote, 'merchant'), 'payTo'),
    txHash: hex(settlement, 'txHash'),
  };
}

function providerAttestedOf(attested: Json | null): ConsumerReceiptBody['providerAttested'] {
  if (attested === null) return null;
  const fields = objectAt(attested, 'fields');
  return {
    status: text(attested, 'status'),
    attestedAt: text(attested, 'attestedAt'),
    fields: fields === null ? null : (jsonValue(fields) as JsonObject),
  };
}

/** `verified` is true only when the record says exactly true: never "verified" by default. */
function serviceVerifiedOf(found: Json | null | undefined): ConsumerReceiptBody['serviceVerified'] {
  if (found === null || found === undefined) return null;
  return {
    verified: found.verified === true,
    method: text(found, 'method'),
    source: text(found, 'source'),
    checkedAt: text(found, 'checkedAt'),
    detail: jsonValue(found.detail),
  };
}

/** `{outcome, resolvedAt}` of a decided resolution (a chain finding alone is none); else null. */
function resolutionOf(found: Json | null | undefined): ConsumerReceiptBody['resolution'] | null {
  const outcome = text(found, 'outcome');
  const resolvedAt = text(found, 'resolvedAt');
  return outcome === null || resolvedAt === null ? null : { outcome, resolvedAt };
}

/** The public body without its digest (and with the anchor given). */
export function consumerReceiptBody(
  source: ReceiptSource,
  anchor: ReceiptAnchor = { state: 'PENDING', receiptId: consumerReceiptId(source.intentId) },
): ConsumerReceiptBody {
  const version = source.decision?.policyVersion;
  const resolution = resolutionOf(source.resolution);
  return {
    intentId: source.intentId,
    capability: source.capability,
    state: source.state,
    createdAt: source.createdAt.toISOString(),
    updatedAt: source.updatedAt.toISOString(),
    policy: {
      policyId: source.policyId,
      policyHash: hex(source.decision, 'policyHash'),
      policyVersion: typeof version === 'number' && Number.isSafeInteger(version) ? version : null,
      decision: text(source.decision, 'decision'),
    },
    providerAttested: providerAttestedOf(source.providerAttested),
    serviceVerified: serviceVerifiedOf(source.serviceVerified),
    paymentLegs: {
      funding: fundingLeg(source.funding),
      settlement: settlementLeg(source.settlement, source.quote),
    },
    fee: text(source.quote, 'fee'),
    spread: text(source.quote, 'spread'),
    ...(resolution === null ? {} : { resolution }),
    anchor: { state: anchor.state, receiptId: anchor.receiptId },
  };
}

/**
 * `integrity.digest`: keccak256 of the RFC 8785 JCS of the public body without `integrity` and
 * without `anchor`. The anchor is left out because anchoring publishes this digest (the Merkle
 * leaf is receiptId ‖ digest) and then records where: a digest over the anchor would change the
 * moment it is anchored.
 */
export function consumerReceiptDigest(body: ConsumerReceiptBody | ConsumerReceipt): Hex {
  const { integrity: _integrity, anchor: _anchor, ...covered } = body as ConsumerReceipt;
  return hashJson(covered);
}

/** The whole public receipt: body and digest. */
export function buildConsumerReceipt(
  source: ReceiptSource,
  anchor?: ReceiptAnchor,
): ConsumerReceipt {
  const body = consumerReceiptBody(source, anchor);
  return { ...body, integrity: { digest: consumerReceiptDigest(body) } };
}
