// The decisions' read model on the dashboard (GraphQL): a stored preflight decision with the
// engine that made it and its full trace, a page of them, and the list's filters.
import { ArgsType, Field, ID, Int, ObjectType } from 'type-graphql';
import { IntentPageInfo, PageArgs } from '../lists/pages';

@ObjectType({ description: 'One line of a decision’s trace (see docs/engine.md).' })
export class RuleTraceEntry {
  @Field() rule!: string;
  @Field({ description: 'PASS, BLOCK or ESCALATE.' }) result!: string;
  @Field(() => String, { nullable: true }) observed!: string | null;
  @Field(() => String, { nullable: true }) limit!: string | null;
  @Field(() => String, { nullable: true }) note!: string | null;
}

@ObjectType({
  description: 'A stored preflight decision with the engine that made it and its full trace.',
})
export class SpendDecision {
  @Field(() => ID) id!: string;
  @Field(() => ID) intentHash!: string;
  @Field(() => ID) policyId!: string;
  @Field(() => Int, { nullable: true }) policyVersion!: number | null;
  @Field(() => String, { nullable: true }) policyHash!: string | null;
  @Field({ description: 'APPROVED, a BLOCKED_* or an ESCALATED_* code.' }) decision!: string;
  @Field({ description: 'APPROVED, BLOCKED or ESCALATED.' }) outcome!: string;
  @Field(() => String, { nullable: true }) decidingRule!: string | null;
  @Field(() => String, { nullable: true }) failClosedReason!: string | null;
  @Field() evaluatedAt!: Date;
  @Field() engineVersion!: string;
  @Field() ruleManifestHash!: string;
  @Field(() => [RuleTraceEntry]) ruleTrace!: RuleTraceEntry[];
  @Field(() => String, { nullable: true }) receiptId!: string | null;
  @Field(() => String, { nullable: true, description: 'rsv_… for an APPROVED decision.' })
  reservationId!: string | null;
  @Field(() => String, {
    nullable: true,
    description:
      'ACTIVE, CONSUMED, RELEASED or EXPIRED (an ACTIVE one past its deadline reads EXPIRED).',
  })
  reservationState!: string | null;
}

@ObjectType({ description: 'Newest first; stable while decisions are added.' })
export class SpendDecisionConnection {
  @Field(() => [SpendDecision]) nodes!: SpendDecision[];
  @Field(() => IntentPageInfo) pageInfo!: IntentPageInfo;
}

@ArgsType()
export class DecisionArgs extends PageArgs {
  @Field(() => ID) policyId!: string;
  @Field(() => String, {
    nullable: true,
    description: 'Only this decision code (e.g. BLOCKED_BUDGET).',
  })
  decision?: string | null;
  @Field(() => String, {
    nullable: true,
    description: 'Only this outcome (APPROVED, BLOCKED, ESCALATED).',
  })
  outcome?: string | null;
}
