// The dashboard's GraphQL reads: a policy's decisions (decisions/reads.ts) and intents
// (intents/reads.ts), one decision with its trace, and `Policy.intents` on the policy subgraph's
// entity. Admin or the policy's owner only (access.ts).
import {
  Arg,
  Args,
  ArgsType,
  Ctx,
  Directive,
  Field,
  FieldResolver,
  ID,
  ObjectType,
  Query,
  Resolver,
  Root,
} from 'type-graphql';
import type { SubgraphContext } from '../../kit';
import { decisionById, decisionsPage } from '../decisions/reads';
import { DecisionArgs, SpendDecision, SpendDecisionConnection } from '../decisions/schema';
import { intentsPage } from '../intents/pages';
import { SpendIntentConnection } from '../intents/schema';
import { PageArgs } from '../lists/pages';

/** The policy subgraph's entity, extended with its intents. */
@Directive('@key(fields: "id")')
@ObjectType('Policy')
export class PolicyWithIntents {
  @Field(() => ID) id!: string;
}

@ArgsType()
class IntentArgs extends PageArgs {
  @Field(() => ID) policyId!: string;
}

@Resolver()
export class DashboardResolver {
  @Query(() => SpendDecisionConnection, {
    description: 'A policy’s decisions, newest first. Admin, or the policy’s owner.',
  })
  async spendDecisions(
    @Args() args: DecisionArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<SpendDecisionConnection> {
    return decisionsPage(ctx, args);
  }

  @Query(() => SpendDecision, {
    nullable: true,
    description: 'One decision with its full trace; null when absent or not the caller’s to see.',
  })
  async spendDecision(
    @Arg('id', () => ID) id: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<SpendDecision | null> {
    return decisionById(ctx, id);
  }

  @Query(() => SpendIntentConnection, {
    description: 'A policy’s bound intents, newest first. Admin, or the policy’s owner.',
  })
  async spendIntents(
    @Args() args: IntentArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<SpendIntentConnection> {
    return intentsPage(ctx, args.policyId, args);
  }
}

@Resolver(() => PolicyWithIntents)
export class PolicyIntentsResolver {
  @FieldResolver(() => SpendIntentConnection, {
    description: 'The intents bound to this policy, newest first: its owner and admins only.',
  })
  async intents(
    @Root() policy: PolicyWithIntents,
    @Args() args: PageArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<SpendIntentConnection> {
    return intentsPage(ctx, policy.id, args);
  }
}
