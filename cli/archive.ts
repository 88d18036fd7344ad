// `spend-control archive detach --before <date> [--log <schema.table>]`: detaches the append-only
// logs' whole past months, the ledger's groups with their entries, the decisions and the x402
// payment records (platform/db/monthPartitions,
// docs/operations.md "Partitioning the append-only tables"), each left as a plain table to dump
// and drop. Runs as the owner's login (MIGRATION_DATABASE_URL, else DATABASE_URL outside
// production), like migrate.
import {
  ARCHIVABLE_TABLES,
  type ArchivableTable,
  DECISIONS,
  detachMonthPartitions,
  isArchivableTable,
  LEDGER_BOOKS,
  monthsKeptOpen,
  SERVICE_PAYMENTS,
} from '../platform/db/monthPartitions';
import { parseCommandArgs, UsageError } from './args';
import { withOwnerPool } from './ownerPool';
import { StartupError } from './startup';

export const ARCHIVE_USAGE = `usage: spend-control archive detach --before <YYYY-MM-DD> [--log <${ARCHIVABLE_TABLES.join('|')}>]`;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export interface ArchiveArgs {
  readonly before: Date;
  readonly logs: readonly ArchivableTable[];
}

/** `detach --before <YYYY-MM-DD> [--log <log>]`: a calendar date (UTC midnight), every log unless one is named. */
export function parseArchiveArgs(argv: readonly string[]): ArchiveArgs {
  const [sub, ...rest] = argv;
  if (sub !== 'detach') throw new UsageError(ARCHIVE_USAGE);
  const { values } = parseCommandArgs(rest, {
    before: { type: 'string' },
    log: { type: 'string' },
  });
  const match = values.before === undefined ? null : DATE.exec(values.before);
  const before = match ? new Date(`${values.before}T00:00:00Z`) : null;
  if (
    !match ||
    before === null ||
    Number.isNaN(before.getTime()) ||
    before.toISOString().slice(0, 10) !== values.before
  )
    throw new UsageError(`--before must be a calendar date, YYYY-MM-DD\n${ARCHIVE_USAGE}`);
  if (values.log !== undefined && !isArchivableTable(values.log))
    throw new UsageError(`--log must be one of ${ARCHIVABLE_TABLES.join(', ')}`);
  return { before, logs: values.log === undefined ? ARCHIVABLE_TABLES : [values.log] };
}

export async function archiveMain(
  argv: readonly string[],
  out: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<number> {
  const args = parseArchiveArgs(argv);
  return withOwnerPool('spend-control-archive', async (pool) => {
    const detached: string[] = [];
    for (const log of args.logs) {
      out(`${log}: detaching the months that end by ${args.before.toISOString().slice(0, 10)} …`);
      const tables = await detachMonthPartitions(pool, log, args.before).catch((error: unknown) => {
        throw refusal(error);
      });
      for (const table of tables) out(`  detached ${table}`);
      if (tables.length === 0) out('  nothing to detach');
      detached.push(...tables);
      if (log === LEDGER_BOOKS)
        for (const kept of await monthsKeptOpen(pool, args.before))
          out(
            `  kept ${kept} and its entries: archive stops at the first month holding entries past the ` +
              'balance checkpoint, which the worker moves forward; try again once it has passed them',
          );
      if (log === DECISIONS)
        for (const kept of await monthsKeptOpen(pool, args.before, DECISIONS))
          out(
            `  kept ${kept}: archive stops at the first month holding a decision still in use (an ACTIVE ` +
              'reservation, or a receipt not anchored yet); try again once its reservations have ended and its receipts are anchored',
          );
      if (log === SERVICE_PAYMENTS)
        for (const kept of await monthsKeptOpen(pool, args.before, SERVICE_PAYMENTS))
          out(
            `  kept ${kept}: archive stops at the first month holding a payment still in use (one the chain ` +
              'has not decided, or an authorization still valid or expired less than a day ago); try again once the reconciler ' +
              'has decided it and its authorizations have been expired a day',
          );
    }
    if (detached.length > 0)
      out(
        `${detached.length} month(s) detached: each is a plain table now, outside its log. Keep a copy, ` +
          `then drop it, as this login, e.g. pg_dump --table=${detached[0]} > ${detached[0]}.sql && ` +
          `psql -c 'DROP TABLE ${detached[0]}'`,
      );
    return 0;
  });
}

/** The database's refusals, said plainly (anything else stays as it is, with its stack). */
function refusal(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === '42501')
    return new StartupError(
      `archive needs the owner's login (MIGRATION_DATABASE_URL, a member of spend_control_owner): ${(error as Error).message}`,
    );
  if (code === '55P03')
    return new StartupError(
      `a log's lock was not granted within 5 s (a long transaction on it); nothing more was detached, try again: ${(error as Error).message}`,
    );
  return error;
}
