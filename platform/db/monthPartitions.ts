// Monthly partitions of the append-only logs (ledger migration 0013, policy migrations 0015-0016;
// docs/operations.md "Partitioning the append-only tables"). Each log is partitioned by month
// (UTC) of its time column, with a DEFAULT partition for any row no month covers, so a write never
// fails for want of a partition. The worker keeps the coming months made (any role may); an
// operator detaches whole past months for archive (the owner only): a detached month is a plain
// table of its own, to be dumped and dropped. Each schema has its own pair of functions
// (`<schema>.ensure_month_partitions`, `<schema>.detach_month_partitions`) for its own logs, as it
// has its own guards: a subgraph's migrations never need another's schema.
import type { Db } from './handle';

/** The logs partitioned by month, as `schema.table`. */
export const MONTH_PARTITIONED_LOGS = [
  'ledger.operator_actions',
  'policy.escalation_events',
  'policy.policy_changes',
] as const;
export type MonthPartitionedLog = (typeof MONTH_PARTITIONED_LOGS)[number];

/** How many months past the current one the worker keeps made. */
export const MONTHS_AHEAD = 3;

export function isMonthPartitionedLog(name: string): name is MonthPartitionedLog {
  return (MONTH_PARTITIONED_LOGS as readonly string[]).includes(name);
}

/**
 * Makes every log's month partitions from `now`'s month through `monthsAhead` months later,
 * unless made (or unless rows of that month already sit in the DEFAULT partition); returns the
 * partitions made, as `schema.table`.
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
  return made;
}

/**
 * Detaches `log`'s month partitions that end at or before `before` (never the current month's or a
 * later one, nor the DEFAULT partition), oldest first; returns them as `schema.table`. Needs the
 * owner's login: the service role may not call it.
 */
export async function detachMonthPartitions(
  db: Db,
  log: MonthPartitionedLog,
  before: Date,
): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT ${schemaOf(log)}.detach_month_partitions($1::regclass, $2::timestamptz) AS name`,
    [log, before],
  );
  return rows.map((row) => `${schemaOf(log)}.${row.name}`);
}

/** The month partitions attached to `log` now, oldest first, as `schema.table` (the DEFAULT one last). */
export async function monthPartitionsOf(db: Db, log: MonthPartitionedLog): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name
       FROM pg_catalog.pg_inherits i JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = $1::regclass
      ORDER BY c.relname LIKE '%\\_pdefault', c.relname`,
    [log],
  );
  return rows.map((row) => `${schemaOf(log)}.${row.name}`);
}

/** The schema of one of MONTH_PARTITIONED_LOGS (a fixed list: never text from outside). */
function schemaOf(log: MonthPartitionedLog): 'ledger' | 'policy' {
  return log.startsWith('ledger.') ? 'ledger' : 'policy';
}
