// GraphQL types of escalations and channel bindings: the Escalation an owner sees (the resolving
// channel included, unlike the public poll body), its event log, pages of escalations, the result
// of an inbound channel message, and an owner's channel bindings with the one-time link start.
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { BindingKind, BindingState } from '../channels/writes';
import type { InboundOutcome } from '../channels/inbound';
import type { OwnerDecision } from './decisions';
import type { EscalationState as EscalationStateValue } from './reads';
import { PolicyPageInfo } from '../policies/schema';

export const ESCALATION_STATE = {
  PENDING: 'PENDING',
  APPROVED: 'APPROVED',
  DENIED: 'DENIED',
  EXPIRED: 'EXPIRED',
} as const;
export const ESCALATION_DECISION = { APPROVE: 'APPROVE', DENY: 'DENY' } as const;
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

registerEnumType(ESCALATION_STATE, {
  name: 'EscalationState',
  description:
    'PENDING until the owner decides or the timeout passes; EXPIRED is the fail-closed default deny.',
});
registerEnumType(ESCALATION_DECISION, { name: 'EscalationDecision' });
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

@ObjectType({
  description:
    'Something that happened to an escalation: a refused reply, a delivery, the decision.',
})
export class EscalationEvent {
  @Field(() => String, {
    nullable: true,
    description: 'Null for a reply whose code matched no escalation.',
  })
  pollRef!: string | null;

  @Field({
    description:
      'CREATED, APPROVED, DENIED, EXPIRED, APPROVAL_USED, REPLY_* (refused replies), DELIVERY_*.',
  })
  kind!: string;

  @Field(() => String, { nullable: true })
  channel!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The chat and user, or the binding, a reply came from.',
  })
  sender!: string | null;

  @Field(() => String, { nullable: true })
  detail!: string | null;

  @Field()
  at!: Date;
}

@ObjectType({
  description: 'An owner’s decision on an ESCALATED_* preflight, bound to one intentHash.',
})
export class Escalation {
  @Field(() => ID, { description: 'esc_ + 24 hex.' })
  pollRef!: string;

  @Field(() => ESCALATION_STATE)
  state!: EscalationStateValue;

  @Field(() => String, {
    nullable: true,
    description: 'APPROVED or DENIED once resolved (EXPIRED reports DENIED); null while PENDING.',
  })
  outcome!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'OWNER_APPROVED, OWNER_DENIED or ESCALATION_EXPIRED_DEFAULT_DENY.',
  })
  reason!: string | null;

  @Field()
  intentHash!: string;

  @Field(() => ID)
  policyId!: string;

  @Field(() => Int)
  policyVersion!: number;

  @Field({ description: 'The ESCALATED_* decision that opened it.' })
  decision!: string;

  @Field()
  decidingRule!: string;

  @Field({ description: 'The deciding rule in plain words.' })
  ruleReason!: string;

  @Field({ description: 'Atomic units of the policy asset.' })
  amountAtomic!: string;

  @Field()
  recipient!: string;

  @Field(() => GraphQLJSONObject, {
    description:
      'The escalated intent (DECISIONS "SpendIntent (wire)"): what an EIP-712 approval signs.',
  })
  intent!: Record<string, unknown>;

  @Field()
  createdAt!: Date;

  @Field()
  expiresAt!: Date;

  @Field(() => Date, { nullable: true })
  resolvedAt!: Date | null;

  @Field(() => String, {
    nullable: true,
    description: 'The channel that decided: telegram, slack, webhook, dashboard, dashboard+eip712.',
  })
  resolvedVia!: string | null;

  @Field({
    description: 'Whether the approval carried the owner’s EIP-712 signature over the intent.',
  })
  ownerSigned!: boolean;

  @Field({ description: 'Whether a preflight has used the approval (an approval is used once).' })
  approvalUsed!: boolean;
}

@ObjectType()
export class EscalationConnection {
  @Field(() => [Escalation])
  nodes!: Escalation[];

  @Field(() => PolicyPageInfo)
  pageInfo!: PolicyPageInfo;
}

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

export type EscalationDecisionValue = OwnerDecision;
