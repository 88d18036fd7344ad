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
// The consumer purchase: the outbox relay, the approval and expiry rounds, funding, execution and
// delivery (consumer/index.ts, its face; consumer/workflow.ts, the steps).
export {
  advanceConsumerApprovals,
  assertDeliveryRetryPolicy,
  bookFundingPayment,
  type ConsumerExecutionDeps,
  type ConsumerJobDeps,
  DEFAULT_DELIVERY_RETRY,
  type DeliveryRetryPolicy,
  type ExecutionRoundResult,
  expireConsumerIntents,
  type FundingBookingOptions,
  registerConsumerAssets,
  relayConsumerIntentEvents,
  runConsumerExecutionRound,
  runConsumerIntentNow,
  WAKING_STATES,
} from './consumer';
export {
  type AnchorJobDeps,
  type AnchorRoundResult,
  closeDueBatch,
  DEFAULT_ANCHOR_BATCH_SECONDS,
  DEFAULT_ANCHOR_BATCH_SIZE,
  runAnchorRound,
} from './anchoring/job';
