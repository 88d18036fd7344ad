// The dispute packet of a consumer intent (POST /generate_dispute_packet, docs/disputes.md): the
// evidence a buyer, its owner or an operator hands to whoever settles a dispute, in one document
// whose `integrity.digest` anyone can recompute. Built by picking named fields out of what the
// service holds, never by copying a record and deleting the secret parts: the approval names who
// decided, when and through which channel kind, and never carries the reply code (it is not even
// an input here). The merchant's word (providerAttested) and the service's finding
// (serviceVerified) stay two objects. Pure: no clock (generatedAt is passed in), no database.
import type { Hex } from 'viem';
import { hashJson, type JsonValue } from '../canon/jcs';
import type { ConsumerIntentState } from '../consumer/lifecycle';
import { consumerReceiptBody, type ReceiptPaymentLeg } from '../consumer/receipt';

type Json = Record<string, unknown>;

/** What the packet is: a fixed tag, so a verifier knows which rules the digest follows. */
export const DISPUTE_PACKET_KIND = 'spend-control/dispute-packet/v1';

/** The consumer intent as stored (the intent subgraph's row has all of it). */
export interface DisputeIntentSource {
  readonly intentId: string;
  readonly policyId: string;
  readonly capability: string;
  readonly provider: string;
  readonly category: string;
  readonly state: ConsumerIntentState;
  readonly stateReason: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly intentHash: string | null;
  readonly spendIntent: Json | null;
  readonly quote: Json | null;
  readonly decision: Json | null;
  readonly pollRef: string | null;
  readonly funding: Json | null;
  readonly settlement: Json | null;
  readonly providerAttested: Json | null;
  readonly serviceVerified: Json | null;
}

/** The owner's escalation as the policy subgraph reads it (no code: it is stored only hashed). */
export interface DisputeEscalationSource {
  readonly pollRef: string;
  readonly state: string;
  readonly decision: string;
  readonly decidingRule: string;
  readonly ruleReason: string;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  readonly resolvedAt: Date | null;
  /** The channel kind that resolved it: dashboard, telegram, slack, webhook. */
  readonly resolvedVia: string | null;
  /** Who answered: the owner's address (dashboard) or the bound sender of the channel. */
  readonly resolvedBy: string | null;
  readonly ownerSigned: boolean;
  readonly approvalUsedAt: Date | null;
}

export interface DisputeLedgerEntrySource {
  readonly entryNo: number;
  readonly account: string;
  /** Signed atomic units: + debit, − credit. */
  readonly amountAtomic: string;
}

export interface DisputeLedgerGroupSource {
  readonly groupId: string;
  readonly kind: string;
  /** The ledger's asset id (`chain|token`). */
  readonly asset: string;
  readonly reverses: string | null;
  readonly memo: string | null;
  readonly createdAt: Date;
  readonly entries: readonly DisputeLedgerEntrySource[];
}

export interface DisputePacketSource {
  readonly intent: DisputeIntentSource;
  readonly escalation: DisputeEscalationSource | null;
  /** The funding transaction's block as the funding chain reports it; null when unknown. */
  readonly fundingBlockNumber: string | null;
  /** The intent's public receipt as served (with its anchor object); null before funding. */
  readonly receipt: Json | null;
  /** The anchor object of the decision receipt (the preflight's receiptId); null when none. */
  readonly decisionAnchor: Json | null;
  readonly ledgerGroups: readonly DisputeLedgerGroupSource[];
  readonly generatedAt: Date;
}

export interface DisputePaymentLeg extends ReceiptPaymentLeg {
  readonly blockNumber: string | null;
  readonly ledgerGroupId: string | null;
}

export type DisputePacketBody = { readonly [key: string]: JsonValue };
export type DisputePacket = DisputePacketBody & { readonly integrity: { readonly digest: Hex } };

function text(value: unknown, key: string): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const found = (value as Json)[key];
  return typeof found === 'string' ? found : null;
}

/** A JSON value as-is (round-tripped, so only plain JSON survives); absent is null. */
function jsonValue(value: unknown): JsonValue {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value) ?? 'null') as JsonValue;
}

const iso = (date: Date | null): string | null => (date === null ? null : date.toISOString());

function leg(
  base: ReceiptPaymentLeg | null,
  blockNumber: string | null,
  groupId: string | null,
): DisputePaymentLeg | null {
  if (base === null) return null;
  return { ...base, blockNumber, ledgerGroupId: groupId };
}

function paymentLegsOf(source: DisputePacketSource): JsonValue {
  const { intent } = source;
  const legs = consumerReceiptBody({ ...intent, serviceVerified: null }).paymentLegs;
  const settlementBlock = text(intent.settlement, 'blockNumber');
  return jsonValue({
    funding: leg(legs.funding, source.fundingBlockNumber, text(intent.funding, 'groupId')),
    settlement: leg(legs.settlement, settlementBlock, text(intent.settlement, 'groupId')),
  });
}

function decisionOf(source: DisputePacketSource): JsonValue {
  const decision = source.intent.decision;
  if (decision === null) return null;
  return jsonValue({
    decision: text(decision, 'decision'),
    evaluatedAt: text(decision, 'evaluatedAt'),
    engine: decision.engine ?? null,
    ruleTrace: decision.ruleTrace ?? null,
    receiptId: text(decision, 'receiptId'),
    anchor: source.decisionAnchor,
  });
}

/** Who approved, when, through which channel kind; the reply code is never part of it. */
function approvalOf(escalation: DisputeEscalationSource | null): JsonValue {
  if (escalation === null) return null;
  return {
    pollRef: escalation.pollRef,
    state: escalation.state,
    escalatedAs: escalation.decision,
    rule: escalation.decidingRule,
    reason: escalation.ruleReason,
    requestedAt: escalation.createdAt.toISOString(),
    expiresAt: escalation.expiresAt.toISOString(),
    decidedAt: iso(escalation.resolvedAt),
    decidedBy: escalation.resolvedBy,
    channel: escalation.resolvedVia,
    ownerSigned: escalation.ownerSigned,
    usedAt: iso(escalation.approvalUsedAt),
  };
}

function ledgerOf(groups: readonly DisputeLedgerGroupSource[]): JsonValue {
  return {
    groups: groups.map((group) => ({
      groupId: group.groupId,
      kind: group.kind,
      asset: group.asset,
      reverses: group.reverses,
      memo: group.memo,
      createdAt: group.createdAt.toISOString(),
      entries: group.entries.map((entry) => ({
        entryNo: entry.entryNo,
        account: entry.account,
        amount: entry.amountAtomic,
      })),
    })),
  };
}

/** The packet without its digest. */
export function disputePacketBody(source: DisputePacketSource): DisputePacketBody {
  const { intent } = source;
  const version = intent.decision?.policyVersion;
  return {
    packet: DISPUTE_PACKET_KIND,
    generatedAt: source.generatedAt.toISOString(),
    intent: jsonValue({
      intentId: intent.intentId,
      intentHash: intent.intentHash,
      state: intent.state,
      stateReason: intent.stateReason,
      capability: intent.capability,
      provider: intent.provider,
      category: intent.category,
      createdAt: intent.createdAt.toISOString(),
      updatedAt: intent.updatedAt.toISOString(),
      spendIntent: intent.spendIntent,
    }),
    policy: {
      policyId: intent.policyId,
      policyHash: text(intent.decision, 'policyHash')?.toLowerCase() ?? null,
      policyVersion: typeof version === 'number' && Number.isSafeInteger(version) ? version : null,
    },
    decision: decisionOf(source),
    approval: approvalOf(source.escalation),
    paymentLegs: paymentLegsOf(source),
    providerAttested: jsonValue(intent.providerAttested),
    serviceVerified: jsonValue(intent.serviceVerified),
    receipt: jsonValue(source.receipt),
    ledger: ledgerOf(source.ledgerGroups),
  };
}

/**
 * `integrity.digest`: keccak256 of the UTF-8 of the RFC 8785 JCS of the whole packet without
 * `integrity` (DECISIONS "Canonical hashing"). Unlike a receipt's, it covers the anchor objects: a
 * packet is a snapshot taken at generatedAt, not a document that later gains an anchor.
 */
export function disputePacketDigest(packet: DisputePacketBody | DisputePacket): Hex {
  const { integrity: _integrity, ...covered } = packet as DisputePacket;
  return hashJson(covered);
}

export function buildDisputePacket(source: DisputePacketSource): DisputePacket {
  const body = disputePacketBody(source);
  return { ...body, integrity: { digest: disputePacketDigest(body) } };
}
