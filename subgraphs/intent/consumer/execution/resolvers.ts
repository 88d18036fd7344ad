// The execution mutations of the intent subgraph: the consumer session queues its funded intent
// (REST POST /consumer/intents/:intentId/execute, 202), and an admin resolves a review (an
// ambiguous payment against the chain, or a paid purchase's delivery) (REST POST
// /consumer/intents/:intentId/resolve). Bodies: the intent view.
import { Arg, Ctx, ID, Mutation, Resolver } from 'type-graphql';
import type { SubgraphContext } from '../../../kit';
import { ConsumerIntentPayload } from '../schema';
import { queueExecution } from './queue';
import { resolveConsumerIntent } from './resolve';

@Resolver()
export class ConsumerExecutionResolver {
  @Mutation(() => ConsumerIntentPayload, {
    description:
      "Queue a FUNDED consumer intent for execution (the intent's consumer session); a repeat once queued changes nothing.",
  })
  async executeConsumerIntent(
    @Arg('intentId', () => ID) intentId: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<ConsumerIntentPayload> {
    return { intent: await queueExecution(ctx, intentId) };
  }

  @Mutation(() => ConsumerIntentPayload, {
    description:
      'Admin: resolve a MANUAL_REVIEW intent: an ambiguous payment (PAYMENT_AMBIGUOUS) as PAID or NOT_PAID, checked against the settlement chain; a paid purchase under review as ACCEPT_DELIVERY or REFUND (docs/consumer.md "Reconciler and resolve").',
  })
  async resolveConsumerIntent(
    @Arg('intentId', () => ID) intentId: string,
    @Arg('outcome') outcome: string,
    @Arg('evidence') evidence: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<ConsumerIntentPayload> {
    return { intent: await resolveConsumerIntent(ctx, intentId, outcome, evidence) };
  }
}
