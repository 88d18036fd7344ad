// The trust fields of the intent subgraph (issue #21): score_vendor and score_buyer, sold by the
// priced REST routes POST /score_vendor and POST /score_buyer (they run only as the gateway's
// signed paid call), and their free checks, which the gateway runs before any 402 so that bad
// input, a caller who may not read the buyer and too little history are never charged.
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, ID, Query, Resolver } from 'type-graphql';
import { requirePaidCall, type SubgraphContext } from '../../kit';
import type { Json } from '../views';
import { computeScore, scoreTerms } from './score';

const VENDOR_ANSWER =
  '{provider, score 0–100, confidence, lowerBound (Wilson), basis {verified, failed, disputed, refunds, ambiguous, observations, ageSeconds}, computedAt}';
const BUYER_READERS = 'an admin, the policy’s owner or a consumer session bound to the policy';

/** The GraphQL arguments back into the REST body, so one parser judges both. */
function bodyOf(args: Record<string, string | null>): Json {
  return Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null));
}

@Resolver()
export class TrustScoreResolver {
  @Query(() => GraphQLJSONObject, {
    description:
      'Whether POST /score_vendor can answer now, asked before any 402: {refusal} with SCORE_INSUFFICIENT_HISTORY (and the counts) or null. Bad input is REQUEST_INVALID.',
  })
  async scoreVendorTerms(
    @Arg('provider', () => String, { nullable: true }) provider: string | null,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    return scoreTerms(ctx, 'vendor', bodyOf({ provider }));
  }

  @Query(() => GraphQLJSONObject, {
    description: `score_vendor: the service’s own score of a provider from its counted purchase outcomes, ${VENDOR_ANSWER}, or SCORE_INSUFFICIENT_HISTORY (422). Runs only through the paid REST route POST /score_vendor (PAID_ROUTE_ONLY otherwise).`,
  })
  async scoreVendor(
    @Arg('provider', () => String, { nullable: true }) provider: string | null,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    requirePaidCall(ctx, 'scoreVendor');
    return computeScore(ctx, 'vendor', bodyOf({ provider }));
  }

  @Query(() => GraphQLJSONObject, {
    description: `Whether POST /score_buyer can answer now, asked before any 402, for ${BUYER_READERS} (FORBIDDEN otherwise): {refusal} or null.`,
  })
  async scoreBuyerTerms(
    @Arg('agentId', () => String, { nullable: true }) agentId: string | null,
    @Arg('policyId', () => ID, { nullable: true }) policyId: string | null,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    return scoreTerms(ctx, 'buyer', bodyOf({ agentId, policyId }));
  }

  @Query(() => GraphQLJSONObject, {
    description: `score_buyer: the service’s own score of a buyer (agentId under policyId) from its counted purchase outcomes, the same shape as scoreVendor with agentId and policyId, for ${BUYER_READERS}. Runs only through the paid REST route POST /score_buyer (PAID_ROUTE_ONLY otherwise).`,
  })
  async scoreBuyer(
    @Arg('agentId', () => String, { nullable: true }) agentId: string | null,
    @Arg('policyId', () => ID, { nullable: true }) policyId: string | null,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    requirePaidCall(ctx, 'scoreBuyer');
    return computeScore(ctx, 'buyer', bodyOf({ agentId, policyId }));
  }
}
