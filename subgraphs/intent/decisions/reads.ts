// Dashboard reads of decisions: a policy's decisions, filtered by decision, outcome and time, newest
// first with opaque keyset cursors, and one decision with its full trace. A reservation past its
// deadline reads EXPIRED even before the sweep marks it (reservations/jobs.ts).
import type { SubgraphContext } from '../../kit';
import { requirePolicyReader } from '../lists/access';
import { afterCursor, cursorOf, pageSize } from '../lists/paging';
import type {
  DecisionArgs,
  RuleTraceEntry,
  SpendDecision,
  SpendDecisionConnection,
} from './schema';

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
  const after = afterCursor(args.after, /^d:([0-9]{1,19})$/);
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
