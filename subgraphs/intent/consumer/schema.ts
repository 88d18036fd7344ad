// GraphQL types of consumer intents: the ConsumerIntent entity (keyed by intentId; the fields of
// consumerIntentView, the JSON legs as JSONObject), its page, its states and the owner's decision.
import { GraphQLJSONObject } from 'graphql-scalars';
import { Directive, Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { CONSUMER_INTENT_STATES } from '../../../core/consumer/lifecycle';
import { IntentPageInfo } from '../lists/pages';
import type { ConsumerIntentView } from './view';

export const CONSUMER_INTENT_STATE = Object.fromEntries(
  CONSUMER_INTENT_STATES.map((state) => [state, state]),
) as { [S in (typeof CONSUMER_INTENT_STATES)[number]]: S };
export const CONSUMER_APPROVAL_DECISION = { APPROVE: 'APPROVE', DENY: 'DENY' } as const;

registerEnumType(CONSUMER_INTENT_STATE, {
  name: 'ConsumerIntentState',
  description: 'The lifecycle of DECISIONS "Consumer intents" (docs/consumer.md).',
});
registerEnumType(CONSUMER_APPROVAL_DECISION, { name: 'ConsumerApprovalDecision' });

type Json = Record<string, unknown>;

@Directive('@key(fields: "intentId")')
@ObjectType({
  description:
    'A consumer purchase: the capability asked for, its quote, the policy’s decision, both payment legs and the merchant’s answer.',
})
export class ConsumerIntent implements ConsumerIntentView {
  @Field(() => ID, { description: 'ci_ + 24 hex.' }) intentId!: string;
  @Field(() => ID) policyId!: string;
  @Field() capability!: string;
  @Field({ description: 'The catalog provider id.' }) provider!: string;
  @Field({ description: 'The catalog category the SpendIntent carried.' }) category!: string;
  @Field(() => GraphQLJSONObject) params!: Json;
  @Field(() => CONSUMER_INTENT_STATE) state!: string;
  @Field(() => Int, { description: 'Bumped by every state change.' }) stateVersion!: number;
  @Field(() => String, { nullable: true }) stateReason!: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'docs/consumer.md "Quote".' })
  quote!: Json | null;
  @Field(() => String, { nullable: true, description: 'Atomic units of the funding asset.' })
  fundingAmount!: string | null;
  @Field(() => String, { nullable: true, description: 'The SpendIntent’s EIP-712 hash.' })
  intentHash!: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'The preflight response.' })
  decision!: Json | null;
  @Field(() => String, { nullable: true, description: 'The escalation, while one is open.' })
  pollRef!: string | null;
  @Field(() => String, { nullable: true }) reservationId!: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true }) funding!: Json | null;
  @Field(() => GraphQLJSONObject, { nullable: true }) settlement!: Json | null;
  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'The merchant’s own answer (attested by it, never verified by the service).',
  })
  providerAttested!: Json | null;
  @Field(() => GraphQLJSONObject, { nullable: true }) refund!: Json | null;
  @Field(() => GraphQLJSONObject, { nullable: true }) resolution!: Json | null;
  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'The service’s own delivery finding {verified, method, source, checkedAt, detail}, kept apart from providerAttested.',
  })
  serviceVerified!: Json | null;
  @Field({ description: 'ISO-8601 UTC.' }) createdAt!: string;
  @Field({ description: 'ISO-8601 UTC.' }) updatedAt!: string;
}

@ObjectType({ description: 'Newest first; stable while intents are added.' })
export class ConsumerIntentConnection {
  @Field(() => [ConsumerIntent]) nodes!: ConsumerIntentView[];
  @Field(() => IntentPageInfo) pageInfo!: IntentPageInfo;
}
