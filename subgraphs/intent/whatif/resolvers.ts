// GraphQL `policyWhatIf` (DECISIONS "Policy what-if"): a draft policy replayed over a policy's
// decisions in a range (core/whatif), for the policy's owner or an admin; anyone else is told
// POLICY_NOT_FOUND, so another owner learns nothing, not even that the policy exists. Also behind
// the free REST route POST /policy_what_if.
import { GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import {
  Arg,
  Args,
  ArgsType,
  Ctx,
  Field,
  ID,
  Int,
  ObjectType,
  Query,
  Resolver,
} from 'type-graphql';
import { AppError } from '../../../core/errors';
import { compilePolicy } from '../../../core/engine';
import { draftRules, whatIfRange } from '../../../core/whatif/request';
import { replayPolicy, type ReplayedDecision } from '../../../core/whatif/replay';
import { requireActor, type SubgraphContext } from '../../kit';
import { policyOwner } from '../lists/access';
import { RuleTraceEntry } from '../decisions/schema';
import { IntentPageInfo } from '../lists/pages';
import { readWhatIfHistory } from './reads';

const MS_PER_HOUR = 3_600_000;

function objectLiteral(node: ValueNode): unknown {
  switch (node.kind) {
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f) => [f.name.value, objectLiteral(f.value)]));
    case Kind.LIST:
      return node.values.map(objectLiteral);
    case Kind.STRING:
    case Kind.BOOLEAN:
    case Kind.ENUM:
      return node.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    default:
      return null;
  }
}

/** A whole policy document (DECISIONS "Spend policy (wire)") as the draft of a what-if. */
export const PolicyInputScalar = new GraphQLScalarType({
  name: 'PolicyInput',
  description:
    'A whole policy document in its wire shape (DECISIONS "Spend policy (wire)"), as createPolicy takes it; validated like any policy.',
  parseValue: (value) => value,
  parseLiteral: (node) => objectLiteral(node),
  serialize: (value) => value,
});

@ObjectType({ description: 'Decisions by outcome, and what the approvals authorised.' })
class WhatIfCounts {
  @Field(() => Int) approved!: number;
  @Field(() => Int) escalated!: number;
  @Field(() => Int) blocked!: number;
  @Field({ description: 'Sum of the approved amounts, atomic units of the policy’s asset.' })
  spend!: string;
}

@ObjectType({ description: 'What the approvals of one UTC day authorised, before and after.' })
class WhatIfDay {
  @Field({ description: 'YYYY-MM-DD (UTC).' }) day!: string;
  @Field() spendBefore!: string;
  @Field() spendAfter!: string;
}

@ObjectType()
class WhatIfSummary {
  @Field(() => WhatIfCounts) before!: WhatIfCounts;
  @Field(() => WhatIfCounts) after!: WhatIfCounts;
  @Field(() => [WhatIfDay]) byDay!: WhatIfDay[];
}

@ObjectType({ description: 'A past decision the draft decides otherwise.' })
class WhatIfChange {
  @Field(() => ID) intentHash!: string;
  @Field() decidedAt!: Date;
  @Field({ description: 'The stored decision code.' }) before!: string;
  @Field({ description: 'The draft’s decision code.' }) after!: string;
  @Field(() => String, { nullable: true, description: 'The rule that set `after`.' })
  decidingRule!: string | null;
  @Field(() => [RuleTraceEntry], { description: 'The draft’s full trace for this intent.' })
  trace!: RuleTraceEntry[];
  @Field({
    description: 'Its inputs were rebuilt from the stored trace (decided before inputs were kept).',
  })
  rebuiltInputs!: boolean;
}

@ObjectType({ description: 'Changed decisions in decision order.' })
class WhatIfChangeConnection {
  @Field(() => [WhatIfChange]) nodes!: WhatIfChange[];
  @Field(() => IntentPageInfo) pageInfo!: IntentPageInfo;
  @Field(() => Int) totalCount!: number;
}

@ObjectType({
  description: 'A draft policy replayed over a policy’s past decisions (docs/policies.md#what-if).',
})
class PolicyWhatIf {
  @Field(() => WhatIfSummary) summary!: WhatIfSummary;
  @Field(() => WhatIfChangeConnection) changed!: WhatIfChangeConnection;
  @Field(() => [String], {
    description:
      'Intent hashes whose decisions were replayed with inputs rebuilt from their trace.',
  })
  rebuiltInputs!: string[];
  @Field() from!: Date;
  @Field() to!: Date;
}

@ArgsType()
class WhatIfArgs {
  @Field(() => ID) policyId!: string;
  @Field(() => Date, { nullable: true, description: 'Inclusive; default `to` − 30 days.' })
  from?: Date | null;
  @Field(() => Date, {
    nullable: true,
    description: 'Exclusive; default now. At most 92 days after from.',
  })
  to?: Date | null;
  @Field(() => Int, { defaultValue: 50, description: '1–200 changed decisions per page.' })
  first!: number;
  @Field(() => String, { nullable: true }) after?: string | null;
}

const cursorOf = (index: number) => Buffer.from(`whatif:${index}`).toString('base64url');
function indexOf(cursor: string | null | undefined): number {
  if (cursor === null || cursor === undefined) return 0;
  const match = /^whatif:([0-9]{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (match === null)
    throw new AppError('REQUEST_INVALID', undefined, [
      { field: 'after', reason: 'is not a cursor of this list' },
    ]);
  return Number(match[1]) + 1;
}

function changeOf(replayed: ReplayedDecision): WhatIfChange {
  return {
    intentHash: replayed.intentHash,
    decidedAt: new Date(replayed.decidedAtMs),
    before: replayed.before.decision,
    after: replayed.after.decision,
    decidingRule: replayed.after.decidingRule,
    trace: replayed.after.ruleTrace as RuleTraceEntry[],
    rebuiltInputs: replayed.rebuilt,
  };
}

/** The policy's owner or an admin; anyone else, and a policy that does not exist: POLICY_NOT_FOUND. */
export async function requireOwnerOrAdmin(ctx: SubgraphContext, policyId: string): Promise<string> {
  const actor = requireActor(ctx, ['admin', 'owner']);
  const owner = /^[0-9]{1,78}$/.test(policyId) ? await policyOwner(ctx.db, policyId) : null;
  if (owner === null || (actor.kind !== 'admin' && owner !== actor.address.toLowerCase()))
    throw new AppError('POLICY_NOT_FOUND');
  return owner;
}

export async function policyWhatIf(
  ctx: SubgraphContext,
  args: WhatIfArgs & { draft: unknown },
): Promise<PolicyWhatIf> {
  if (!Number.isInteger(args.first) || args.first < 1 || args.first > 200)
    throw new AppError('REQUEST_INVALID', undefined, [
      { field: 'first', reason: 'must be 1 to 200' },
    ]);
  const range = whatIfRange(args.from, args.to, ctx.now().getTime());
  // One spelling per policy id (`007` is `7`), as decisions store it.
  const policyId = /^[0-9]{1,78}$/.test(args.policyId)
    ? BigInt(args.policyId).toString()
    : args.policyId;
  const owner = await requireOwnerOrAdmin(ctx, policyId);
  const draft = draftRules(args.draft, owner);
  const compiled = compilePolicy(draft);
  const lookbackMs = Math.max(MS_PER_HOUR, compiled.duplicateWindowMs, compiled.cooldownMs);
  const { history, prior } = await readWhatIfHistory(ctx.db, policyId, range, lookbackMs);
  const result = replayPolicy({ policyId, draft, history, prior });
  const start = indexOf(args.after);
  const page = result.decisions.slice(start, start + args.first);
  const counts = (c: typeof result.before): WhatIfCounts => ({
    approved: c.approved,
    escalated: c.escalated,
    blocked: c.blocked,
    spend: c.spendAtomic.toString(),
  });
  return {
    summary: {
      before: counts(result.before),
      after: counts(result.after),
      byDay: result.byDay.map((d) => ({
        day: d.day,
        spendBefore: d.spendBeforeAtomic.toString(),
        spendAfter: d.spendAfterAtomic.toString(),
      })),
    },
    changed: {
      nodes: page.map(changeOf),
      pageInfo: {
        endCursor: page.length === 0 ? null : cursorOf(start + page.length - 1),
        hasNextPage: start + page.length < result.decisions.length,
      },
      totalCount: result.decisions.length,
    },
    rebuiltInputs: [...result.rebuiltInputs],
    from: range.from,
    to: range.to,
  };
}

@Resolver()
export class PolicyWhatIfResolver {
  @Query(() => PolicyWhatIf, {
    description:
      'A draft policy replayed over the policy’s past decisions in [from, to) (default the last 30 days, at most 92: RANGE_TOO_LONG), ' +
      'the window carried forward from the draft’s own approvals; the summary before and after, and the decisions it changes. ' +
      'The policy’s owner or an admin; anyone else POLICY_NOT_FOUND. Free (docs/policies.md#what-if).',
  })
  async policyWhatIf(
    @Args() args: WhatIfArgs,
    @Arg('draft', () => PolicyInputScalar) draft: unknown,
    @Ctx() ctx: SubgraphContext,
  ): Promise<PolicyWhatIf> {
    return policyWhatIf(ctx, { ...args, draft });
  }
}
