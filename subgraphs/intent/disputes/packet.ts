// POST /generate_dispute_packet ($0.50, x402), the intent subgraph's side: finds the consumer intent
// (by id, or by its intentHash) among those the caller may read (its policy's consumer session,
// the policy's owner, an admin; anyone else's reads as missing: 404 CONSUMER_INTENT_NOT_FOUND),
// gathers the evidence where it lives (the intent row, the owner's escalation through the policy
// subgraph, the books through the ledger's, the receipt and both anchors, the funding block from
// the funding chain) and builds the packet with core/disputes. The free terms check runs the same
// lookup before any 402, so nobody pays for a 404.
import {
  buildDisputePacket,
  type DisputeEscalationSource,
  type DisputePacket,
} from '../../../core/disputes/packet';
import { AppError } from '../../../core/errors';
import { readReceipt } from '../../../platform/chain/eip3009Facts';
import type { DisputePacketRequest } from '../../../core/validation/disputeRequest';
import { requireActor, type SubgraphContext } from '../../kit';
import { intentLedgerGroups, type IntentLedgerRefs } from '../../ledger';
import { readEscalation } from '../../policy';
import { readAnchorObject } from '../anchoring/store';
import { reportedAnchor, withReportedAnchor } from '../anchoring/reads';
import { railClient } from '../consumer/execution/chainTruth';
import { type ConsumerIntentRow, getConsumerReceipt, readableConsumerIntent } from '../consumer';

/** Intents sharing one intentHash that a lookup considers (a hash names one intent in practice). */
const MAX_SAME_HASH = 8;

async function intentIdsByHash(ctx: SubgraphContext, intentHash: string): Promise<string[]> {
  const result = await ctx.db.query<{ intent_id: string }>(
    `SELECT intent_id FROM intent.consumer_intents WHERE intent_hash = $1
      ORDER BY created_at DESC, intent_id DESC LIMIT $2`,
    [intentHash, MAX_SAME_HASH],
  );
  return result.rows.map((row) => row.intent_id);
}

/** The intent the request names, if the caller may read it; else 404 CONSUMER_INTENT_NOT_FOUND. */
export async function requireDisputedIntent(
  ctx: SubgraphContext,
  request: DisputePacketRequest,
): Promise<ConsumerIntentRow> {
  requireActor(ctx, ['admin', 'owner', 'consumer']);
  const ids =
    request.kind === 'intentId'
      ? [request.intentId]
      : await intentIdsByHash(ctx, request.intentHash);
  for (const intentId of ids) {
    const row = await readableConsumerIntent(ctx, intentId);
    if (row !== null) return row;
  }
  throw new AppError(
    'CONSUMER_INTENT_NOT_FOUND',
    undefined,
    request.kind === 'intentId'
      ? { intentId: request.intentId }
      : { intentHash: request.intentHash },
  );
}

async function escalationOf(
  ctx: SubgraphContext,
  row: ConsumerIntentRow,
): Promise<DisputeEscalationSource | null> {
  if (row.pollRef === null) return null;
  return readEscalation(ctx.db, row.pollRef, ctx.now());
}

/** The funding transaction's block, from the funding chain; null when no chain answers. */
async function fundingBlockOf(
  ctx: SubgraphContext,
  row: ConsumerIntentRow,
): Promise<string | null> {
  const txHash = row.funding?.txHash;
  const rail = ctx.consumer?.funding;
  if (txHash === undefined || rail === undefined) return null;
  try {
    const receipt = await readReceipt(railClient(rail), txHash as `0x${string}`);
    return receipt?.blockNumber.toString() ?? null;
  } catch {
    return null;
  }
}

async function decisionAnchorOf(
  ctx: SubgraphContext,
  row: ConsumerIntentRow,
): Promise<Record<string, unknown> | null> {
  const receiptId = row.decision?.receiptId;
  if (typeof receiptId !== 'string') return null;
  const anchor = await readAnchorObject(ctx.db, receiptId.toLowerCase());
  return anchor === null ? null : reportedAnchor(ctx, anchor);
}

const LEDGER_GROUP_ID = /^lg_[0-9a-f]{24}$/;

/** Where the intent's groups are found: its id and hash as intent_ref, the groups its record names. */
function ledgerRefsOf(row: ConsumerIntentRow): IntentLedgerRefs {
  const named = [row.funding, row.settlement, row.refund, row.resolution].flatMap((record) =>
    Object.values(record ?? {}).filter(
      (value): value is string => typeof value === 'string' && LEDGER_GROUP_ID.test(value),
    ),
  );
  const intentRefs = row.intentHash === null ? [row.intentId] : [row.intentId, row.intentHash];
  return { intentRefs, groupIds: [...new Set(named)] };
}

export async function generateDisputePacket(
  ctx: SubgraphContext,
  request: DisputePacketRequest,
): Promise<DisputePacket> {
  const row = await requireDisputedIntent(ctx, request);
  const [escalation, fundingBlockNumber, stored, decisionAnchor, ledgerGroups] = await Promise.all([
    escalationOf(ctx, row),
    fundingBlockOf(ctx, row),
    getConsumerReceipt(ctx.db, row.intentId),
    decisionAnchorOf(ctx, row),
    intentLedgerGroups(ctx.db, ledgerRefsOf(row)),
  ]);
  return buildDisputePacket({
    intent: row,
    escalation,
    fundingBlockNumber,
    receipt: stored === null ? null : withReportedAnchor(ctx, { ...stored.body }),
    decisionAnchor,
    ledgerGroups,
    generatedAt: ctx.now(),
  });
}
