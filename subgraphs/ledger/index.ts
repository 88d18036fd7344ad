// The ledger's public surface for other subgraphs, the gateway, the CLI, benches and tests: the
// wrappers of its SQL functions (the only cross-schema way to move money) and the account names.
// No type-graphql class is loaded from here (the decision thread imports it without them).
export { accountId, assetId, FEE_RECEIVER_REF, FLOAT_REF, GROUP_KINDS } from './accounts/names';
export {
  postFunding,
  postProviderCost,
  postRefund,
  postSettlement,
  postSuspenseMove,
} from './posting/groupKinds';
export { postCrossRailRecognition } from './posting/recognition';
export { MAX_GROUPS_PER_BATCH, registerAsset, reverseGroup } from './posting/writes';
export { ledgerErrorFrom } from './sql';
// The business series /metrics reads from this schema at scrape time.
export { LEDGER_METRICS } from './metrics';
export { findPayment, getPayment, listUnresolved } from './servicePayments/reads';
export {
  type AuthorizationKey,
  type FailureEvidence,
  type FundingTarget,
  type PaymentClaim,
  type PaymentPurpose,
  type ServicePayment,
} from './servicePayments/record';
export {
  claimFundingPayment,
  type FundingClaimOutcome,
  type FundingSettlement,
  lockFundingPayment,
  markFundingSettled,
  postFundingParkClear,
} from './servicePayments/funding';
export {
  claimPayment,
  recordAnswer,
  releaseClaim,
  releaseLease,
  takeLapsedLease,
} from './servicePayments/writes';
export {
  recordConfirmed,
  recordFailed,
  recordPending,
  recordSettled,
} from './servicePayments/bookings';
export { readOnchainFloat } from './treasury/snapshots';
export {
  advanceCheckpoint,
  type CheckpointOutcome,
  type CheckpointPolicy,
  checkpointBalances,
  checkpointOverdue,
  checkpointState,
  DEFAULT_CHECKPOINT_POLICY,
} from './checkpoints/checkpoints';
// The books of one consumer intent, for its dispute packet.
export {
  type IntentLedgerGroup,
  intentLedgerGroups,
  type IntentLedgerRefs,
} from './books/intentGroups';
