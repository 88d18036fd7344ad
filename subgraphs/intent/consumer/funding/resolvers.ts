// The fund route's two GraphQL fields: its per-request x402 terms (a free read the gateway runs
// before any 402) and its paid answer (run only as the paid call of POST
// /consumer/intents/:intentId/fund, after the payment is booked).
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { requirePaidCall, type SubgraphContext } from '../../../kit';
import { ConsumerIntentFunded } from '../schema';
import { consumerFundingTerms, fundedConsumerIntent } from './reads';

@Resolver()
export class ConsumerFundingResolver {
  @Query(() => GraphQLJSONObject, {
    description:
      'The x402 terms of funding a consumer intent (its consumer session only): amountAtomic (the exact funding amount), ' +
      'network, asset, payTo (the funding treasury), and refusal {code, message, details} when it cannot be funded now.',
  })
  async consumerIntentFundingTerms(
    @Arg('intentId') intentId: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Record<string, unknown>> {
    return consumerFundingTerms(ctx, intentId);
  }

  @Mutation(() => ConsumerIntentFunded, {
    description:
      'fund: {intent, funding} of an intent the x402 payment funded. ' +
      'Runs only through the paid REST route POST /consumer/intents/:intentId/fund (PAID_ROUTE_ONLY otherwise).',
  })
  async fundConsumerIntent(
    @Arg('intentId') intentId: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<ConsumerIntentFunded> {
    requirePaidCall(ctx, 'fundConsumerIntent');
    return fundedConsumerIntent(ctx, intentId);
  }
}
