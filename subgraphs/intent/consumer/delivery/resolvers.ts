// The delivery mutation of the intent subgraph: verify_delivery, sold by the priced REST route
// POST /verify_delivery; it runs only as the gateway's signed paid call.
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, ID, Mutation, Resolver } from 'type-graphql';
import { requirePaidCall, type SubgraphContext } from '../../../kit';
import type { Json } from '../../views';
import { verifyDelivery } from './verifyDelivery';

@Resolver()
export class ConsumerDeliveryResolver {
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
