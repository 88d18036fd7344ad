// Escalations and channel bindings in GraphQL. Reads: one escalation or a page of them for its
// owner (an admin: any), the public poll body, the owner's unmatched replies. Writes: the owner's
// dashboard decision, the owner's channel links, and the inbound channel messages the gateway
// forwards after verifying the platform (a `channel` actor; nobody else may call those).
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
import {
  type BindingKind,
  type BindingRow,
  type LinkStart,
  readBindings,
  revokeBinding,
  startChannelLink,
} from '../channels/writes';
import { type InboundResult, receiveChatMessage, receiveWebhookRequest } from '../channels/inbound';
import {
  decideAsOwner,
  type EscalationPollBody,
  type OwnerDecision,
  outcomeOf,
  pollBody,
  reasonOf,
} from './decisions';
import {
  CHANNEL_KIND,
  CHAT_CHANNEL,
  ChannelBinding,
  ChannelInboundResult,
  ChannelLinkStart,
  ESCALATION_DECISION,
  ESCALATION_STATE,
  Escalation,
  EscalationConnection,
  EscalationEvent,
} from './schema';
import {
  type EscalationEventRow,
  type EscalationRow,
  type EscalationState,
  readEscalation,
  readEscalationEvents,
  readEscalationPage,
} from './reads';
import { Policy } from '../policies/schema';
import { pageSize, POLICY_ID, type PolicyRow } from '../policies/reads';

type EscalationView = Escalation & { readonly owner: string };

function view(row: EscalationRow): EscalationView {
  return {
    pollRef: row.pollRef,
    owner: row.owner,
    state: row.state,
    outcome: outcomeOf(row.state),
    reason: reasonOf(row.state),
    intentHash: row.intentHash,
    policyId: row.policyId,
    policyVersion: row.policyVersion,
    decision: row.decision,
    decidingRule: row.decidingRule,
    ruleReason: row.ruleReason,
    amountAtomic: row.amountAtomic,
    recipient: row.recipient,
    intent: row.intent,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    resolvedAt: row.resolvedAt,
    resolvedVia: row.resolvedVia,
    ownerSigned: row.ownerSigned,
    approvalUsed: row.approvalUsedAt !== null,
  };
}

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

@ArgsType()
class StartChannelLinkArgs {
  @Field(() => CHANNEL_KIND)
  kind!: BindingKind;

  @Field(() => String, {
    nullable: true,
    description:
      'webhook: the URL; email: the address; telegram and slack: none (the link command binds its chat).',
  })
  address?: string | null;

  @Field(() => String, { nullable: true, description: 'Reserved; give none.' })
  replyFrom?: string | null;
}

@ArgsType()
class ChatMessageArgs {
  @Field(() => CHAT_CHANNEL)
  channel!: 'telegram' | 'slack';

  @Field({ description: 'Telegram chat id or Slack channel id.' })
  chatId!: string;

  @Field(() => String, { nullable: true, description: 'Telegram or Slack user id.' })
  userId?: string | null;

  @Field({ description: 'The typed text or the pressed button’s value.' })
  text!: string;
}

@ArgsType()
class WebhookRequestArgs {
  @Field({ description: 'The x-spend-control-timestamp header.' })
  timestamp!: string;

  @Field({ description: 'The x-spend-control-signature header.' })
  signature!: string;

  @Field({ description: 'The body exactly as received.' })
  rawBody!: string;
}

const MAX_CHAT_TEXT_CHARS = 4096;

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
    return row === null ? null : view(row);
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
    if (policyId !== null && !POLICY_ID.test(policyId)) {
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
      nodes: page.nodes.map(view),
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
    return view(
      await decideAsOwner(ctx, {
        pollRef: args.pollRef,
        decision: args.decision,
        signature: args.signature ?? null,
      }),
    );
  }
}

function bindingView(row: BindingRow): ChannelBinding {
  return {
    bindingId: row.bindingId,
    kind: row.kind,
    state: row.state,
    address: row.address,
    replyFrom: row.replyFrom,
    createdAt: row.createdAt,
    activatedAt: row.activatedAt,
  };
}

@Resolver()
export class ChannelResolver {
  @Query(() => [ChannelBinding], {
    description: 'The signed-in owner’s pending and active channel bindings.',
  })
  async channelBindings(@Ctx() ctx: SubgraphContext): Promise<ChannelBinding[]> {
    const actor = requireActor(ctx, ['owner']);
    return (await readBindings(ctx.db, actor.address)).map(bindingView);
  }

  @Mutation(() => ChannelLinkStart, {
    description:
      'The owner’s session starts binding a channel; the link code goes back through the channel (see instructions).',
  })
  async startChannelLink(
    @Args() args: StartChannelLinkArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<ChannelLinkStart> {
    const actor = requireActor(ctx, ['owner']);
    const started: LinkStart = await startChannelLink(ctx, actor.address, {
      kind: args.kind,
      address: args.address ?? null,
      replyFrom: args.replyFrom ?? null,
    });
    return { ...started, binding: bindingView(started.binding) };
  }

  @Mutation(() => ChannelBinding, {
    description: 'The owner’s session stops a binding: no more notices, no more replies from it.',
  })
  async revokeChannelBinding(
    @Arg('bindingId', () => ID) bindingId: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<ChannelBinding> {
    const actor = requireActor(ctx, ['owner']);
    return bindingView(await revokeBinding(ctx.db, actor.address, bindingId, ctx.now()));
  }

  @Mutation(() => ChannelInboundResult, {
    description: 'Gateway only (a verified channel actor): a Telegram or Slack message or button.',
  })
  async receiveChatMessage(
    @Args() args: ChatMessageArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<InboundResult> {
    const actor = requireActor(ctx, ['channel']);
    if (actor.channel !== args.channel)
      throw new AppError('FORBIDDEN', 'This channel actor speaks for another channel.');
    if (
      args.text.length > MAX_CHAT_TEXT_CHARS ||
      args.chatId.length > 64 ||
      (args.userId?.length ?? 0) > 64
    ) {
      throw new AppError('REQUEST_INVALID', 'The message is longer than a chat message can be.');
    }
    return receiveChatMessage(ctx, {
      channel: args.channel,
      chatId: args.chatId,
      userId: args.userId ?? null,
      text: args.text,
    });
  }

  @Mutation(() => ChannelInboundResult, {
    description:
      'Gateway only (the webhook channel actor): a signed webhook reply or link, verified with the binding’s secret.',
  })
  async receiveWebhookRequest(
    @Args() args: WebhookRequestArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<InboundResult> {
    const actor = requireActor(ctx, ['channel']);
    if (actor.channel !== 'webhook')
      throw new AppError('FORBIDDEN', 'This channel actor speaks for another channel.');
    return receiveWebhookRequest(ctx, args);
  }
}
