// The delivery fields of the intent subgraph: verify_delivery, sold by the priced REST route
// POST /verify_delivery (it runs only as the gateway's signed paid call), and its free check of an
// `{intentId}` request, which the gateway runs before any 402.
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { requirePaidCall, type SubgraphContext } from '../../../kit';
import type { Json } from '../../views';
import { verifyDelivery, verifyDeliveryTerms } from './verifyDelivery';

@Resolver()
export class ConsumerDeliveryResolver {
  @Query(() => GraphQLJSONObject, {
    description:
      'Whether POST /verify_delivery can answer {intentId} now, asked before any 402 (the same readers as the paid call: ' +
      'the consumer session of the intent’s policy, its owner, an admin; anyone else gets CONSUMER_INTENT_NOT_FOUND, as for a missing intent): ' +
      '{intentId, refusal}, refusal {code, message, details} (DELIVERY_NOT_READY while the merchant has not answered) or null.',
  })
  async verifyDeliveryTerms(
    @Arg('intentId', () => ID) intentId: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    return verifyDeliveryTerms(ctx, intentId);
  }

  @Mutation(() => GraphQLJSONObject, {
    description:
      'verify_delivery: the service’s own check of a delivery ({intentId}, or {capability, params, providerAttested} for a purchase made elsewhere); ' +
      'answers {serviceVerified} and never echoes the merchant’s claim. Runs only through the paid REST route POST /verify_delivery (PAID_ROUTE_ONLY otherwise).',
  })
  async verifyDelivery(
    @Arg('intentId', () => ID, { nullable: true }) intentId: string | null,
    @Arg('capability', () => String, { nullable: true }) capability: string | null,
    @Arg('params', () => GraphQLJSONObject, { nullable: true }) params: Json | null,
    @Arg('providerAttested', () => GraphQLJSONObject, { nullable: true })
    providerAttested: Json | null,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    requirePaidCall(ctx, 'verifyDelivery');
    return verifyDelivery(ctx, { intentId, capability, params, providerAttested });
  }
}
