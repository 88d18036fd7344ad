// GraphQL types of escalations: the Escalation an owner sees (the resolving channel included,
// unlike the public poll body), its event log and pages of escalations. The channel types that
// answer an inbound message or a link are in channels/schema.ts.
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
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

registerEnumType(ESCALATION_STATE, {
  name: 'EscalationState',
  description:
    'PENDING until the owner decides or the timeout passes; EXPIRED is the fail-closed default deny.',
});
registerEnumType(ESCALATION_DECISION, { name: 'EscalationDecision' });

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

export type EscalationDecisionValue = OwnerDecision;
