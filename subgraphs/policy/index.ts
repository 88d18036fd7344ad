// The policy subgraph: spend policies (versions, status, on-chain registration) and owner and
// consumer sign-in (SIWE nonces and verification). Owns the `policy` Postgres schema and publishes
// policy.policy_owner and policy.current_policy for other subgraphs.
import { buildFederatedSchema, type SubgraphModule } from '../kit';
import { PolicyMutationResolver } from './mutations';
import { PolicyResolver, policyReferenceResolvers } from './resolvers';
import { SignInResolver } from './signInResolver';

export const policySubgraph: SubgraphModule = {
  name: 'policy',
  buildSchema: () =>
    buildFederatedSchema({ resolvers: [PolicyResolver, PolicyMutationResolver, SignInResolver] }, policyReferenceResolvers),
};
