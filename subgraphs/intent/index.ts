// The intent subgraph's public surface for the worker and tests: reservation settlement (which
// runs ledger.post_group inside the intent's transaction), the lapsed-reservation round and the
// consumer intents' rounds (approvals decided outside the approve route, quotes past expiry).
export {
  consumeReservation,
  releaseReservation,
  type ReservationPosting,
} from './reservations/consumeOrRelease';
export { sweepLapsedReservations } from './reservations/jobs';
// The business series /metrics reads from this schema at scrape time.
export { INTENT_METRICS } from './metrics';
// The relay of the consumer-intent outbox to the owners' webhook events (policy.record_owner_event).
export { relayConsumerIntentEvents } from './consumer/notices/ownerEvents';
export {
  advanceConsumerApprovals,
  type ConsumerJobDeps,
  expireConsumerIntents,
} from './consumer/approval/jobs';
export { bookFundingPayment, type FundingBookingOptions } from './consumer/funding/booking';
export {
  type ConsumerExecutionDeps,
  type ExecutionRoundResult,
  registerConsumerAssets,
  runConsumerExecutionRound,
  runConsumerIntentNow,
  WAKING_STATES,
} from './consumer/execution/jobs';
export {
  assertDeliveryRetryPolicy,
  DEFAULT_DELIVERY_RETRY,
  type DeliveryRetryPolicy,
} from './consumer/delivery/retry';
export {
  type AnchorJobDeps,
  type AnchorRoundResult,
  closeDueBatch,
  DEFAULT_ANCHOR_BATCH_SECONDS,
  DEFAULT_ANCHOR_BATCH_SIZE,
  runAnchorRound,
} from './anchoring/job';
