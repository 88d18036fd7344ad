// The consumer purchase, as the rest of the intent subgraph and the worker see it. Read
// workflow.ts first: the purchase as a table of steps (which job moves which state, its effect,
// its compensation), checked against core/consumer/lifecycle.ts. store.ts is the row (read once,
// its column list written once), transition.ts the one way a row changes. The GraphQL resolvers
// are not re-exported: subgraph.ts loads them file by file, because type-graphql registers fields
// in module-load order and the committed schema (schema/intent.graphql) lists them in that order.
export { PURCHASE_STEPS, type PurchaseStep, checkPurchaseWorkflow, stepsLeaving } from './workflow';
export {
  type ConsumerIntentDbRow,
  type ConsumerIntentRow,
  CONSUMER_INTENT_COLUMNS,
  fromRow,
  getConsumerIntent,
} from './store';
export { type ConsumerIntentChanges, transitionConsumerIntent } from './transition';
export { policyOwner, readableConsumerIntent } from './reads';
export { getConsumerReceipt } from './receipts/store';
export { relayConsumerIntentEvents } from './notices/ownerEvents';
export {
  advanceConsumerApprovals,
  type ConsumerJobDeps,
  expireConsumerIntents,
} from './approval/jobs';
export { bookFundingPayment, type FundingBookingOptions } from './funding/booking';
export {
  type ConsumerExecutionDeps,
  type ExecutionRoundResult,
  registerConsumerAssets,
  runConsumerExecutionRound,
  runConsumerIntentNow,
  WAKING_STATES,
} from './execution/jobs';
export {
  assertDeliveryRetryPolicy,
  DEFAULT_DELIVERY_RETRY,
  type DeliveryRetryPolicy,
} from './delivery/retry';
