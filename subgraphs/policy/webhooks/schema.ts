// GraphQL types of owner webhooks: an endpoint (never its secret), the one answer that shows a
// secret (create and rotate), a delivery of one event to one endpoint, and a page of deliveries.
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { PolicyPageInfo } from '../policies/schema';
import type { DeliveryState, EndpointState } from './reads';

export const WEBHOOK_ENDPOINT_STATE = { ACTIVE: 'ACTIVE', DISABLED: 'DISABLED' } as const;
export const WEBHOOK_DELIVERY_STATE = {
  PENDING: 'PENDING',
  DELIVERED: 'DELIVERED',
  FAILED: 'FAILED',
} as const;
registerEnumType(WEBHOOK_ENDPOINT_STATE, { name: 'WebhookEndpointState' });
registerEnumType(WEBHOOK_DELIVERY_STATE, {
  name: 'WebhookDeliveryState',
  description: 'PENDING until a 2xx (DELIVERED) or the retry schedule is spent (FAILED).',
});

@InputType()
export class WebhookEndpointInput {
  @Field({
    description: 'https and a public host (http and loopback only in development); ≤ 2048 chars.',
  })
  url!: string;

  @Field(() => [String], {
    description:
      'Event types: escalation.created, escalation.resolved, consumer_intent.state_changed, receipt.anchored, policy.changed.',
  })
  events!: string[];

  @Field(() => [ID], {
    nullable: true,
    description: 'Only these policies of the owner (≤ 100); empty or absent: all of them.',
  })
  policyIds?: string[] | null;
}

@ObjectType({ description: 'Where an owner’s events are POSTed, signed with its secret.' })
export class WebhookEndpoint {
  @Field(() => ID, { description: 'whe_ + 24 hex.' })
  id!: string;

  @Field()
  url!: string;

  @Field(() => [String])
  events!: string[];

  @Field(() => [ID], { description: 'Empty: every policy of the owner.' })
  policyIds!: string[];

  @Field(() => WEBHOOK_ENDPOINT_STATE)
  state!: EndpointState;

  @Field()
  createdAt!: Date;

  @Field(() => Date, { nullable: true })
  secretRotatedAt!: Date | null;

  @Field(() => Date, { nullable: true })
  disabledAt!: Date | null;
}

@ObjectType({ description: 'An endpoint with its signing secret, shown this once.' })
export class WebhookEndpointSecret {
  @Field(() => WebhookEndpoint)
  endpoint!: WebhookEndpoint;

  @Field({ description: '64 hex: the HMAC-SHA256 key of `x-signature`. Shown only here.' })
  secret!: string;
}

@ObjectType({ description: 'One event to one endpoint: its attempts and outcome.' })
export class WebhookDelivery {
  @Field(() => ID, { description: 'whd_ + 24 hex.' })
  id!: string;

  @Field(() => ID)
  endpointId!: string;

  @Field(() => ID, { description: 'The event’s id (evt_ + 24 hex), the body’s `id`.' })
  eventId!: string;

  @Field()
  type!: string;

  @Field()
  occurredAt!: Date;

  @Field(() => GraphQLJSONObject, { description: 'The body’s `data`.' })
  data!: Record<string, unknown>;

  @Field(() => WEBHOOK_DELIVERY_STATE)
  state!: DeliveryState;

  @Field(() => Int, { description: 'Attempts since it was queued (or queued again).' })
  attempts!: number;

  @Field(() => Date, { nullable: true, description: 'PENDING: when the next attempt is due.' })
  nextAttemptAt!: Date | null;

  @Field(() => Int, { nullable: true, description: 'The HTTP status of the last answer.' })
  lastStatus!: number | null;

  @Field(() => String, { nullable: true })
  lastError!: string | null;

  @Field(() => Date, { nullable: true })
  lastAttemptAt!: Date | null;

  @Field(() => Date, { nullable: true })
  deliveredAt!: Date | null;

  @Field()
  createdAt!: Date;
}

@ObjectType({ description: 'Deliveries newest first.' })
export class WebhookDeliveryConnection {
  @Field(() => [WebhookDelivery])
  nodes!: WebhookDelivery[];

  @Field(() => PolicyPageInfo)
  pageInfo!: PolicyPageInfo;
}
