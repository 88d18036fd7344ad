// The relay of the intent subgraph's own outbox, intent.consumer_intent_events (one row per state
// change, written by a trigger in the change's transaction, migration 0014), to the owners'
// webhooks: each unpublished row becomes a `consumer_intent.state_changed` event through the
// policy subgraph's policy.record_owner_event and is marked published in the same transaction.
// Rows are claimed with FOR UPDATE SKIP LOCKED, so any number of workers may relay; the event's
// source key (the row's id) keeps a row from being recorded twice.
import { type DbPool, withTransaction } from '../../../../platform/db';

/** Outbox rows relayed per round. */
export const RELAY_BATCH = 500;

/** One round; returns how many outbox rows it published. */
export async function relayConsumerIntentEvents(db: DbPool, now: Date): Promise<number> {
  return withTransaction(db, async (client) => {
    const due = await client.query<{ event_id: string }>(
      `SELECT event_id::text FROM intent.consumer_intent_events
        WHERE published_at IS NULL ORDER BY event_id LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [RELAY_BATCH],
    );
    if (due.rows.length === 0) return 0;
    const ids = due.rows.map((row) => row.event_id);
    await client.query(
      `SELECT policy.record_owner_event(
                e.policy_id::text, e.type,
                jsonb_build_object('intentId', e.intent_id, 'policyId', e.policy_id::text,
                                   'from', e.from_state, 'to', e.to_state,
                                   'stateVersion', e.state_version, 'reason', e.reason),
                e.occurred_at, 'consumer_intent_events:' || e.event_id)
         FROM intent.consumer_intent_events e
        WHERE e.event_id = ANY ($1::bigint[])
        ORDER BY e.event_id`,
      [ids],
    );
    await client.query(
      'UPDATE intent.consumer_intent_events SET published_at = $2 WHERE event_id = ANY ($1::bigint[])',
      [ids, now],
    );
    return ids.length;
  });
}
