// The dispute fields of the intent subgraph: generateDisputePacket, sold by the priced REST route
// POST /generate_dispute_packet (it runs only as the gateway's signed paid call), and its free
// terms check, which the gateway runs before any 402 so a caller never pays for a 404.
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { parseDisputePacketRequest } from '../../../core/validation/disputeRequest';
import { requirePaidCall, type SubgraphContext } from '../../kit';
import type { Json } from '../views';
import { generateDisputePacket, requireDisputedIntent } from './packet';

/** The GraphQL arguments back into the REST body, so one parser judges both. */
function requestOf(intentId: string | null | undefined, intentHash: string | null | undefined) {
  const body: Record<string, string> = {};
  if (intentId != null) body.intentId = intentId;
  if (intentHash != null) body.intentHash = intentHash;
  return parseDisputePacketRequest(body);
}

@Resolver()
export class DisputePacketResolver {
  @Query(() => GraphQLJSONObject, {
    description:
      'Whether POST /generate_dispute_packet can answer, asked before any 402 (the same readers as the paid call: the consumer session of ' +
      'the intent’s policy, its owner, an admin; anyone else gets CONSUMER_INTENT_NOT_FOUND, as for a missing intent): {refusal: null}.',
  })
  async disputePacketTerms(
    @Arg('intentId', () => ID, { nullable: true }) intentId: string | null,
    @Arg('intentHash', () => String, { nullable: true }) intentHash: string | null,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    await requireDisputedIntent(ctx, requestOf(intentId, intentHash));
    return { refusal: null };
  }

  @Mutation(() => GraphQLJSONObject, {
    description:
      'generate_dispute_packet: the evidence pack of a consumer intent (intent and hash, policy version and hash, decision trace, ' +
      'approval without its code, both payment legs with tx hashes and blocks, providerAttested and serviceVerified apart, the receipt ' +
      'with its anchor proof, the ledger groups), with integrity.digest = keccak256(JCS(packet without integrity)). ' +
      'Runs only through the paid REST route POST /generate_dispute_packet (PAID_ROUTE_ONLY otherwise).',
  })
  async generateDisputePacket(
    @Arg('intentId', () => ID, { nullable: true }) intentId: string | null,
    @Arg('intentHash', () => String, { nullable: true }) intentHash: string | null,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    requirePaidCall(ctx, 'generateDisputePacket');
    return generateDisputePacket(ctx, requestOf(intentId, intentHash));
  }
}
