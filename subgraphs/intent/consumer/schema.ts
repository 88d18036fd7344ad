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
export const CONSUMER_NEXT_ACTION = {
  FUND: 'FUND',
  AWAIT_APPROVAL: 'AWAIT_APPROVAL',
  NONE: 'NONE',
} as const;

registerEnumType(CONSUMER_APPROVAL_DECISION, { name: 'ConsumerApprovalDecision' });
registerEnumType(CONSUMER_NEXT_ACTION, {
  name: 'ConsumerNextAction',
  description:
    'What the consumer does next: FUND (POST the fund route), AWAIT_APPROVAL (the owner decides), NONE.',
});

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

/** What execute and resolve answer: the intent as it now stands. */
@ObjectType({ description: 'A consumer intent as a purchase mutation leaves it.' })
export class ConsumerIntentPayload {
  @Field(() => ConsumerIntent) intent!: ConsumerIntentView;
}

/** What fund answers: the intent and the funding leg the x402 payment booked. */
@ObjectType({ description: 'A consumer intent the x402 payment funded, and its funding leg.' })
export class ConsumerIntentFunded extends ConsumerIntentPayload {
  @Field(() => GraphQLJSONObject, {
    description: 'The booked payment {payer, payTo, network, asset, amount, txHash, groupId, …}.',
  })
  funding!: Json;
}

/** What approve answers (and create, with `created`): the intent, its quote and decision, what next. */
@ObjectType({
  description:
    'A consumer intent after the policy or its owner decided it: the quote, the decision, and what the consumer does next.',
})
export class ConsumerIntentDecided extends ConsumerIntentPayload {
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'docs/consumer.md "Quote".' })
  quote!: Json | null;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'The preflight response.' })
  decision!: Json | null;
  @Field(() => CONSUMER_NEXT_ACTION) nextAction!: keyof typeof CONSUMER_NEXT_ACTION;
  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'With nextAction FUND: the fund route and its exact terms {method, path, network, asset, amount, payTo}.',
  })
  fundingRequest!: Json | null;
}

@ObjectType({ description: 'What createConsumerIntent answers.' })
export class ConsumerIntentCreated extends ConsumerIntentDecided {
  @Field({
    description:
      'False when the idempotency key named an intent created earlier (REST: 200, not 201).',
  })
  created!: boolean;
}
