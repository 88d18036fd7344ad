// Channel bindings in GraphQL: the owner's bindings, starting a link and revoking one (owner
// session only), and the inbound channel messages the gateway forwards after verifying the
// platform (a `channel` actor; nobody else may call those).
import { Arg, Args, ArgsType, Ctx, Field, ID, Mutation, Query, Resolver } from 'type-graphql';
import { AppError } from '../../../core/errors';
import { dataSourceOf, requireActor, type SubgraphContext } from '../../kit';
import { type InboundResult, receiveChatMessage, receiveWebhookRequest } from './inbound';
import { type BindingKind, type BindingRow, readBindings } from './reads';
import {
  CHANNEL_KIND,
  CHAT_CHANNEL,
  ChannelBinding,
  ChannelInboundResult,
  ChannelLinkStart,
} from './schema';
import { confirmEmailBinding, type LinkStart, revokeBinding, startChannelLink } from './writes';

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
    return (await readBindings(dataSourceOf(ctx), actor.address)).map(bindingView);
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
      'Gateway only (the email channel actor): the confirmation link mailed to a new email binding, opened.',
  })
  async confirmEmailBinding(
    @Arg('bindingId', () => ID) bindingId: string,
    @Arg('code') code: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<InboundResult> {
    const actor = requireActor(ctx, ['channel']);
    if (actor.channel !== 'email')
      throw new AppError('FORBIDDEN', 'This channel actor speaks for another channel.');
    const bound = await confirmEmailBinding(ctx.db, bindingId, code.toLowerCase(), ctx.now());
    return bound === null
      ? {
          outcome: 'LINK_REFUSED',
          reason: 'the confirmation link is unknown, used or expired',
          pollRef: null,
          state: null,
          answer: 'This confirmation link is unknown, used or expired. Start a new email binding.',
        }
      : {
          outcome: 'LINKED',
          reason: null,
          pollRef: null,
          state: null,
          answer: 'Confirmed: this address now receives Spend Control notices.',
        };
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
