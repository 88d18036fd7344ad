// The policy subgraph: spend policies (versions, status, on-chain registration), owner and consumer
// sign-in (SIWE nonces and verification), and escalations with the owner's channel bindings (the
// approval authority is the owner's). Owns the `policy` Postgres schema and publishes
// policy.policy_owner, policy.current_policy and the escalation functions for other subgraphs.
import { buildFederatedSchema, type SubgraphModule } from '../kit';
// Resolver classes register their fields as their modules load: this import order is the field
// order of the printed schema (schema/policy.graphql, checked by `compose --check`).
import { EscalationResolver } from './escalations/resolvers';
import { ChannelResolver } from './channels/resolvers';
import { ChannelBindingRecord } from './channels/entity';
import {
  PolicyMutationResolver,
  PolicyResolver,
  policyReferenceResolvers,
} from './policies/resolvers';
import { SignInResolver } from './signIn/resolvers';
import { WebhookResolver } from './webhooks/resolvers';

export const policySubgraph: SubgraphModule = {
  name: 'policy',
  // An owner's channel bindings are listed through TypeORM (channels/entity.ts).
  entities: [ChannelBindingRecord],
  buildSchema: () =>
    buildFederatedSchema(
      {
        resolvers: [
          PolicyResolver,
          PolicyMutationResolver,
          SignInResolver,
          EscalationResolver,
          ChannelResolver,
          WebhookResolver,
        ],
      },
      policyReferenceResolvers,
    ),
};
