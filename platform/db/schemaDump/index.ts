// The live database schema, readable: every migration set applied to a scratch database and each
// schema dumped by pg_dump into schema/sql/<set>.sql, normalised so that one PostgreSQL major gives
// the same bytes on any machine; and the drift check against the committed files.
import {
  existsSync,
  readdirSync,
  readFileSync,
  writeFileSync,
  mkdirSync,
  unlinkSync,
} from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { projectRoot } from '../../paths';
import { MIGRATION_SETS } from '../migrate';
import { headerMajor, normaliseDump } from './normalise';
import { SchemaDumpError, findPgDump, runPgDump } from './pgDump';
import { withScratchDatabase } from './scratch';

export { SchemaDumpError } from './pgDump';
export { dumpHeader, headerMajor, normaliseDump } from './normalise';

export function defaultSqlDir(): string {
  return path.join(projectRoot(), 'schema', 'sql');
}

export interface SchemaDump {
  /** The pg_dump major that made `files`. */
  readonly major: number;
  /** File name (`<set>.sql`) → content, in MIGRATION_SETS order. */
  readonly files: ReadonlyMap<string, string>;
}

async function schemaExists(url: string, schema: string): Promise<boolean> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rowCount } = await client.query(
      'SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1',
      [schema],
    );
    return rowCount === 1;
  } finally {
    await client.end();
  }
}

/**
 * Migrates a scratch database on the superuser `serverUrl` (null: an embedded PostgreSQL) and dumps
 * each migration set's schema. `progress` receives a line per step.
 */
export async function dumpSchemas(
  serverUrl: string | null,
  progress: (line: string) => void = () => undefined,
): Promise<SchemaDump> {
  return withScratchDatabase(serverUrl, progress, async (scratch) => {
    const pgDump = await findPgDump(scratch.serverMajor);
    progress(`schema dump: dumping with ${pgDump.path} (${pgDump.version})`);
    const files = new Map<string, string>();
    for (const set of MIGRATION_SETS) {
      const raw = (await schemaExists(scratch.url, set))
        ? await runPgDump(pgDump, scratch.url, set)
        : '';
      files.set(`${set}.sql`, normaliseDump(raw, set, pgDump.major));
    }
    return { major: pgDump.major, files };
  });
}

function sqlFilesIn(dir: string): string[] {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((file) => file.endsWith('.sql'))
        .sort()
    : [];
}

/** Writes the dump to `dir`, removing .sql files no set produces; returns what it wrote and removed. */
export function writeDump(
  dump: SchemaDump,
  dir: string = defaultSqlDir(),
): { written: string[]; removed: string[] } {
  mkdirSync(dir, { recursive: true });
  const removed = sqlFilesIn(dir).filter((file) => !dump.files.has(file));
  for (const file of removed) unlinkSync(path.join(dir, file));
  for (const [file, content] of dump.files) writeFileSync(path.join(dir, file), content);
  return { written: [...dump.files.keys()], removed };
}

/** A short diff: the first differing stretch, at most `limit` lines each side, with its line number. */
export function shortDiff(committed: string, fresh: string, limit = 12): string[] {
  const a = committed.split('\n');
  const b = fresh.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const side = (lines: string[], mark: string): string[] => {
    const shown = lines.slice(0, limit).map((line) => `${mark} ${line}`);
    return lines.length > limit
      ? [...shown, `${mark} … ${lines.length - limit} more lines`]
      : shown;
  };
  return [
    `@@ line ${start + 1} @@`,
    ...side(a.slice(start, endA), '-'),
    ...side(b.slice(start, endB), '+'),
  ];
}

export interface DumpDrift {
  /** `schema/sql/<file>` and what is wrong with it. */
  readonly problem: string;
  /** For a changed file: committed (-) against fresh (+). */
  readonly diff: readonly string[];
}

/**
 * The committed files' differences from a fresh dump. A header of another pg_dump major is
 * reported as that alone: such a diff would be noise, not drift.
 */
export function compareDump(dump: SchemaDump, dir: string = defaultSqlDir()): DumpDrift[] {
  const drift: DumpDrift[] = [];
  for (const [file, fresh] of dump.files) {
    const committedPath = path.join(dir, file);
    if (!existsSync(committedPath)) {
      drift.push({ problem: `schema/sql/${file} is missing`, diff: [] });
      continue;
    }
    const committed = readFileSync(committedPath, 'utf8');
    if (committed === fresh) continue;
    const major = headerMajor(committed);
    if (major !== null && major !== dump.major) {
      throw new SchemaDumpError(
        `schema/sql/${file} was made by pg_dump ${major} and this machine's is pg_dump ${dump.major}: ` +
          `the check compares like with like only. Run it where pg_dump ${major} is installed, or ` +
          `regenerate every file with \`spend-control schema dump\` and commit the new major on purpose`,
      );
    }
    drift.push({
      problem: `schema/sql/${file} differs from a fresh dump`,
      diff: shortDiff(committed, fresh),
    });
  }
  for (const file of sqlFilesIn(dir)) {
    if (!dump.files.has(file))
      drift.push({ problem: `schema/sql/${file} is not produced by any migration set`, diff: [] });
  }
  return drift;
}
