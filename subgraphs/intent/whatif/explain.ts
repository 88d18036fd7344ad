// GraphQL `explainDecision` (#34 item 4): for an intent's latest blocked or escalated decision,
// the smallest change to each amount setting and to the category lists that would have approved
// it, computed by the engine on the decision's inputs under the policy's current rules
// (core/whatif/explain). The policy's owner or an admin; anyone else, and a hash with no decision,
// POLICY_NOT_FOUND, as policyWhatIf answers.
import { Arg, Ctx, Field, ID, ObjectType, Query, Resolver } from 'type-graphql';
import { AppError } from '../../../core/errors';
import { compilePolicy } from '../../../core/engine';
import { formatAmount } from '../../../core/money/amount';
import { validatePolicy } from '../../../core/validation/policy';
import { explainDecision, type AmountFix } from '../../../core/whatif/explain';
import type { SubgraphContext } from '../../kit';
import { RuleTraceEntry } from '../decisions/schema';
import { readWhatIfHistory } from './reads';
import { requireOwnerOrAdmin } from './resolvers';

const MS_PER_HOUR = 3_600_000;

@ObjectType({ description: 'One amount setting and the smallest value of it that approves.' })
class AmountSettingFix {
  @Field({ description: 'dailyBudget, perCallCap or escalateAbove.' }) setting!: string;
  @Field({ description: 'The policy’s value, atomic units.' }) current!: string;
  @Field(() => String, {
    nullable: true,
    description: 'The smallest value that approves, atomic units; null when no value does.',
  })
  approving!: string | null;
  @Field(() => String, { nullable: true, description: '`approving` in the asset’s display form.' })
  approvingDisplay!: string | null;
}

@ObjectType({ description: 'Whether allowing the intent’s category approves it.' })
class CategorySettingFix {
  @Field() category!: string;
  @Field() approves!: boolean;
  @Field({ description: 'The category is missing from categories.allow.' }) addToAllow!: boolean;
  @Field({ description: 'The category is in categories.deny.' }) removeFromDeny!: boolean;
}

@ObjectType({
  description:
    'The smallest change to each setting that would have approved a past decision (docs/policies.md#explain-a-block).',
})
class DecisionExplanation {
  @Field(() => ID) intentHash!: string;
  @Field(() => ID) policyId!: string;
  @Field() decidedAt!: Date;
  @Field({ description: 'The stored decision code.' }) decision!: string;
  @Field({ description: 'The decision the policy’s current rules make on the same inputs.' })
  currentDecision!: string;
  @Field(() => [RuleTraceEntry]) currentTrace!: RuleTraceEntry[];
  @Field(() => [AmountSettingFix]) amounts!: AmountSettingFix[];
  @Field(() => CategorySettingFix) category!: CategorySettingFix;
  @Field({ description: 'The inputs were rebuilt from the stored trace.' }) rebuiltInputs!: boolean;
}

async function latestRefusal(
  ctx: SubgraphContext,
  intentHash: string,
): Promise<{ policyId: string; atMs: number } | null> {
  const result = await ctx.db.query<{ policy_id: string; at_ms: string }>(
    `SELECT policy_id, floor(extract(epoch FROM evaluated_at) * 1000)::text AS at_ms
       FROM intent.decisions
      WHERE intent_hash = $1 AND outcome <> 'APPROVED'
      ORDER BY decision_id DESC
      LIMIT 1`,
    [intentHash],
  );
  const row = result.rows[0];
  return row === undefined ? null : { policyId: row.policy_id, atMs: Number(row.at_ms) };
}

export async function explainBlockedDecision(
  ctx: SubgraphContext,
  rawHash: string,
): Promise<DecisionExplanation> {
  if (!/^0x[0-9a-fA-F]{64}$/.test(rawHash))
    throw new AppError('REQUEST_INVALID', undefined, [
      { field: 'intentHash', reason: 'must be 0x and 64 hex digits' },
    ]);
  const intentHash = rawHash.toLowerCase();
  const refusal = await latestRefusal(ctx, intentHash);
  if (refusal === null) {
    // Checked like any policy first, so a caller learns nothing about other owners' intents.
    await requireOwnerOrAdmin(ctx, '');
    throw new AppError('POLICY_NOT_FOUND');
  }
  await requireOwnerOrAdmin(ctx, refusal.policyId);
  const current = await ctx.db.query<{ rules: unknown }>(
    'SELECT rules FROM policy.current_policy($1)',
    [refusal.policyId],
  );
  const validated = validatePolicy(current.rows[0]?.rules);
  if (!validated.ok) throw new AppError('POLICY_NOT_FOUND');
  const rules = validated.rules;
  const compiled = compilePolicy(rules);
  const lookbackMs = Math.max(MS_PER_HOUR, compiled.duplicateWindowMs, compiled.cooldownMs);
  const range = { from: new Date(refusal.atMs), to: new Date(refusal.atMs + 1) };
  const { history, prior } = await readWhatIfHistory(ctx.db, refusal.policyId, range, lookbackMs);
  const past = history.findLast(
    (entry) => entry.intent.intentHash === intentHash && entry.outcome !== 'APPROVED',
  );
  if (past === undefined) throw new AppError('POLICY_NOT_FOUND');
  const explanation = explainDecision({ policyId: refusal.policyId, rules, past, prior });
  const display = (atomic: bigint | null) =>
    atomic === null ? null : formatAmount(atomic, rules.asset.decimals);
  return {
    intentHash,
    policyId: refusal.policyId,
    decidedAt: new Date(explanation.decidedAtMs),
    decision: explanation.decision,
    currentDecision: explanation.current.decision,
    currentTrace: explanation.current.ruleTrace as RuleTraceEntry[],
    amounts: explanation.amounts.map((fix: AmountFix) => ({
      setting: fix.setting,
      current: fix.currentAtomic.toString(),
      approving: fix.approvingAtomic?.toString() ?? null,
      approvingDisplay: display(fix.approvingAtomic),
    })),
    category: { ...explanation.categories },
    rebuiltInputs: explanation.rebuiltInputs,
  };
}

@Resolver()
export class ExplainDecisionResolver {
  @Query(() => DecisionExplanation, {
    description:
      'For an intent’s latest blocked or escalated decision, the smallest value of each amount setting, and whether allowing its category, ' +
      'that would have approved it under the policy’s current rules, computed by the engine on the decision’s inputs. ' +
      'The policy’s owner or an admin; anyone else POLICY_NOT_FOUND. Free (docs/policies.md#explain-a-block).',
  })
  async explainDecision(
    @Arg('intentHash', () => String) intentHash: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<DecisionExplanation> {
    return explainBlockedDecision(ctx, intentHash);
  }
}
