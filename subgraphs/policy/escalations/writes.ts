// SQL writes of escalations outside a decision: the event log (refused replies, deliveries, the
// decision itself). Events are append-only; sender and detail are cut to their column bounds.
import type { Db } from '../../../platform/db';

export type EscalationEventKind =
  | 'APPROVED'
  | 'DENIED'
  | 'REPLY_UNKNOWN_CODE'
  | 'REPLY_CODE_REUSED'
  | 'REPLY_UNBOUND_SENDER'
  | 'REPLY_AFTER_EXPIRY'
  | 'REPLY_ALREADY_RESOLVED'
  | 'DELIVERY_SENT'
  | 'DELIVERY_FAILED'
  | 'DELIVERY_GAVE_UP';

export async function insertEscalationEvent(
  db: Db,
  event: {
    pollRef: string | null;
    owner: string | null;
    kind: EscalationEventKind;
    channel?: string | null;
    sender?: string | null;
    detail?: string | null;
    at: Date;
  },
): Promise<void> {
  await db.query(
    'INSERT INTO policy.escalation_events (poll_ref, owner, kind, channel, sender, detail, at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [
      event.pollRef,
      event.owner,
      event.kind,
      event.channel ?? null,
      event.sender?.slice(0, 256) ?? null,
      event.detail?.slice(0, 500) ?? null,
      event.at,
    ],
  );
}
