// What a reconciliation reads from the database, all for one policy: its consumer intents created
// in the period (optionally of one agent), the addresses that ever paid or were refunded on its
// behalf, the transactions of all its legs (so a leg of another period is not taken for an
// unbooked transfer), the TREASURY amount of each ledger group its legs name, and the preflight
// decisions BLOCKED_DUPLICATE of the period. The ledger is read through its published tables
// (SELECT only), never written.
import type { Db } from '../../../platform/db';
import type { BlockedDuplicate } from '../../../core/reconciliation/spendReport';
import {
  CONSUMER_INTENT_COLUMNS,
  type ConsumerIntentDbRow,
  type ConsumerIntentRow,
  fromRow,
} from '../consumer';

/** Purchases one report covers at most: beyond it the request is refused before any payment. */
export const MAX_REPORT_INTENTS = 5_000;
/** Duplicate decisions listed at most (the count and sum stay exact). */
export const MAX_LISTED_DUPLICATES = 1_000;

export interface Period {
  readonly policyId: string;
  readonly from: Date;
  readonly to: Date;
  readonly agentId: string | null;
}

const AGENT_OF = `spend_intent->>'agentId'`;

export async function countIntentsInPeriod(db: Db, period: Period): Promise<number> {
  const result = await db.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM intent.consumer_intents
      WHERE policy_id = $1::numeric AND created_at >= $2 AND created_at < $3
        AND ($4::text IS NULL OR ${AGENT_OF} = $4)`,
    [period.policyId, period.from, period.to, period.agentId],
  );
  return Number(result.rows[0].n);
}

/** The period's intents, at most MAX_REPORT_INTENTS + 1 (one more says the bound was passed). */
export async function intentsInPeriod(db: Db, period: Period): Promise<ConsumerIntentRow[]> {
  const result = await db.query<ConsumerIntentDbRow>(
    `SELECT ${CONSUMER_INTENT_COLUMNS} FROM intent.consumer_intents
      WHERE policy_id = $1::numeric AND created_at >= $2 AND created_at < $3
        AND ($4::text IS NULL OR ${AGENT_OF} = $4)
      ORDER BY created_at, intent_id LIMIT $5`,
    [period.policyId, period.from, period.to, period.agentId, MAX_REPORT_INTENTS + 1],
  );
  return result.rows.map(fromRow);
}

/** The agent of an intent as its SpendIntent names it. */
export function agentOf(row: ConsumerIntentRow): string | null {
  const agentId = row.spendIntent?.agentId;
  return typeof agentId === 'string' ? agentId : null;
}

export interface PolicyParties {
  /** The owner, the consumer wallets, funding payers and refund recipients, lowercase. */
  readonly addresses: Set<string>;
  /** Every transaction any of the policy's legs names, lowercase. */
  readonly legTransactions: Set<string>;
}

export async function policyParties(db: Db, policyId: string): Promise<PolicyParties> {
  const result = await db.query<{ address: string | null; tx: string | null }>(
    `SELECT lower(policy.policy_owner($1)) AS address, NULL AS tx
     UNION
     SELECT lower(x.address), lower(x.tx) FROM intent.consumer_intents c,
       LATERAL (VALUES (c.wallet, NULL), (c.funding->>'payer', c.funding->>'txHash'),
                       (c.refund->>'to', c.refund->>'txHash'), (NULL, c.settlement->>'txHash')) AS x(address, tx)
      WHERE c.policy_id = $1::numeric`,
    [policyId],
  );
  const addresses = new Set<string>();
  const legTransactions = new Set<string>();
  for (const row of result.rows) {
    if (row.address) addresses.add(row.address);
    if (row.tx) legTransactions.add(row.tx);
  }
  return { addresses, legTransactions };
}

/** |sum of TREASURY entries| per group: the amount that group says moved on chain. */
export async function treasuryAmounts(
  db: Db,
  groupIds: readonly string[],
): Promise<Map<string, bigint>> {
  const amounts = new Map<string, bigint>();
  if (groupIds.length === 0) return amounts;
  const result = await db.query<{ group_id: string; amount: string }>(
    `SELECT e.group_id, abs(sum(e.amount))::text AS amount
       FROM ledger.entries e JOIN ledger.accounts a ON a.account_id = e.account_id
      WHERE e.group_id = ANY($1::text[]) AND a.kind = 'TREASURY'
      GROUP BY e.group_id`,
    [groupIds],
  );
  for (const row of result.rows) amounts.set(row.group_id, BigInt(row.amount));
  return amounts;
}

interface DuplicateRow {
  intent_hash: string;
  agent_id: string | null;
  amount: string | null;
  evaluated_at: Date;
  total: string;
  total_amount: string;
}

/**
 * BLOCKED_DUPLICATE decisions of the period; agent and amount from the decision's own trace
 * (agent.allowDeny observes the agentId, hardCap.absolute the amount).
 */
export async function blockedDuplicates(
  db: Db,
  period: Period,
): Promise<{ count: number; amountAtomic: bigint; listed: BlockedDuplicate[] }> {
  const result = await db.query<DuplicateRow>(
    `WITH d AS (
       SELECT d.intent_hash, d.evaluated_at, d.decision_id,
              (SELECT t->>'observed' FROM jsonb_array_elements(d.rule_trace) t WHERE t->>'rule' = 'agent.allowDeny') AS agent_id,
              (SELECT t->>'observed' FROM jsonb_array_elements(d.rule_trace) t WHERE t->>'rule' = 'hardCap.absolute') AS amount
         FROM intent.decisions d
        WHERE d.policy_id = $1 AND d.decision = 'BLOCKED_DUPLICATE' AND d.evaluated_at >= $2 AND d.evaluated_at < $3)
     SELECT intent_hash, agent_id, amount, evaluated_at,
            count(*) OVER ()::text AS total,
            coalesce(sum(CASE WHEN amount ~ '^[0-9]{1,78}$' THEN amount::numeric END) OVER (), 0)::text AS total_amount
       FROM d WHERE $4::text IS NULL OR agent_id = $4
      ORDER BY evaluated_at, decision_id LIMIT $5`,
    [period.policyId, period.from, period.to, period.agentId, MAX_LISTED_DUPLICATES],
  );
  const first = result.rows[0];
  return {
    count: first ? Number(first.total) : 0,
    amountAtomic: first ? BigInt(first.total_amount) : 0n,
    listed: result.rows.map((row) => ({
      intentHash: row.intent_hash,
      agentId: row.agent_id,
      amountAtomic:
        row.amount !== null && /^[0-9]{1,78}$/.test(row.amount) ? BigInt(row.amount) : 0n,
      evaluatedAt: row.evaluated_at,
    })),
  };
}
