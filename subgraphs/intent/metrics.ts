// The intent schema's business series, read at scrape time (platform/sqlCollectors.ts): decisions
// by outcome and deciding rule and consumer-intent transitions by target state follow their
// append-only tables by primary key; open intents by state and the anchoring backlog are bounded
// aggregates over partial indexes (consumer_intents_open, decision_receipts_unanchored).
import type { SqlCollectors } from '../../platform/sqlCollectors';

export const INTENT_METRICS: SqlCollectors = {
  tails: [
    {
      name: 'spend_decisions_total',
      help: 'Preflight decisions by outcome and deciding rule',
      labels: ['outcome', 'rule'],
      startSql: 'SELECT max(decision_id)::text AS last FROM intent.decisions',
      sql: `SELECT outcome, coalesce(deciding_rule, 'none') AS rule, count(*) AS n, max(decision_id)::text AS last
              FROM intent.decisions WHERE decision_id > $1::bigint GROUP BY 1, 2`,
    },
    {
      name: 'spend_consumer_intent_transitions_total',
      help: 'Consumer intent state changes by the state entered',
      labels: ['state'],
      startSql: 'SELECT max(event_id)::text AS last FROM intent.consumer_intent_events',
      sql: `SELECT to_state AS state, count(*) AS n, max(event_id)::text AS last
              FROM intent.consumer_intent_events WHERE event_id > $1::bigint GROUP BY 1`,
    },
  ],
  gauges: [
    {
      name: 'spend_consumer_intents_open',
      help: 'Consumer intents in each open (not final) state',
      labels: ['state'],
      sql: `SELECT state, count(*) AS value FROM intent.consumer_intents
             WHERE state IN ('AWAITING_APPROVAL', 'APPROVED', 'AWAITING_FUNDING', 'FUNDED',
                             'EXECUTION_QUEUED', 'PROVIDER_PAYMENT_PENDING', 'PROVIDER_PAID',
                             'PROVIDER_ACKNOWLEDGED', 'DELIVERY_PENDING', 'DELIVERY_VERIFIED',
                             'FAILED_BEFORE_PAYMENT', 'REFUND_PENDING', 'MANUAL_REVIEW')
             GROUP BY state`,
    },
    {
      name: 'spend_anchoring_lag_seconds',
      help: 'Age of the oldest decision receipt not yet anchored on chain (0: none waiting)',
      labels: [],
      sql: `SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0) AS value
              FROM intent.decision_receipts WHERE state = 'PENDING'`,
    },
    {
      name: 'spend_anchoring_pending',
      help: 'Decision receipts waiting to be anchored',
      labels: [],
      sql: `SELECT count(*) AS value FROM intent.decision_receipts WHERE state = 'PENDING'`,
    },
  ],
};
