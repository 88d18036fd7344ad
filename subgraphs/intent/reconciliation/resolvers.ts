// The reconciliation fields of the intent subgraph: the analyst query `reconciliation` (free, for
// the policy's owner, its consumer session and admins), and the two behind the priced REST route
// POST /reconcile_agent_spend: its free check, run by the gateway before any 402, and the paid
// call itself (PAID_ROUTE_ONLY anywhere else). The analyst query answers the report's chain section
// from the ledger and the stored chain findings; only the paid call scans the chains.
import { GraphQLJSONObject } from 'graphql-scalars';
import { Args, ArgsType, Ctx, Field, ID, Query, Resolver } from 'type-graphql';
import { requirePaidCall, type SubgraphContext } from '../../kit';
import type { Json } from '../views';
import { reconcileAgentSpend, reconcileAgentSpendTerms } from './report';

@ArgsType()
class ReconciliationArgs {
  @Field(() => ID)
  policyId!: string;

  @Field({ description: 'ISO-8601 with offset, inclusive.' })
  from!: string;

  @Field({ description: 'ISO-8601 with offset, exclusive; after from, at most 92 days later.' })
  to!: string;

  @Field(() => String, {
    nullable: true,
    description: 'Only this agent’s purchases and duplicates.',
  })
  agentId?: string | null;
}

@Resolver()
export class ReconciliationResolver {
  @Query(() => GraphQLJSONObject, {
    description:
      'A policy’s spend and waste report for a period; its chainCheck is NOT_SCANNED: the booked legs and the stored chain findings, no chain read (POST /reconcile_agent_spend scans the chains; docs/reconciliation.md). ' +
      'The policy’s owner, its consumer session or an admin; anyone else FORBIDDEN. Money as atomic-unit strings.',
  })
  async reconciliation(
    @Args() args: ReconciliationArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    return reconcileAgentSpend(ctx, args, { scan: false });
  }

  @Query(() => GraphQLJSONObject, {
    description:
      'Whether POST /reconcile_agent_spend can answer, asked before any 402 with the same readers as the paid call: {policyId, refusal}.',
  })
  async reconcileAgentSpendTerms(
    @Args() args: ReconciliationArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    return reconcileAgentSpendTerms(ctx, args);
  }

  @Query(() => GraphQLJSONObject, {
    description:
      'reconcile_agent_spend: the report with a fresh scan of both chains (bounded RPC calls per report), sold by POST /reconcile_agent_spend (PAID_ROUTE_ONLY otherwise).',
  })
  async reconcileAgentSpend(
    @Args() args: ReconciliationArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    requirePaidCall(ctx, 'reconcileAgentSpend');
    return reconcileAgentSpend(ctx, args, { scan: true });
  }
}
