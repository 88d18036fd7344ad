// The ledger subgraph: double-entry, append-only money in the `ledger` Postgres schema. Other
// subgraphs post through the SQL API (posting/ wraps it); this module serves the GraphQL view
// of it for dashboards, analysts and operators. The SQL owns every invariant; see docs/ledger.md.
import { buildFederatedSchema, type SubgraphModule } from '../kit';
import {
  LedgerGroupResolver,
  LedgerQueryResolver,
  ledgerReferenceResolvers,
  PolicyLedgerResolver,
  SpendIntentLedgerResolver,
} from './books/resolvers';
import { LedgerAccount, PolicyWithLedger, SpendIntentWithLedger } from './books/schema';

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
