// The policy subgraph's public surface for the intent subgraph, the worker and tests: the
// escalation reply codes, the worker rounds and policy creation (the SQL functions behind them are
// the cross-schema surface listed in docs/architecture.md).
export { codeDigest, newReplyCode } from './escalations/replyCode';
export { deliverDueNotices, sweepExpiredEscalations } from './escalations/jobs';
// The owner-webhook delivery round (FOR UPDATE SKIP LOCKED claims, the retry schedule).
export { deliverDueWebhooks, type WebhookDeliveryDeps } from './webhooks/jobs';
export { createPolicy } from './policies/writes';
// The business series /metrics reads from this schema at scrape time.
export { POLICY_METRICS } from './metrics';
// The owner's decision on an escalation (the dashboard's path), for the consumer-intent approve
// route, which resolves the escalation exactly as decideEscalation does before it moves the intent.
export { decideAsOwner, type OwnerDecision } from './escalations/decisions';
// One escalation as its owner reads it (who decided, when, through which channel; never the code),
// for the dispute packet of the consumer intent it decided.
export { type EscalationRow, readEscalation } from './escalations/reads';
