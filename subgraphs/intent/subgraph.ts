// The intent subgraph: bound spend intents, preflight decisions (storage, window, engine), the
// read-side agent tools and the dashboard reads. Owns the `intent` Postgres schema.
import { buildFederatedSchema, type SubgraphModule } from '../kit';
// Loaded in this order on purpose: type-graphql registers fields as their modules load, and the
// committed schema (schema/intent.graphql) lists them in that order.
import { ConsumerFundingResolver } from './consumer/funding/resolvers';
import { DashboardResolver, PolicyIntentsResolver, PolicyWithIntents } from './dashboard/resolvers';
import {
  attachDecisionThread,
  detachDecisionThread,
  startDecisionThread,
} from './preflight/decisionThread';
import { IntentMutationResolver } from './preflight/resolvers';
import { IntentToolResolver } from './tools/resolvers';
import { intentReferenceResolvers, SpendIntentResolver } from './intents/resolvers';
import {
  ConsumerIntentResolver,
  PolicyConsumerIntentsResolver,
  resolveConsumerIntentReference,
} from './consumer/resolvers';
import { ConsumerExecutionResolver } from './consumer/execution/resolvers';
import { ConsumerDeliveryResolver } from './consumer/delivery/resolvers';
import { ConsumerReceiptResolver } from './consumer/receipts/resolvers';
import { AnchoringResolver } from './anchoring/resolvers';
import { DisputePacketResolver } from './disputes/resolvers';
import { ReconciliationResolver } from './reconciliation/resolvers';
import { TrustScoreResolver } from './trust/resolvers';
import { ExplainDecisionResolver } from './whatif/explain';
import { PolicyWhatIfResolver } from './whatif/resolvers';

export const intentSubgraph: SubgraphModule = {
  name: 'intent',
  buildSchema: () =>
    buildFederatedSchema(
      {
        resolvers: [
          SpendIntentResolver,
          IntentMutationResolver,
          IntentToolResolver,
          DashboardResolver,
          PolicyIntentsResolver,
          ConsumerIntentResolver,
          PolicyConsumerIntentsResolver,
          ConsumerFundingResolver,
          ConsumerExecutionResolver,
          ConsumerDeliveryResolver,
          ConsumerReceiptResolver,
          AnchoringResolver,
          DisputePacketResolver,
          ReconciliationResolver,
          TrustScoreResolver,
          PolicyWhatIfResolver,
          ExplainDecisionResolver,
        ],
        orphanedTypes: [PolicyWithIntents],
      },
      {
        ...intentReferenceResolvers,
        ConsumerIntent: { __resolveReference: resolveConsumerIntentReference },
      },
    ),
  startBeside({ db, databaseUrl, decisionThread, onError }) {
    if (!decisionThread) return { stop: async () => undefined };
    if (databaseUrl === null)
      throw new Error('the decision thread needs the database URL to open its own connections');
    const thread = startDecisionThread({
      connectionString: databaseUrl,
      onError: (error) => onError(error, 'decision thread'),
    });
    attachDecisionThread(db, thread);
    return {
      async stop() {
        detachDecisionThread(db, thread);
        await thread.stop();
      },
    };
  },
};
