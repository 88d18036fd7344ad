// Consumer intents in GraphQL. A consumer session creates them (createConsumerIntent, what POST
// /consumer/intents runs) and reads its policy's; an owner reads their policies' (consumerIntents,
// consumerIntent, Policy.consumerIntents) and decides escalated ones (approveConsumerIntent); an
// admin reads every one. Bodies of the two mutations are the REST bodies, verbatim.
import { GraphQLJSONObject } from 'graphql-scalars';
import {
  Arg,
  Args,
  ArgsType,
  Ctx,
  Field,
  FieldResolver,
  ID,
  Int,
  Mutation,
  Query,
  Resolver,
  Root,
} from 'type-graphql';
import type { SubgraphContext } from '../../kit';
import { PolicyWithIntents } from '../dashboard/resolvers';
import { approveConsumerIntent } from './approval/approve';
import { createConsumerIntent } from './create/create';
import { consumerIntentsPage, readableConsumerIntent } from './reads';
import {
  CONSUMER_APPROVAL_DECISION,
  CONSUMER_INTENT_STATE,
  ConsumerIntent,
  ConsumerIntentConnection,
  ConsumerIntentCreated,
  ConsumerIntentDecided,
} from './schema';
import type { ConsumerIntentAnswer } from './create/create';
import { consumerIntentView, type ConsumerIntentView } from './view';

@ArgsType()
class ConsumerIntentPolicyPageArgs {
  @Field(() => CONSUMER_INTENT_STATE, {
    nullable: true,
    description: 'Only intents in this state.',
  })
  state?: string | null;
  @Field(() => String, { nullable: true, description: 'A cursor from the previous page.' })
  after?: string | null;
  @Field(() => Int, { nullable: true, description: 'Page size, 1 to 100 (default 20).' })
  first?: number | null;
}

@ArgsType()
class ConsumerIntentPageArgs extends ConsumerIntentPolicyPageArgs {
  @Field(() => ID, {
    nullable: true,
    description:
      'One policy; default: a consumer session’s own, an owner’s every policy, an admin’s all.',
  })
  policyId?: string | null;
}

async function page(
  ctx: SubgraphContext,
  args: ConsumerIntentPageArgs,
): Promise<ConsumerIntentConnection> {
  const found = await consumerIntentsPage(ctx, args);
  return { nodes: found.nodes.map(consumerIntentView), pageInfo: found.pageInfo };
}

@Resolver(() => ConsumerIntent)
export class ConsumerIntentResolver {
  @Query(() => ConsumerIntentConnection, {
    description:
      'Consumer intents, newest first: a consumer session its policy’s, an owner their policies’, an admin any.',
  })
  async consumerIntents(
    @Args() args: ConsumerIntentPageArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<ConsumerIntentConnection> {
    return page(ctx, args);
  }

  @Query(() => ConsumerIntent, {
    nullable: true,
    description: 'One consumer intent; null when absent or not the caller’s to see.',
  })
  async consumerIntent(
    @Arg('intentId', () => ID) intentId: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<ConsumerIntentView | null> {
    const row = await readableConsumerIntent(ctx, intentId);
    return row === null ? null : consumerIntentView(row);
  }

  @Mutation(() => ConsumerIntentCreated, {
    description:
      'POST /consumer/intents: a consumer session asks for {capability, params, idempotencyKey?}; ' +
      'answers {created, intent, quote, decision, nextAction, fundingRequest}.',
  })
  async createConsumerIntent(
    @Arg('input', () => GraphQLJSONObject) input: Record<string, unknown>,
    @Ctx() ctx: SubgraphContext,
  ): Promise<ConsumerIntentAnswer> {
    return createConsumerIntent(ctx, input);
  }

  @Mutation(() => ConsumerIntentDecided, {
    description:
      'The owner’s decision on an escalated consumer intent (owner session only). APPROVAL_HASH_MISMATCH unless intentHash is the intent’s; ' +
      'answers {intent, quote, decision, nextAction, fundingRequest}.',
  })
  async approveConsumerIntent(
    @Arg('intentId', () => ID) intentId: string,
    @Arg('decision', () => CONSUMER_APPROVAL_DECISION) decision: 'APPROVE' | 'DENY',
    @Arg('intentHash', () => String) intentHash: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Omit<ConsumerIntentAnswer, 'created'>> {
    return approveConsumerIntent(ctx, { intentId, decision, intentHash });
  }
}

@Resolver(() => PolicyWithIntents)
export class PolicyConsumerIntentsResolver {
  @FieldResolver(() => ConsumerIntentConnection, {
    description: 'The policy’s consumer intents, newest first: its owner and admins only.',
  })
  async consumerIntents(
    @Root() policy: PolicyWithIntents,
    @Args() args: ConsumerIntentPolicyPageArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<ConsumerIntentConnection> {
    return page(ctx, { ...args, policyId: policy.id });
  }
}

/** ConsumerIntent entity references: the same rule as consumerIntent(intentId). */
export async function resolveConsumerIntentReference(
  reference: Record<string, unknown>,
  ctx: SubgraphContext,
): Promise<ConsumerIntentView | null> {
  const row = await readableConsumerIntent(ctx, String(reference.intentId));
  return row === null ? null : consumerIntentView(row);
}
