// Monthly partitions of the append-only logs (ledger migration 0013, policy migrations 0015-0016;
// docs/operations.md "Partitioning the append-only tables"). Each log is partitioned by month
// (UTC) of its time column, with a DEFAULT partition for any row no month covers, so a write never
// fails for want of a partition. The worker keeps the coming months made (any role may); an
// operator detaches whole past months for archive (the owner only): a detached month is a plain
// table of its own, to be dumped and dropped. Each schema has its own pair of functions
// (`<schema>.ensure_month_partitions`, `<schema>.detach_month_partitions`) for its own logs, as it
// has its own guards: a subgraph's migrations never need another's schema.
//
// The ledger's groups and entries (ledger migration 0014) are partitioned by month too, by their
// time-ordered group ids rather than a time column, in pairs (a month of groups with its
// entries): `ledger.ensure_group_month_partitions` and `ledger.detach_group_month_partitions`,
// which detaches a month only once all its entries lie inside the balance checkpoint. Here they
// go by the name of the groups' table, LEDGER_BOOKS.
//
// Decisions (intent migration 0025) are partitioned by month of their ids, which begin with their
// month: `intent.ensure_decision_month_partitions` and `intent.detach_decision_month_partitions`,
// which stops at the first month still in use (an ACTIVE reservation, a receipt not anchored).
//
// The x402 payment records (ledger migration 0015) are partitioned by month of their time-ordered
// payment ids: `ledger.ensure_payment_month_partitions` and `ledger.detach_payment_month_partitions`,
// which stops at the first month still in use (a payment the chain has not decided, an
// authorization still valid).
import type { Db } from './handle';

/** The logs partitioned by month, as `schema.table`. */
export const MONTH_PARTITIONED_LOGS = [
  'ledger.operator_actions',
  'policy.escalation_events',
  'policy.policy_changes',
] as const;
export type MonthPartitionedLog = (typeof MONTH_PARTITIONED_LOGS)[number];

/** The ledger's groups with their entries, partitioned by month of group id (ledger migration 0014). */
export const LEDGER_BOOKS = 'ledger.groups';

/** The decisions, partitioned by month of decision id (intent migration 0025). */
export const DECISIONS = 'intent.decisions';

/** The x402 payment records, partitioned by month of payment id (ledger migration 0015). */
export const SERVICE_PAYMENTS = 'ledger.service_payments';

/** The tables whose archive stops at the first month still in use (monthsKeptOpen names the months kept). */
export type GuardedArchive = typeof LEDGER_BOOKS | typeof DECISIONS | typeof SERVICE_PAYMENTS;

/**
 * What `archive detach` can detach months of: the logs, the ledger's groups with their entries,
 * the decisions, the payment records.
 */
export const ARCHIVABLE_TABLES = [
  ...MONTH_PARTITIONED_LOGS,
  LEDGER_BOOKS,
  DECISIONS,
  SERVICE_PAYMENTS,
] as const;
export type ArchivableTable = (typeof ARCHIVABLE_TABLES)[number];

/** How many months past the current one the worker keeps made. */
export const MONTHS_AHEAD = 3;

export function isMonthPartitionedLog(name: string): name is MonthPartitionedLog {
  return (MONTH_PARTITIONED_LOGS as readonly string[]).includes(name);
}

export function isArchivableTable(name: string): name is ArchivableTable {
  return (ARCHIVABLE_TABLES as readonly string[]).includes(name);
}

/**
 * Makes every log's month partitions, the ledger's groups and entries', the decisions' and the
 * payment records', from `now`'s month
 * through `monthsAhead` months later, unless made (or unless rows of that month already sit in
 * the DEFAULT partition); returns the partitions made, as `schema.table`.
 */
export async function ensureMonthPartitions(
  db: Db,
  now: Date,
  monthsAhead: number = MONTHS_AHEAD,
): Promise<string[]> {
  if (!Number.isInteger(monthsAhead) || monthsAhead < 0 || monthsAhead > 24)
    throw new RangeError(`monthsAhead must be an integer from 0 to 24, not ${monthsAhead}`);
  const made: string[] = [];
  for (const log of MONTH_PARTITIONED_LOGS) {
    const { rows } = await db.query<{ name: string }>(
      `SELECT ${schemaOf(log)}.ensure_month_partitions($1::regclass, $2::timestamptz,
                                             $2::timestamptz + make_interval(months => $3::int)) AS name`,
      [log, now, monthsAhead],
    );
    made.push(...rows.map((row) => `${schemaOf(log)}.${row.name}`));
  }
  const { rows } = await db.query<{ name: string }>(
    `SELECT ledger.ensure_group_month_partitions($1::timestamptz,
                                                 $1::timestamptz + make_interval(months => $2::int)) AS name`,
    [now, monthsAhead],
  );
  made.push(...rows.map((row) => `ledger.${row.name}`));
  const decisions = await db.query<{ name: string }>(
    `SELECT intent.ensure_decision_month_partitions($1::timestamptz,
                                                    $1::timestamptz + make_interval(months => $2::int)) AS name`,
    [now, monthsAhead],
  );
  made.push(...decisions.rows.map((row) => `intent.${row.name}`));
  const payments = await db.query<{ name: string }>(
    `SELECT ledger.ensure_payment_month_partitions($1::timestamptz,
                                                   $1::timestamptz + make_interval(months => $2::int)) AS name`,
    [now, monthsAhead],
  );
  made.push(...payments.rows.map((row) => `ledger.${row.name}`));
  return made;
}

/**
 * Detaches `table`'s month partitions that end at or before `before` (never the current month's or
 * a later one, nor the DEFAULT partition), oldest first; returns them as `schema.table`. For
 * LEDGER_BOOKS each month's entries go with its groups, and only months whose entries all lie
 * inside the balance checkpoint (monthsKeptOpen says which stayed). Needs the owner's login: the
 * service role may not call it.
 */
export async function detachMonthPartitions(
  db: Db,
  table: ArchivableTable,
  before: Date,
): Promise<string[]> {
  if (table === LEDGER_BOOKS) {
    const { rows } = await db.query<{ name: string }>(
      'SELECT ledger.detach_group_month_partitions($1::timestamptz) AS name',
      [before],
    );
    return rows.map((row) => `ledger.${row.name}`);
  }
  if (table === DECISIONS) {
    const { rows } = await db.query<{ name: string }>(
      'SELECT intent.detach_decision_month_partitions($1::timestamptz) AS name',
      [before],
    );
    return rows.map((row) => `intent.${row.name}`);
  }
  if (table === SERVICE_PAYMENTS) {
    const { rows } = await db.query<{ name: string }>(
      'SELECT ledger.detach_payment_month_partitions($1::timestamptz) AS name',
      [before],
    );
    return rows.map((row) => `ledger.${row.name}`);
  }
  const { rows } = await db.query<{ name: string }>(
    `SELECT ${schemaOf(table)}.detach_month_partitions($1::regclass, $2::timestamptz) AS name`,
    [table, before],
  );
  return rows.map((row) => `${schemaOf(table)}.${row.name}`);
}

/**
 * The month partitions of `table` (the ledger's groups, the decisions, or the payment records)
 * that end at or before `before` (and before the current month) and are still attached: after
 * detachMonthPartitions, the months it kept, the ledger's because some of their entries lie past
 * the balance checkpoint, the decisions' and payments' because some are still in use. Oldest
 * first, as `schema.table_pYYYY_MM`.
 */
export async function monthsKeptOpen(
  db: Db,
  before: Date,
  table: GuardedArchive = LEDGER_BOOKS,
): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name
       FROM pg_catalog.pg_inherits i JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = $2::regclass AND c.relname ~ '_p[0-9]{4}_[0-9]{2}$'
        AND to_timestamp(substring(c.relname FROM '[0-9]{4}_[0-9]{2}$'), 'YYYY_MM')::timestamp + interval '1 month'
            <= least($1::timestamptz AT TIME ZONE 'UTC', date_trunc('month', now() AT TIME ZONE 'UTC'))
      ORDER BY c.relname`,
    [before, table],
  );
  return rows.map((row) => `${schemaOf(table)}.${row.name}`);
}

/** The month partitions attached to `log` now, oldest first, as `schema.table` (the DEFAULT one last). */
export async function monthPartitionsOf(
  db: Db,
  log: ArchivableTable | 'ledger.entries',
): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name
       FROM pg_catalog.pg_inherits i JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = $1::regclass
      ORDER BY c.relname LIKE '%\\_pdefault', c.relname`,
    [log],
  );
  return rows.map((row) => `${schemaOf(log)}.${row.name}`);
}

/** The schema of one of the fixed lists above (never text from outside). */
function schemaOf(log: ArchivableTable | 'ledger.entries'): 'ledger' | 'policy' | 'intent' {
  if (log.startsWith('ledger.')) return 'ledger';
  return log.startsWith('intent.') ? 'intent' : 'policy';
}
