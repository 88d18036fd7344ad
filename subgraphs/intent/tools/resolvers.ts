// The agent tools of the intent subgraph (reads.ts). Anonymous callers are admitted, except on
// detectDuplicate, which a priced REST route sells: it runs only as the gateway's signed paid call.
// Bodies are the REST bodies of DECISIONS, answered verbatim.
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { requirePaidCall, type SubgraphContext } from '../../kit';
import type { Json } from '../views';
import { detectDuplicate, getLedger, receiptAnchor } from './reads';

@Resolver()
export class IntentToolResolver {
  @Query(() => GraphQLJSONObject, {
    description:
      'detect_duplicate: whether an approved intent with the same duplicate key tuple lies inside the policy’s window. ' +
      'Runs only through the paid REST route POST /detect_duplicate (PAID_ROUTE_ONLY otherwise).',
  })
  async detectDuplicate(
    @Arg('policyId', () => ID, { nullable: true }) policyId: string | null,
    @Arg('intent', () => GraphQLJSONObject, { nullable: true }) intent: Json | null,
    @Arg('intentHash', () => ID, { nullable: true }) intentHash: string | null,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    requirePaidCall(ctx, 'detectDuplicate');
    return detectDuplicate(ctx, policyId, intent, intentHash);
  }

  @Query(() => GraphQLJSONObject, {
    description:
      'get_ledger: the policy’s window slice. Admin, the owner, or its consumer session.',
  })
  async policyLedgerWindow(
    @Arg('policyId', () => ID, { nullable: true }) policyId: string | null,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    return getLedger(ctx, policyId);
  }

  @Query(() => GraphQLJSONObject, {
    description:
      'The anchor object of a decision or consumer receipt (docs/receipts.md "The five states"): ' +
      'NOT_RECORDED {reason}, PENDING {receiptId}, ANCHORED {receiptId, txHash, blockNumber, batchRoot, proof, chain, contract}, ' +
      'ANCHOR_FAILED {receiptId, reason} or NOT_FOUND {receiptId}.',
  })
  async receiptAnchor(
    @Arg('receiptId') receiptId: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    return receiptAnchor(ctx, receiptId);
  }

  @Mutation(() => GraphQLJSONObject, {
    description:
      'log_receipt: the anchor object of a receipt; every receipt is queued for anchoring when it is written, so this only reports it.',
  })
  async logReceipt(
    @Arg('receiptId') receiptId: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    return receiptAnchor(ctx, receiptId);
  }
}
