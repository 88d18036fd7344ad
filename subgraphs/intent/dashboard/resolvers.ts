// Dashboard reads (GraphQL): a policy's spend intents and decisions, filtered by decision and time,
// newest first with opaque keyset cursors; one decision with its full trace; and `Policy.intents`
// on the policy subgraph's entity. An admin sees every policy; an owner only the policies they own
// (asked of the policy subgraph through its published `policy.policy_owner`); anyone else is refused.
import {
  Arg,
  Args,
  ArgsType,
  Ctx,
  Field,
  FieldResolver,
  ID,
  Int,
  ObjectType,
  Query,
  Resolver,
  Root,
  Directive,
} from 'type-graphql';
import { AppError } from '../../core/errors';
import { requireActor, type SubgraphContext } from '../kit';
import { SpendIntent } from './schema';
import type { SpendIntentRow } from './store';

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

@ObjectType()
export class IntentPageInfo {
  @Field(() => String, {
    nullable: true,
    description: 'Opaque; pass as `after` for the next page.',
  })
  endCursor!: string | null;
  @Field() hasNextPage!: boolean;
}

@ObjectType({ description: 'Newest first; stable while decisions are added.' })
export class SpendDecisionConnection {
  @Field(() => [SpendDecision]) nodes!: SpendDecision[];
  @Field(() => IntentPageInfo) pageInfo!: IntentPageInfo;
}

@ObjectType({ description: 'Newest first; stable while intents are added.' })
export class SpendIntentConnection {
  @Field(() => [SpendIntent]) nodes!: SpendIntentRow[];
  @Field(() => IntentPageInfo) pageInfo!: IntentPageInfo;
}

/** The policy subgraph's entity, extended with its intents. */
@Directive('@key(fields: "id")')
@ObjectType('Policy')
export class PolicyWithIntents {
  @Field(() => ID) id!: string;
}

@ArgsType()
class PageArgs {
  @Field(() => Int, { defaultValue: 50, description: '1–200.' }) first!: number;
  @Field(() => String, { nullable: true }) after?: string | null;
  @Field(() => Date, { nullable: true, description: 'Inclusive lower bound.' }) from?: Date | null;
  @Field(() => Date, { nullable: true, description: 'Exclusive upper bound.' }) to?: Date | null;
}

@ArgsType()
class DecisionArgs extends PageArgs {
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

@ArgsType()
class IntentArgs extends PageArgs {
  @Field(() => ID) policyId!: string;
}

const POLICY_ID = /^[0-9]{1,78}$/;

/** Admin: every policy; owner: their own; anyone else is refused. */
export async function requirePolicyReader(ctx: SubgraphContext, policyId: string): Promise<void> {
  const actor = requireActor(ctx, ['admin', 'owner']);
  if (actor.kind === 'admin') return;
  const owner = POLICY_ID.test(policyId)
    ? (
        await ctx.db.query<{ owner: string | null }>('SELECT policy.policy_owner($1) AS owner', [
          policyId,
        ])
      ).rows[0]?.owner
    : null;
  if (owner?.toLowerCase() !== actor.address.toLowerCase())
    throw new AppError('FORBIDDEN', 'Only the policy’s owner sees its intents and decisions.');
}

function pageSize(first: number): number {
  if (!Number.isInteger(first) || first < 1 || first > 200) {
    throw new AppError('REQUEST_INVALID', 'first must be 1–200.', [
      { field: 'first', reason: 'must be 1–200' },
    ]);
  }
  return first;
}

function cursorOf(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string | null | undefined, shape: RegExp): RegExpExecArray | null {
  if (cursor === null || cursor === undefined) return null;
  const match = shape.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (match === null)
    throw new AppError('REQUEST_INVALID', 'The cursor is not one this list handed out.', [
      { field: 'after', reason: 'unknown cursor' },
    ]);
  return match;
}

interface DecisionRow {
  decision_id: string;
  intent_hash: string;
  policy_id: string;
  policy_version: number | null;
  policy_hash: string | null;
  decision: string;
  outcome: string;
  deciding_rule: string | null;
  fail_closed_reason: string | null;
  evaluated_at: Date;
  engine: { version: string; ruleManifestHash: string };
  rule_trace: RuleTraceEntry[];
  receipt_id: string | null;
  reservation_id: string | null;
  reservation_state: string | null;
}

const DECISION_SELECT = `
  SELECT d.decision_id::text AS decision_id, d.intent_hash, d.policy_id, d.policy_version, d.policy_hash, d.decision, d.outcome,
         d.deciding_rule, d.fail_closed_reason, d.evaluated_at, d.engine, d.rule_trace, r.receipt_id, v.reservation_id,
         CASE WHEN v.state = 'ACTIVE' AND v.expires_at <= $1 THEN 'EXPIRED' ELSE v.state END AS reservation_state
    FROM intent.decisions d
    LEFT JOIN intent.decision_receipts r ON r.decision_id = d.decision_id
    LEFT JOIN intent.reservations v ON v.decision_id = d.decision_id`;

function decisionOf(row: DecisionRow): SpendDecision {
  return {
    id: row.decision_id,
    intentHash: row.intent_hash,
    policyId: row.policy_id,
    policyVersion: row.policy_version,
    policyHash: row.policy_hash,
    decision: row.decision,
    outcome: row.outcome,
    decidingRule: row.deciding_rule,
    failClosedReason: row.fail_closed_reason,
    evaluatedAt: row.evaluated_at,
    engineVersion: row.engine.version,
    ruleManifestHash: row.engine.ruleManifestHash,
    ruleTrace: row.rule_trace,
    receiptId: row.receipt_id,
    reservationId: row.reservation_id,
    reservationState: row.reservation_state,
  };
}

export async function decisionsPage(
  ctx: SubgraphContext,
  args: DecisionArgs,
): Promise<SpendDecisionConnection> {
  await requirePolicyReader(ctx, args.policyId);
  const first = pageSize(args.first);
  const after = decodeCursor(args.after, /^d:([0-9]{1,19})$/);
  const result = await ctx.db.query<DecisionRow>(
    `${DECISION_SELECT}
      WHERE d.policy_id = $2
        AND ($3::text IS NULL OR d.decision = $3)
        AND ($4::text IS NULL OR d.outcome = $4)
        AND ($5::timestamptz IS NULL OR d.evaluated_at >= $5)
        AND ($6::timestamptz IS NULL OR d.evaluated_at < $6)
        AND ($7::bigint IS NULL OR d.decision_id < $7)
      ORDER BY d.decision_id DESC
      LIMIT $8`,
    [
      ctx.now(),
      args.policyId,
      args.decision ?? null,
      args.outcome ?? null,
      args.from ?? null,
      args.to ?? null,
      after?.[1] ?? null,
      first + 1,
    ],
  );
  const kept = result.rows.slice(0, first);
  const last = kept[kept.length - 1];
  return {
    nodes: kept.map(decisionOf),
    pageInfo: {
      endCursor: last === undefined ? null : cursorOf(`d:${last.decision_id}`),
      hasNextPage: result.rows.length > first,
    },
  };
}

export async function decisionById(
  ctx: SubgraphContext,
  id: string,
): Promise<SpendDecision | null> {
  if (!/^[0-9]{1,19}$/.test(id)) return null;
  const result = await ctx.db.query<DecisionRow>(`${DECISION_SELECT} WHERE d.decision_id = $2`, [
    ctx.now(),
    id,
  ]);
  const row = result.rows[0];
  if (row === undefined) return null;
  try {
    await requirePolicyReader(ctx, row.policy_id);
  } catch {
    return null;
  }
  return decisionOf(row);
}

export async function intentsPage(
  ctx: SubgraphContext,
  policyId: string,
  args: PageArgs,
): Promise<SpendIntentConnection> {
  await requirePolicyReader(ctx, policyId);
  const first = pageSize(args.first);
  const after = decodeCursor(args.after, /^i:([0-9]{1,16}):(0x[0-9a-f]{64})$/);
  const result = await ctx.db.query<{
    intent_hash: string;
    policy_id: string;
    agent_id: string;
    amount: string;
    created_at: Date;
    micros: string;
  }>(
    `SELECT intent_hash, policy_id::text AS policy_id, agent_id, amount::text AS amount, created_at,
            (extract(epoch FROM created_at) * 1000000)::bigint::text AS micros
       FROM intent.spend_intents
      WHERE policy_id = $1::numeric
        AND ($2::timestamptz IS NULL OR created_at >= $2)
        AND ($3::timestamptz IS NULL OR created_at < $3)
        AND ($4::bigint IS NULL OR ((extract(epoch FROM created_at) * 1000000)::bigint, intent_hash) < ($4::bigint, $5::text))
      ORDER BY created_at DESC, intent_hash DESC
      LIMIT $6`,
    [
      policyId,
      args.from ?? null,
      args.to ?? null,
      after?.[1] ?? null,
      after?.[2] ?? null,
      first + 1,
    ],
  );
  const kept = result.rows.slice(0, first);
  const last = kept[kept.length - 1];
  return {
    nodes: kept.map((row) => ({
      intentHash: row.intent_hash,
      policyId: row.policy_id,
      agentId: row.agent_id,
      amountAtomic: row.amount,
      createdAt: row.created_at,
    })),
    pageInfo: {
      endCursor: last === undefined ? null : cursorOf(`i:${last.micros}:${last.intent_hash}`),
      hasNextPage: result.rows.length > first,
    },
  };
}

@Resolver()
export class DashboardResolver {
  @Query(() => SpendDecisionConnection, {
    description: 'A policy’s decisions, newest first. Admin, or the policy’s owner.',
  })
  async spendDecisions(
    @Args() args: DecisionArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<SpendDecisionConnection> {
    return decisionsPage(ctx, args);
  }

  @Query(() => SpendDecision, {
    nullable: true,
    description: 'One decision with its full trace; null when absent or not the caller’s to see.',
  })
  async spendDecision(
    @Arg('id', () => ID) id: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<SpendDecision | null> {
    return decisionById(ctx, id);
  }

  @Query(() => SpendIntentConnection, {
    description: 'A policy’s bound intents, newest first. Admin, or the policy’s owner.',
  })
  async spendIntents(
    @Args() args: IntentArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<SpendIntentConnection> {
    return intentsPage(ctx, args.policyId, args);
  }
}

@Resolver(() => PolicyWithIntents)
export class PolicyIntentsResolver {
  @FieldResolver(() => SpendIntentConnection, {
    description: 'The intents bound to this policy, newest first: its owner and admins only.',
  })
  async intents(
    @Root() policy: PolicyWithIntents,
    @Args() args: PageArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<SpendIntentConnection> {
    return intentsPage(ctx, policy.id, args);
  }
}
