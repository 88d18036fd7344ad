// `spend-control schema dump [--check]`: migrates a scratch database (on the superuser DATABASE_URL,
// else an embedded PostgreSQL) and writes schema/sql/<set>.sql per migration set, as pg_dump shows
// it; --check compares a fresh dump with the committed files and fails on drift, like compose does.
import { parseArgs } from 'node:util';
import {
  SchemaDumpError,
  compareDump,
  defaultSqlDir,
  dumpSchemas,
  writeDump,
  type SchemaDump,
} from '../platform/db/schemaDump';

export interface SchemaDumpIo {
  out(line: string): void;
  err(line: string): void;
}

const STDIO: SchemaDumpIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

const USAGE = 'usage: spend-control schema dump [--check]';

export interface SchemaDumpOptions {
  /** A superuser URL of the server to make the scratch database on; null: embedded. */
  serverUrl?: string | null;
  /** Where the .sql files live; default schema/sql/. */
  sqlDir?: string;
}

function parse(argv: readonly string[]): { check: boolean } | null {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: { check: { type: 'boolean', default: false } },
      allowPositionals: true,
      strict: true,
    });
    return positionals.length === 1 && positionals[0] === 'dump' ? { check: values.check } : null;
  } catch {
    return null;
  }
}

function report(dump: SchemaDump, io: SchemaDumpIo, sqlDir: string): number {
  const drift = compareDump(dump, sqlDir);
  for (const { problem, diff } of drift) {
    io.err(`drift: ${problem}`);
    for (const line of diff) io.err(`  ${line}`);
  }
  if (drift.length === 0) {
    io.out(`schema dump --check: schema/sql/ matches a fresh dump (pg_dump ${dump.major})`);
    return 0;
  }
  io.err('schema/sql/ is out of date: run `spend-control schema dump` and commit the result');
  return 1;
}

/** Entry point of `spend-control schema`; returns the process exit code. */
export async function main(
  argv: readonly string[],
  io: SchemaDumpIo = STDIO,
  options: SchemaDumpOptions = {},
): Promise<number> {
  const args = parse(argv);
  if (args === null) {
    io.err(USAGE);
    return 2;
  }
  const sqlDir = options.sqlDir ?? defaultSqlDir();
  const serverUrl =
    options.serverUrl !== undefined ? options.serverUrl : process.env.DATABASE_URL || null;
  try {
    const dump = await dumpSchemas(serverUrl, (line) => io.err(line));
    if (args.check) return report(dump, io, sqlDir);
    const { written, removed } = writeDump(dump, sqlDir);
    for (const file of written) io.out(`wrote schema/sql/${file}`);
    for (const file of removed) io.out(`removed stale schema/sql/${file}`);
    return 0;
  } catch (error) {
    if (!(error instanceof SchemaDumpError)) throw error;
    io.err(error.message);
    return 1;
  }
}
