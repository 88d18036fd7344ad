// Nothing the service runs keeps session state across transactions, so its pool may go through
// PgBouncer in transaction mode (docs/operations.md, "PgBouncer"): no named prepared statements
// (a query config with `name:` beside `text:`), no session advisory locks, no plain SET (SET LOCAL
// and set_config(..., true) end with the transaction). The exceptions run on connections of their
// own that never go through the pooler: the migrations (MIGRATION_DATABASE_URL) and the test
// database helpers.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from './importGraph';

const ROOTS = ['gateway', 'subgraphs', 'platform', 'cli', 'channels'];
/** Direct connections only (see the file comments). */
const DIRECT_ONLY = new Set([
  'platform/db/migrate.ts',
  'platform/db/testDb.ts',
  'platform/db/schemaDump/scratch.ts',
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) return entry === 'node_modules' ? [] : sourceFiles(full);
    return /\.(ts|sql)$/.test(entry) && !/\.test\.ts$/.test(entry) ? [full] : [];
  });
}

const FILES = ROOTS.flatMap((root) => sourceFiles(join(REPO_ROOT, root)))
  .map((file) => relative(REPO_ROOT, file))
  .filter((file) => !file.startsWith('schema/') && !DIRECT_ONLY.has(file));

const RULES: Array<{ what: string; pattern: RegExp }> = [
  { what: 'a named prepared statement', pattern: /\bname:\s*['`][^'`]+['`],\s*\n\s*text:/ },
  { what: 'a session advisory lock', pattern: /pg_(try_)?advisory_lock(_shared)?\s*\(/ },
  { what: 'a session advisory unlock', pattern: /pg_advisory_unlock/ },
  {
    what: 'a session-level SET',
    pattern: /['`"]\s*SET\s+(?!LOCAL\b|CONSTRAINTS\b)[a-z_]+\s*(=|TO)\s/i,
  },
];

test('the scan reads the service source', () => {
  expect(FILES).toContain('subgraphs/intent/consumer/execution/claims.ts');
  expect(FILES).toContain('subgraphs/ledger/posting/writes.ts');
});

test.each(RULES)('nothing on a pooled connection holds $what', ({ pattern }) => {
  const offenders = FILES.filter((file) =>
    pattern.test(readFileSync(join(REPO_ROOT, file), 'utf8')),
  );
  expect(offenders).toEqual([]);
});

test('the patterns catch what they are for', () => {
  expect(RULES[0].pattern.test("{\n  name: 'x',\n  text: 'SELECT 1',")).toBe(true);
  expect(RULES[1].pattern.test("'SELECT pg_try_advisory_lock($1)'")).toBe(true);
  expect(RULES[1].pattern.test("'SELECT pg_try_advisory_xact_lock($1)'")).toBe(false);
  expect(RULES[3].pattern.test("'SET statement_timeout = 0'")).toBe(true);
  expect(RULES[3].pattern.test("`SET LOCAL idle_in_transaction_session_timeout = '15min'`")).toBe(
    false,
  );
});
