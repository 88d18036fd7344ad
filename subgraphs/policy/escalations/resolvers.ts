// Escalations in GraphQL. Reads: one escalation or a page of them for its owner (an admin: any),
// the public poll body, the owner's unmatched channel replies. Write: the owner's dashboard
// decision. Channel bindings and inbound channel messages are in channels/resolvers.ts.
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
import { isEscalationPollRef } from '../../../core/canon/ids';
import { AppError } from '../../../core/errors';
import { requireActor, type SubgraphContext } from '../../kit';
import { readablePolicy } from '../policies/access';
import { POLICY_ID_PATTERN } from '../../../core/canon/id-shapes';
import { pageSize, type PolicyRow } from '../policies/reads';
import { Policy } from '../policies/schema';
import { decideAsOwner, type OwnerDecision } from './decisions';
import {
  type EscalationEventRow,
  type EscalationRow,
  type EscalationState,
  readEscalation,
  readEscalationEvents,
  readEscalationPage,
} from './reads';
import {
  ESCALATION_DECISION,
  ESCALATION_STATE,
  Escalation,
  EscalationConnection,
  EscalationEvent,
} from './schema';
import {
  type EscalationPollBody,
  type EscalationView,
  escalationTypedData,
  escalationView,
  pollBody,
} from './views';

/** The escalation for its owner or an admin; null for anyone else, as for a missing one. */
async function readableEscalation(
  ctx: SubgraphContext,
  pollRef: string,
): Promise<EscalationRow | null> {
  const actor = requireActor(ctx, ['admin', 'owner']);
  if (!isEscalationPollRef(pollRef)) return null;
  const row = await readEscalation(ctx.db, pollRef, ctx.now());
  if (row === null || (actor.kind === 'owner' && row.owner !== actor.address)) return null;
  return row;
}

@ArgsType()
class EscalationPageArgs {
  @Field(() => ID, { nullable: true, description: 'Only this policy’s escalations.' })
  policyId?: string | null;

  @Field(() => ESCALATION_STATE, {
    nullable: true,
    description: 'Only escalations in this state (as of now: overdue ones count as EXPIRED).',
  })
  state?: EscalationState | null;

  @Field(() => Int, { nullable: true, description: 'Page size, 1 to 100 (default 20).' })
  first?: number | null;

  @Field(() => String, { nullable: true })
  after?: string | null;
}

@ArgsType()
class DecideEscalationArgs {
  @Field(() => ID)
  pollRef!: string;

  @Field(() => ESCALATION_DECISION)
  decision!: OwnerDecision;

  @Field(() => String, {
    nullable: true,
    description:
      'Optional with APPROVE: the owner’s EIP-712 signature over the escalated intent (domain AgentSpendControl v1, chain 196).',
  })
  signature?: string | null;
}

@Resolver(() => Escalation)
export class EscalationResolver {
  @Query(() => Escalation, {
    nullable: true,
    description:
      'The owner of its policy, or an admin; null for anyone else. Expiry is checked on read.',
  })
  async escalation(
    @Arg('pollRef', () => ID) pollRef: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<EscalationView | null> {
    const row = await readableEscalation(ctx, pollRef);
    return row === null ? null : escalationView(row);
  }

  @Query(() => EscalationConnection, {
    description: 'The signed-in owner’s escalations (an admin’s: everyone’s), newest first.',
  })
  async escalations(
    @Args() args: EscalationPageArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<EscalationConnection> {
    const actor = requireActor(ctx, ['admin', 'owner']);
    const policyId = args.policyId ?? null;
    if (policyId !== null && !POLICY_ID_PATTERN.test(policyId)) {
      throw new AppError('REQUEST_INVALID', undefined, [
        { field: 'policyId', reason: 'must be a uint256 decimal string' },
      ]);
    }
    const page = await readEscalationPage(
      ctx.db,
      {
        owner: actor.kind === 'owner' ? actor.address : null,
        policyId,
        state: args.state ?? null,
        first: pageSize(args.first),
        after: args.after ?? null,
      },
      ctx.now(),
    );
    return {
      nodes: page.nodes.map(escalationView),
      pageInfo: { endCursor: page.endCursor, hasNextPage: page.hasNextPage },
    };
  }

  @Query(() => GraphQLJSONObject, {
    description:
      'GET /escalation_status/:pollRef, open to anyone who holds the pollRef: {pollRef, state, outcome, reason, intentHash, policyId, amount, createdAt, expiresAt, resolvedAt}.',
  })
  async escalationStatus(
    @Arg('pollRef', () => ID) pollRef: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<EscalationPollBody> {
    const row = isEscalationPollRef(pollRef)
      ? await readEscalation(ctx.db, pollRef, ctx.now())
      : null;
    if (row === null) throw new AppError('ESCALATION_NOT_FOUND', undefined, { pollRef });
    return pollBody(row);
  }

  @Query(() => [EscalationEvent], {
    description:
      'The signed-in owner’s bound channels’ replies whose code matched no escalation, newest first.',
  })
  async unmatchedChannelReplies(@Ctx() ctx: SubgraphContext): Promise<EscalationEventRow[]> {
    const actor = requireActor(ctx, ['owner']);
    return readEscalationEvents(ctx.db, { ownerUnattributed: actor.address });
  }

  @FieldResolver(() => [EscalationEvent], {
    description: 'Oldest first: creation, deliveries, refused replies, the decision.',
  })
  async events(
    @Root() escalation: EscalationView,
    @Ctx() ctx: SubgraphContext,
  ): Promise<EscalationEventRow[]> {
    return readEscalationEvents(ctx.db, { pollRef: escalation.pollRef });
  }

  @FieldResolver(() => GraphQLJSONObject, {
    description:
      'The EIP-712 typed data of the escalated intent as eth_signTypedData_v4 takes it (domain AgentSpendControl v1, chain 196, every uint256 a decimal string): what a wallet signs to approve.',
  })
  typedData(@Root() escalation: EscalationView): Record<string, unknown> {
    return escalationTypedData(escalation);
  }

  @FieldResolver(() => Policy, { nullable: true })
  async policy(
    @Root() escalation: EscalationView,
    @Ctx() ctx: SubgraphContext,
  ): Promise<PolicyRow | null> {
    return readablePolicy(ctx, escalation.policyId);
  }

  @Mutation(() => Escalation, {
    description:
      'The owner’s session decides (an admin cannot). ESCALATION_NOT_PENDING once decided or expired; with a signature, ESCALATION_SIGNATURE_INVALID unless the owner signed the intent.',
  })
  async decideEscalation(
    @Args() args: DecideEscalationArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<EscalationView> {
    if (!isEscalationPollRef(args.pollRef))
      throw new AppError('ESCALATION_NOT_FOUND', undefined, { pollRef: args.pollRef });
    return escalationView(
      await decideAsOwner(ctx, {
        pollRef: args.pollRef,
        decision: args.decision,
        signature: args.signature ?? null,
      }),
    );
  }
}
