// GraphQL types of channel bindings: an owner's binding, the one-time link start, and what became
// of a message that arrived through a channel (a reply or a link command).
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { ESCALATION_STATE } from '../escalations/schema';
import type { EscalationState as EscalationStateValue } from '../escalations/reads';
import type { InboundOutcome } from './inbound';
import type { BindingKind, BindingState } from './reads';

export const CHANNEL_KIND = {
  TELEGRAM: 'telegram',
  SLACK: 'slack',
  WEBHOOK: 'webhook',
  EMAIL: 'email',
} as const;
export const CHANNEL_BINDING_STATE = {
  PENDING: 'PENDING',
  ACTIVE: 'ACTIVE',
  REVOKED: 'REVOKED',
} as const;
export const CHANNEL_INBOUND_OUTCOME = {
  ACCEPTED: 'ACCEPTED',
  REFUSED: 'REFUSED',
  LINKED: 'LINKED',
  LINK_REFUSED: 'LINK_REFUSED',
  IGNORED: 'IGNORED',
} as const;
export const CHAT_CHANNEL = { TELEGRAM: 'telegram', SLACK: 'slack' } as const;

registerEnumType(CHANNEL_KIND, {
  name: 'ChannelKind',
  description: 'A channel an owner binds; the dashboard needs no binding.',
});
registerEnumType(CHANNEL_BINDING_STATE, {
  name: 'ChannelBindingState',
  description: 'PENDING until the link code comes back through the channel.',
});
registerEnumType(CHANNEL_INBOUND_OUTCOME, { name: 'ChannelInboundOutcome' });
registerEnumType(CHAT_CHANNEL, {
  name: 'ChatChannel',
  description: 'The channels whose messages the gateway verifies and forwards.',
});

@ObjectType({ description: 'What became of a message that arrived through a channel.' })
export class ChannelInboundResult {
  @Field(() => CHANNEL_INBOUND_OUTCOME)
  outcome!: InboundOutcome;

  @Field(() => String, { nullable: true, description: 'Why a reply or link changed nothing.' })
  reason!: string | null;

  @Field(() => String, { nullable: true })
  pollRef!: string | null;

  @Field(() => ESCALATION_STATE, { nullable: true })
  state!: EscalationStateValue | null;

  @Field({ description: 'A short answer for the sender.' })
  answer!: string;
}

@ObjectType({ description: 'Where an owner’s escalation notices go and who may answer them.' })
export class ChannelBinding {
  @Field(() => ID, { description: 'chb_ + 24 hex.' })
  bindingId!: string;

  @Field(() => CHANNEL_KIND)
  kind!: BindingKind;

  @Field(() => CHANNEL_BINDING_STATE)
  state!: BindingState;

  @Field(() => String, {
    nullable: true,
    description:
      'Chat or channel id, webhook URL or email address; null until a chat link completes.',
  })
  address!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The chat user who may answer; null: anyone in the bound chat.',
  })
  replyFrom!: string | null;

  @Field()
  createdAt!: Date;

  @Field(() => Date, { nullable: true })
  activatedAt!: Date | null;
}

@ObjectType({
  description: 'A started link: send the code back through the channel before it expires.',
})
export class ChannelLinkStart {
  @Field(() => ChannelBinding)
  binding!: ChannelBinding;

  @Field(() => String, {
    nullable: true,
    description: '24 hex, single use; null for email (active at once).',
  })
  linkCode!: string | null;

  @Field()
  linkExpiresAt!: Date;

  @Field(() => String, {
    nullable: true,
    description: 'webhook only: the HMAC key of notices and replies. Shown this once.',
  })
  secret!: string | null;

  @Field()
  instructions!: string;
}
