// The ledger's public surface for other subgraphs, the gateway, the CLI, benches and tests: the
// wrappers of its SQL functions (the only cross-schema way to move money) and the account names.
export { accountId, assetId, FEE_RECEIVER_REF } from './accounts';
export { ledgerErrorFrom, MAX_GROUPS_PER_BATCH, postFunding, registerAsset } from './posting';
export {
  claimPayment,
  type FailureEvidence,
  getPayment,
  listUnresolved,
  type PaymentClaim,
  recordAnswer,
  recordConfirmed,
  recordFailed,
  recordPending,
  recordSettled,
  releaseClaim,
  releaseLease,
  type ServicePayment,
  takeLapsedLease,
} from './servicePayments';
export { readOnchainFloat } from './treasury';
