// The anchoring reads an owner follows: a policy's receipts whose anchor is not settled yet
// (pending.ts), the first message of the gateway's anchorsUpdated(policyId) subscription.
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, ID, Int, Query, Resolver } from 'type-graphql';
import type { SubgraphContext } from '../../kit';
import { PENDING_ANCHORS_DEFAULT, pendingAnchors } from './pending';

@Resolver()
export class AnchoringResolver {
  @Query(() => GraphQLJSONObject, {
    description:
      'A policy’s receipts (decision and consumer) whose anchor is not settled yet, oldest first: ' +
      '{policyId, asOf, pendingTotal, pending: [anchor objects]}. The policy’s owner or an admin.',
  })
  async policyPendingAnchors(
    @Arg('policyId', () => ID) policyId: string,
    @Arg('first', () => Int, { nullable: true, defaultValue: PENDING_ANCHORS_DEFAULT })
    first: number | null,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Record<string, unknown>> {
    return pendingAnchors(ctx, policyId, first);
  }
}
