// The agent-facing mutations of the intent subgraph: create_spend_intent and preflight_payment.
// Anonymous callers are admitted, except on preflightPayment, which a priced REST route sells: it
// runs only as the gateway's signed paid call. Bodies are the REST bodies of DECISIONS, verbatim.
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, ID, Mutation, Resolver } from 'type-graphql';
import { requirePaidCall, type SubgraphContext } from '../../kit';
import { createSpendIntent } from './createIntent';
import type { Json } from '../views';
import { preflightPayment } from './dispatch';

@Resolver()
export class IntentMutationResolver {
  @Mutation(() => GraphQLJSONObject, {
    description:
      'create_spend_intent: validate (INTENT_MALFORMED), bind to the policy, store (idempotent per intentHash).',
  })
  async createSpendIntent(
    @Arg('policyId', () => ID, { nullable: true }) policyId: string | null,
    @Arg('intent', () => GraphQLJSONObject) intent: Json,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    return createSpendIntent(ctx, policyId, intent);
  }

  @Mutation(() => GraphQLJSONObject, {
    description:
      'preflight_payment: evaluate an intent (or a stored intentHash) against the policy; the DECISIONS preflight response. ' +
      'Runs only through the paid REST route POST /preflight_payment (PAID_ROUTE_ONLY otherwise).',
  })
  async preflightPayment(
    @Arg('policyId', () => ID, { nullable: true }) policyId: string | null,
    @Arg('intent', () => GraphQLJSONObject, { nullable: true }) intent: Json | null,
    @Arg('intentHash', () => ID, { nullable: true }) intentHash: string | null,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    requirePaidCall(ctx, 'preflightPayment');
    return preflightPayment(ctx, policyId, intent, intentHash);
  }
}
