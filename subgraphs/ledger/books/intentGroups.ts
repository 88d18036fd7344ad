// The ledger groups booked for one consumer intent, each with its entries, oldest first: what a
// dispute packet shows of the books. An intent's groups carry its id or its intentHash as
// intent_ref (the FUNDING group is booked by consuming the reservation, keyed by the hash), or are
// named by the intent's own record; groups reversing any of them come along. Read-only, bounded
// (MAX_INTENT_GROUPS groups, each at most 64 entries by the table's own check), one statement.
import type { Db } from '../../../platform/db';

/** More than any intent's life books (funding, settlement, recognition, refund, reversals). */
export const MAX_INTENT_GROUPS = 64;

export interface IntentLedgerEntry {
  readonly entryNo: number;
  readonly account: string;
  /** Signed atomic units: + debit, − credit. */
  readonly amountAtomic: string;
}

export interface IntentLedgerGroup {
  readonly groupId: string;
  readonly kind: string;
  readonly asset: string;
  readonly reverses: string | null;
  readonly memo: string | null;
  readonly createdAt: Date;
  readonly entries: IntentLedgerEntry[];
}

interface Row {
  group_id: string;
  kind: string;
  asset: string;
  reverses: string | null;
  memo: string | null;
  created_at: Date;
  entries: { entryNo: number; account: string; amount: string }[];
}

export interface IntentLedgerRefs {
  /** intent_ref values: the intent id and, once quoted, its intentHash. */
  readonly intentRefs: readonly string[];
  /** Groups the intent's record names (funding, settlement, refund…). */
  readonly groupIds: readonly string[];
}

export async function intentLedgerGroups(
  db: Db,
  refs: IntentLedgerRefs,
): Promise<IntentLedgerGroup[]> {
  const result = await db.query<Row>(
    `WITH picked AS (
       SELECT group_id FROM ledger.groups
        WHERE intent_ref = ANY($1::text[]) OR group_id = ANY($2::text[]))
     SELECT g.group_id, g.kind::text AS kind, g.asset, g.reverses, g.memo, g.created_at,
            (SELECT jsonb_agg(jsonb_build_object('entryNo', e.entry_no, 'account', e.account_id,
                                                 'amount', e.amount::text) ORDER BY e.entry_no)
               FROM ledger.entries e WHERE e.group_id = g.group_id) AS entries
       FROM ledger.groups g
      WHERE g.group_id IN (SELECT group_id FROM picked)
         OR g.reverses IN (SELECT group_id FROM picked)
      ORDER BY g.seq
      LIMIT $3`,
    [refs.intentRefs, refs.groupIds, MAX_INTENT_GROUPS],
  );
  return result.rows.map((row) => ({
    groupId: row.group_id,
    kind: row.kind,
    asset: row.asset,
    reverses: row.reverses,
    memo: row.memo,
    createdAt: row.created_at,
    entries: (row.entries ?? []).map((entry) => ({
      entryNo: entry.entryNo,
      account: entry.account,
      amountAtomic: entry.amount,
    })),
  }));
}
