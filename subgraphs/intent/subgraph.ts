// The intent subgraph: bound spend intents, preflight decisions (storage, window, engine), the
// read-side agent tools and the dashboard reads. Owns the `intent` Postgres schema.
import { buildFederatedSchema, type SubgraphModule } from '../kit';
import { attachDecisionThread, detachDecisionThread, startDecisionThread } from './decisionThread';
import { DashboardResolver, PolicyIntentsResolver, PolicyWithIntents } from './dashboard';
import { IntentMutationResolver, IntentToolResolver } from './mutations';
import { intentReferenceResolvers, SpendIntentResolver } from './resolvers';

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
        ],
        orphanedTypes: [PolicyWithIntents],
      },
      intentReferenceResolvers,
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
