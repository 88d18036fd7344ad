// The counted outcomes of a provider (vendor) and of a buyer (agentId under a policy), read from
// the counters migration 0020 keeps beside the consumer purchase history (intent.trust_outcome_of
// says which purchase lands in which bucket; docs/trust.md). One primary-key probe each; no row is
// no history. Rule 7 reads the vendor's counters inside the preflight window (one array per row of
// intent.preflight_window, decoded by outcomesOfWindow).
import type { OutcomeCounts } from '../../../core/trust/score';
import type { Db } from '../../../platform/db';

/** [verified, failed, disputed, refunds, ambiguous, firstSeenMs] as intent.preflight_window returns it. */
export type WindowOutcomes = [number, number, number, number, number, number | string];

export const NO_HISTORY: OutcomeCounts = {
  verified: 0,
  failed: 0,
  disputed: 0,
  refunds: 0,
  ambiguous: 0,
  firstSeenAt: null,
};

interface CountsRow {
  verified: number;
  failed: number;
  disputed: number;
  refunds: number;
  ambiguous: number;
  first_seen_at: Date;
}

const COLUMNS = 'verified, failed, disputed, refunds, ambiguous, first_seen_at';

function countsOf(row: CountsRow | undefined): OutcomeCounts {
  if (row === undefined) return NO_HISTORY;
  const { verified, failed, disputed, refunds, ambiguous } = row;
  return { verified, failed, disputed, refunds, ambiguous, firstSeenAt: row.first_seen_at };
}

export async function vendorOutcomes(db: Db, provider: string): Promise<OutcomeCounts> {
  const result = await db.query<CountsRow>(
    `SELECT ${COLUMNS} FROM intent.trust_vendor_outcomes WHERE provider = $1`,
    [provider],
  );
  return countsOf(result.rows[0]);
}

export async function buyerOutcomes(
  db: Db,
  policyId: string,
  agentId: string,
): Promise<OutcomeCounts> {
  const result = await db.query<CountsRow>(
    `SELECT ${COLUMNS} FROM intent.trust_buyer_outcomes WHERE policy_id = $1::numeric AND agent_id = $2`,
    [policyId, agentId],
  );
  return countsOf(result.rows[0]);
}

/** The window's array back into counts; null (no row) is no history. */
export function outcomesOfWindow(raw: WindowOutcomes | null | undefined): OutcomeCounts {
  if (raw === null || raw === undefined) return NO_HISTORY;
  const [verified, failed, disputed, refunds, ambiguous, firstSeenMs] = raw;
  return {
    verified,
    failed,
    disputed,
    refunds,
    ambiguous,
    firstSeenAt: new Date(Number(firstSeenMs)),
  };
}
