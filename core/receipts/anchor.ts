// Receipt anchoring, pure: the public body of a decision receipt and its digest (the 32 bytes after
// the receipt id in its Merkle leaf), and the anchor object in its five states (DECISIONS
// "Receipts"; docs/receipts.md "Anchoring").
import type { Hex } from 'viem';
import { hashJson } from '../canon/jcs';

/**
 * The public decision receipt: the fields of the preflight response that say what was decided,
 * under which policy, when, with which receipt. Anyone holding the preflight response can rebuild
 * it (decisionReceiptBodyOf) and its digest.
 */
export interface DecisionReceiptBody {
  readonly kind: 'decision';
  readonly receiptId: string;
  readonly intentHash: string;
  readonly policyId: string;
  readonly policyHash: string | null;
  readonly policyVersion: number | null;
  readonly decision: string;
  /** ISO-8601 UTC with milliseconds, as the preflight response's evaluatedAt. */
  readonly evaluatedAt: string;
}

type Json = Record<string, unknown>;

const nullableText = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** The body from a preflight response (or any object with its field names); throws when one is missing. */
export function decisionReceiptBodyOf(response: Json): DecisionReceiptBody {
  for (const key of ['receiptId', 'intentHash', 'policyId', 'decision', 'evaluatedAt']) {
    if (typeof response[key] !== 'string')
      throw new TypeError(`a decision receipt needs ${key} (a string)`);
  }
  const version = response.policyVersion;
  return {
    kind: 'decision',
    receiptId: (response.receiptId as string).toLowerCase(),
    intentHash: (response.intentHash as string).toLowerCase(),
    policyId: response.policyId as string,
    policyHash: nullableText(response.policyHash)?.toLowerCase() ?? null,
    policyVersion: typeof version === 'number' && Number.isSafeInteger(version) ? version : null,
    decision: response.decision as string,
    evaluatedAt: new Date(response.evaluatedAt as string).toISOString(),
  };
}

/** keccak256 of the UTF-8 of the RFC 8785 JCS of the body. */
export function decisionReceiptDigest(body: DecisionReceiptBody): Hex {
  return hashJson(body);
}

/** An inclusion proof as published: the leaf's digest, its index in a batch of treeSize, the audit path. */
export interface PublishedProof {
  readonly digest: string;
  readonly index: number;
  readonly treeSize: number;
  /** RFC 6962 audit path, bottom-up, 0x-hex. */
  readonly path: readonly string[];
}

export type AnchorObject =
  | { readonly state: 'NOT_RECORDED'; readonly reason: string }
  | { readonly state: 'PENDING'; readonly receiptId: string }
  | {
      readonly state: 'ANCHORED';
      readonly receiptId: string;
      readonly txHash: string;
      readonly blockNumber: number;
      readonly batchRoot: string;
      readonly proof: PublishedProof;
      /** Where: the chain (CAIP-2) and the ReceiptAnchor contract. */
      readonly chain: string;
      readonly contract: string;
    }
  | { readonly state: 'ANCHOR_FAILED'; readonly receiptId: string; readonly reason: string }
  | { readonly state: 'NOT_FOUND'; readonly receiptId: string };

export const ANCHOR_STATES = [
  'NOT_RECORDED',
  'PENDING',
  'ANCHORED',
  'ANCHOR_FAILED',
  'NOT_FOUND',
] as const;
