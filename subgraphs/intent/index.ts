// The intent subgraph's public surface for the worker and tests: reservation settlement (which
// runs ledger.post_group inside the intent's transaction) and the lapsed-reservation round.
export {
  consumeReservation,
  releaseReservation,
  type ReservationPosting,
} from './reservations/settlement';
export { sweepLapsedReservations } from './reservations/jobs';
export {
  type ConsumerExecutionDeps,
  type ExecutionRoundResult,
  registerConsumerAssets,
  runConsumerExecutionRound,
} from './consumer/execution/jobs';
