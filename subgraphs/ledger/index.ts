// The ledger subgraph: double-entry, append-only money in the `ledger` Postgres schema. Other
// subgraphs post through the SQL API (posting.ts wraps it); this module serves the GraphQL view
// of it for dashboards, analysts and operators. The SQL owns every invariant; see docs/ledger.md.
import { buildFederatedSchema, type SubgraphModule } from '../kit';
import {
  LedgerGroupResolver,
  LedgerQueryResolver,
  ledgerReferenceResolvers,
  PolicyLedgerResolver,
  SpendIntentLedgerResolver,
} from './resolvers';
import { LedgerAccount, PolicyWithLedger, SpendIntentWithLedger } from './schema';

export const ledgerSubgraph: SubgraphModule = {
  name: 'ledger',
  buildSchema: () =>
    buildFederatedSchema(
      {
        resolvers: [
          LedgerQueryResolver,
          LedgerGroupResolver,
          PolicyLedgerResolver,
          SpendIntentLedgerResolver,
        ],
        orphanedTypes: [LedgerAccount, PolicyWithLedger, SpendIntentWithLedger],
      },
      ledgerReferenceResolvers,
    ),
};

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
