// The one bounded read a what-if replays: a policy's decisions in the range, in decision order,
// each with the intent it judged (intent.spend_intents), the inputs stored with it (migration
// 0023; null before) and its reservation's fate; and, just before the range, the approvals the
// duplicate and cooldown rules look back on. At most MAX_WHATIF_DECISIONS rows: a range holding
// more is refused (RANGE_TOO_LONG) rather than replayed in part.
import { AppError } from '../../../core/errors';
import type { Outcome, TraceEntry } from '../../../core/engine';
import { validateSpendIntent, type SpendIntent } from '../../../core/validation/intent';
import {
  inputsFromJson,
  type PastDecision,
  type PriorApproval,
} from '../../../core/whatif/history';
import type { Db } from '../../../platform/db';

export const MAX_WHATIF_DECISIONS = 200_000;

interface Row {
  intent_hash: string;
  policy_hash: string | null;
  decision: string;
  outcome: Outcome;
  rule_trace: TraceEntry[];
  inputs: unknown;
  at_ms: string;
  canonical: Record<string, unknown> | null;
  prior: boolean;
  amount: string | null;
  expires_ms: string | null;
  settled_amount: string | null;
  settled_ms: string | null;
  released_ms: string | null;
}

export interface WhatIfHistory {
  readonly history: PastDecision[];
  readonly prior: PriorApproval[];
}

/** The stored wire intent as the engine takes it (its hash as stored; no clock involved). */
function intentOf(row: Row): SpendIntent | null {
  if (row.canonical === null) return null;
  const validated = validateSpendIntent(row.canonical, 0);
  return validated.ok
    ? { ...validated.intent, intentHash: row.intent_hash as `0x${string}` }
    : null;
}

export async function readWhatIfHistory(
  db: Db,
  policyId: string,
  range: { from: Date; to: Date },
  lookbackMs: number,
): Promise<WhatIfHistory> {
  const result = await db.query<Row>(
    `SELECT d.intent_hash, d.policy_hash, d.decision, d.outcome, d.rule_trace, d.inputs,
            floor(extract(epoch FROM d.evaluated_at) * 1000)::text AS at_ms, s.canonical,
            d.evaluated_at < $2 AS prior, r.amount::text AS amount,
            floor(extract(epoch FROM r.expires_at) * 1000)::text AS expires_ms,
            r.settled_amount::text AS settled_amount,
            floor(extract(epoch FROM r.settled_at) * 1000)::text AS settled_ms,
            CASE WHEN r.state = 'RELEASED' THEN floor(extract(epoch FROM r.updated_at) * 1000)::text END AS released_ms
       FROM intent.decisions d
       LEFT JOIN intent.spend_intents s ON s.intent_hash = d.intent_hash
       LEFT JOIN intent.reservations r ON r.decision_id = d.decision_id
      WHERE d.policy_id = $1 AND d.evaluated_at >= $4 AND d.evaluated_at < $3
        AND (d.evaluated_at >= $2 OR d.outcome = 'APPROVED')
      ORDER BY d.decision_id
      LIMIT $5`,
    [
      policyId,
      range.from,
      range.to,
      new Date(range.from.getTime() - lookbackMs),
      MAX_WHATIF_DECISIONS + 1,
    ],
  );
  if (result.rows.length > MAX_WHATIF_DECISIONS)
    throw new AppError(
      'RANGE_TOO_LONG',
      `The range holds more than ${MAX_WHATIF_DECISIONS} decisions; ask for a shorter one.`,
      [{ field: 'to', reason: `more than ${MAX_WHATIF_DECISIONS} decisions` }],
    );
  const intents = new Map<string, SpendIntent>();
  const history: PastDecision[] = [];
  const prior: PriorApproval[] = [];
  for (const row of result.rows) {
    const intent = intents.get(row.intent_hash) ?? intentOf(row);
    if (intent === null) continue;
    intents.set(row.intent_hash, intent);
    const atMs = Number(row.at_ms);
    if (row.prior) {
      prior.push({ intent, approvedAtMs: atMs });
      continue;
    }
    history.push({
      intent,
      decidedAtMs: atMs,
      boundToPolicy: row.policy_hash !== null && intent.policyHash === row.policy_hash,
      decision: row.decision,
      outcome: row.outcome,
      ruleTrace: row.rule_trace,
      inputs: inputsFromJson(row.inputs),
      reservation:
        row.amount === null
          ? null
          : {
              amountAtomic: BigInt(row.amount),
              expiresAtMs: Number(row.expires_ms),
              settledAtomic: row.settled_amount === null ? null : BigInt(row.settled_amount),
              settledAtMs: row.settled_ms === null ? null : Number(row.settled_ms),
              releasedAtMs: row.released_ms === null ? null : Number(row.released_ms),
            },
    });
  }
  return { history, prior };
}
