// Reads of groups and entries for dashboards and analysts: filtered by account, kind, intent,
// policy, asset and time, newest first, each list a page (paging.ts), each lookup within the
// actor's scope. Balances, the trial balance and treasury drift are in balances.ts.
import type { Db } from '../../../platform/db';
import type { GroupKind, AccountKind } from '../accounts/names';
import {
  ASSET_COLUMNS,
  type AssetColumns,
  assetOf,
  Conditions,
  decodeCursor,
  filtered,
  pageOf,
  pageSize,
  scoped,
  SEQ_CURSOR,
} from './paging';
import type {
  EntryView,
  GroupView,
  LedgerFilterInput,
  LedgerScope,
  Page,
  PageRequest,
} from './views';

interface GroupRow extends AssetColumns {
  seq: string;
  group_id: string;
  kind: GroupKind;
  intent_ref: string | null;
  policy_id: string | null;
  reverses: string | null;
  memo: string | null;
  idempotency_key: string;
  created_at: Date;
}

const GROUP_SELECT = `SELECT g.seq::text AS seq, g.group_id, g.kind::text AS kind, g.intent_ref, g.policy_id, g.reverses, g.memo,
         g.idempotency_key, g.created_at, ${ASSET_COLUMNS}
    FROM ledger.groups g JOIN ledger.assets s ON s.asset_id = g.asset`;

function groupOf(row: GroupRow): GroupView {
  return {
    id: row.group_id,
    kind: row.kind,
    asset: assetOf(row),
    intentRef: row.intent_ref,
    policyId: row.policy_id,
    reverses: row.reverses,
    memo: row.memo,
    idempotencyKey: row.idempotency_key,
    createdAt: row.created_at,
  };
}

export async function listGroups(
  db: Db,
  scope: LedgerScope,
  filter: LedgerFilterInput,
  page: PageRequest,
): Promise<Page<GroupView>> {
  const size = pageSize(page.first);
  const conditions = new Conditions();
  const policies = policiesToWalk(scope, filter);
  scoped(conditions, scope);
  // The walk over the policy's rows stands for the policy filter (an equality to a constant next
  // to it would let the planner take the policy as a constant again).
  filtered(conditions, { ...filter, policyId: null }, 'group');
  if (page.after != null)
    conditions.add((p) => `g.seq < ${p}::bigint`, decodeCursor(page.after, SEQ_CURSOR));
  conditions.values.push(size + 1);
  const result = await db.query<GroupRow>(groupPageSql(conditions, policies), conditions.values);
  return pageOf(result.rows, size, groupOf);
}

/**
 * The policies whose groups a page may hold, when it is limited to some (a policy filter or an
 * owner's scope), else null (every group).
 */
function policiesToWalk(scope: LedgerScope, filter: LedgerFilterInput): string[] | null {
  if (filter.policyId != null) return [filter.policyId];
  return scope.all ? null : [...scope.policyIds];
}

/**
 * The newest page of groups, `conditions` ending with its LIMIT. Limited to some policies, it
 * takes the newest rows of each policy from `groups_policy_id_seq` (a LATERAL per policy, whose
 * policy the planner cannot treat as a constant) and merges them: the cost is the page, whatever
 * the table holds. Written as a plain `WHERE policy_id = $1 ORDER BY seq DESC`, the planner walks
 * `groups_seq` backwards and filters, which costs every newer group of other policies
 * (docs/operations.md, "Growth").
 */
export function groupPageSql(conditions: Conditions, policies: string[] | null): string {
  const limit = `$${conditions.values.length}`;
  if (policies === null)
    return `${GROUP_SELECT} ${conditions.where()} ORDER BY g.seq DESC LIMIT ${limit}`;
  conditions.values.push(policies);
  const walk = `$${conditions.values.length}`;
  const where = [...conditions.clauses, 'g.policy_id = w.policy_id'].join(' AND ');
  return `SELECT g.seq::text AS seq, g.group_id, g.kind::text AS kind, g.intent_ref, g.policy_id, g.reverses, g.memo,
         g.idempotency_key, g.created_at, ${ASSET_COLUMNS}
    FROM unnest(${walk}::text[]) AS w(policy_id)
   CROSS JOIN LATERAL (SELECT g.* FROM ledger.groups g WHERE ${where} ORDER BY g.seq DESC LIMIT ${limit}) AS g
    JOIN ledger.assets s ON s.asset_id = g.asset
   ORDER BY g.seq DESC LIMIT ${limit}`;
}

/** One group, or null when it does not exist or lies outside the scope. */
export async function groupById(
  db: Db,
  scope: LedgerScope,
  groupId: string,
): Promise<GroupView | null> {
  const conditions = new Conditions();
  conditions.add((p) => `g.group_id = ${p}`, groupId);
  scoped(conditions, scope);
  const result = await db.query<GroupRow>(
    `${GROUP_SELECT} ${conditions.where()}`,
    conditions.values,
  );
  return result.rows.length === 0 ? null : groupOf(result.rows[0]);
}

export async function groupReversing(
  db: Db,
  scope: LedgerScope,
  groupId: string,
): Promise<GroupView | null> {
  const conditions = new Conditions();
  conditions.add((p) => `g.reverses = ${p}`, groupId);
  scoped(conditions, scope);
  const result = await db.query<GroupRow>(
    `${GROUP_SELECT} ${conditions.where()}`,
    conditions.values,
  );
  return result.rows.length === 0 ? null : groupOf(result.rows[0]);
}

interface EntryRow extends AssetColumns {
  seq: string;
  group_id: string;
  entry_no: number;
  group_kind: GroupKind;
  account_id: string;
  account_kind: AccountKind;
  amount: string;
  created_at: Date;
}

const ENTRY_SELECT = `SELECT e.seq::text AS seq, e.group_id, e.entry_no, g.kind::text AS group_kind, e.account_id,
         a.kind::text AS account_kind, e.amount::text AS amount, g.created_at, ${ASSET_COLUMNS}
    FROM ledger.entries e
    JOIN ledger.groups g ON g.group_id = e.group_id
    JOIN ledger.accounts a ON a.account_id = e.account_id
    JOIN ledger.assets s ON s.asset_id = e.asset`;

function entryOf(row: EntryRow): EntryView {
  return {
    id: `${row.group_id}:${row.entry_no}`,
    groupId: row.group_id,
    entryNo: row.entry_no,
    groupKind: row.group_kind,
    accountKey: row.account_id,
    accountKind: row.account_kind,
    asset: assetOf(row),
    amountAtomic: row.amount,
    createdAt: row.created_at,
  };
}

export async function listEntries(
  db: Db,
  scope: LedgerScope,
  filter: LedgerFilterInput,
  page: PageRequest,
): Promise<Page<EntryView>> {
  const size = pageSize(page.first);
  const conditions = new Conditions();
  scoped(conditions, scope);
  filtered(conditions, filter, 'entry');
  if (page.after != null)
    conditions.add((p) => `e.seq < ${p}::bigint`, decodeCursor(page.after, SEQ_CURSOR));
  conditions.values.push(size + 1);
  const result = await db.query<EntryRow>(
    `${ENTRY_SELECT} ${conditions.where()} ORDER BY e.seq DESC LIMIT $${conditions.values.length}`,
    conditions.values,
  );
  return pageOf(result.rows, size, entryOf);
}

/** The entries of these groups (already authorised through their groups), in slot order. */
export async function entriesOfGroups(
  db: Db,
  groupIds: readonly string[],
): Promise<Map<string, EntryView[]>> {
  const byGroup = new Map<string, EntryView[]>(groupIds.map((id) => [id, []]));
  if (groupIds.length === 0) return byGroup;
  const result = await db.query<EntryRow>(
    `${ENTRY_SELECT} WHERE e.group_id = ANY($1::text[]) ORDER BY e.group_id, e.entry_no`,
    [groupIds],
  );
  for (const row of result.rows) byGroup.get(row.group_id)?.push(entryOf(row));
  return byGroup;
}
