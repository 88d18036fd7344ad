// Consumer receipts in GraphQL: `consumerReceipt(intentId)` is public (what GET
// /consumer/receipt/:intentId runs; no credential, null for an unknown, malformed or not yet
// funded intent), and `ConsumerIntent.receipt` gives the same body to whoever may read the intent
// (its consumer session, its policy's owner, an admin). Both answer the body exactly as stored
// (on a deployment without anchoring, a PENDING anchor reads NOT_RECORDED with the reason).
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, FieldResolver, ID, Query, Resolver, Root } from 'type-graphql';
import { isConsumerIntentId } from '../../../../core/canon/id-shapes';
import type { SubgraphContext } from '../../../kit';
import { ConsumerIntent } from '../schema';
import type { ConsumerIntentView } from '../view';
import { getConsumerReceipt } from './store';
import { withReportedAnchor } from '../../anchoring/reads';

type Json = Record<string, unknown>;

async function storedBody(ctx: SubgraphContext, intentId: string): Promise<Json | null> {
  if (!isConsumerIntentId(intentId)) return null;
  const stored = await getConsumerReceipt(ctx.db, intentId);
  return stored === null ? null : withReportedAnchor(ctx, { ...stored.body });
}

@Resolver(() => ConsumerIntent)
export class ConsumerReceiptResolver {
  @Query(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'The public receipt of a consumer intent (docs/receipts.md "Consumer receipts"), as stored; public, no credential. ' +
      'Null for an unknown or malformed id and for an intent not funded yet.',
  })
  async consumerReceipt(
    @Arg('intentId', () => ID) intentId: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json | null> {
    return storedBody(ctx, intentId);
  }

  @FieldResolver(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'The intent’s public receipt (the same body as GET /consumer/receipt/:intentId); null until it is funded.',
  })
  async receipt(
    @Root() intent: ConsumerIntentView,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json | null> {
    return storedBody(ctx, intent.intentId);
  }
}
