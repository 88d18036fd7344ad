// The anchor object as every read shows it (receipt_status, log_receipt, GraphQL receiptAnchor,
// the consumer receipt's `anchor`): from the anchoring tables, except that on a deployment without
// anchoring a receipt waiting for a batch reports NOT_RECORDED with the reason, never a PENDING
// that nothing will ever end.
import { isReceiptId } from '../../../core/canon/ids';
import { AppError } from '../../../core/errors';
import { type SubgraphContext, settingsOf } from '../../kit';
import { readAnchorObject } from './store';

type Json = Record<string, unknown>;

/** A stored anchor object as this deployment reports it. */
export function reportedAnchor(ctx: Pick<SubgraphContext, 'settings'>, anchor: Json): Json {
  const off = settingsOf(ctx).anchoringOff;
  if (off !== null && anchor.state === 'PENDING') return { state: 'NOT_RECORDED', reason: off };
  return anchor;
}

/** The five-state anchor object of a decision or consumer receipt, by receipt id. */
export async function receiptAnchor(ctx: SubgraphContext, receiptIdRaw: unknown): Promise<Json> {
  const receiptId = typeof receiptIdRaw === 'string' ? receiptIdRaw.toLowerCase() : receiptIdRaw;
  if (!isReceiptId(receiptId))
    throw new AppError('RECEIPT_ID_INVALID', undefined, { receiptId: receiptIdRaw });
  const anchor = await readAnchorObject(ctx.db, receiptId);
  if (anchor === null) return { state: 'NOT_FOUND', receiptId };
  return reportedAnchor(ctx, anchor);
}

/** A consumer receipt body with its anchor as this deployment reports it. */
export function withReportedAnchor(ctx: Pick<SubgraphContext, 'settings'>, body: Json): Json {
  const anchor = body.anchor;
  if (typeof anchor !== 'object' || anchor === null) return body;
  return { ...body, anchor: reportedAnchor(ctx, anchor as Json) };
}
