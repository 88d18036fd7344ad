import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  compareDump,
  defaultSqlDir,
  dumpSchemas,
  normaliseDump,
  type SchemaDump,
} from '../platform/db/schemaDump';
import { MIGRATION_SETS } from '../platform/db/migrate';
import { main } from './schemaDump';

function capture(): {
  io: { out(l: string): void; err(l: string): void };
  out: string[];
  err: string[];
} {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (line) => out.push(line), err: (line) => err.push(line) }, out, err };
}

const temporaryDirs: string[] = [];
/** A copy of the committed schema/sql/, to break on purpose. */
function committedCopy(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'schema-dump-test-'));
  temporaryDirs.push(dir);
  cpSync(defaultSqlDir(), dir, { recursive: true });
  return dir;
}

let fresh: SchemaDump;
beforeAll(async () => {
  fresh = await dumpSchemas(process.env.DATABASE_URL!);
});

afterAll(() => {
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true });
});

test('`schema dump --check` passes on the committed schema/sql/ and reports progress on stderr', async () => {
  const { io, out, err } = capture();
  await expect(
    main(['dump', '--check'], io, { serverUrl: process.env.DATABASE_URL! }),
  ).resolves.toBe(0);
  expect(out.join('\n')).toMatch(/matches a fresh dump/);
  expect(err.join('\n')).toMatch(/migrating scratch database/);
  expect(err.join('\n')).not.toMatch(/drift/);
});

test('a dump holds one file per migration set, and two dumps are byte-identical', async () => {
  expect([...fresh.files.keys()]).toEqual(MIGRATION_SETS.map((set) => `${set}.sql`));
  const again = await dumpSchemas(process.env.DATABASE_URL!);
  expect(again.files).toEqual(fresh.files);
  const ledger = fresh.files.get('ledger.sql')!;
  expect(ledger).toMatch(/^CREATE FUNCTION ledger\.post_group\(/m);
  expect(ledger).toMatch(/^GRANT .* TO spend_control_service;$/m);
  expect(ledger).not.toMatch(/^SET |^\\restrict|Dumped (from|by)/m);
});

test('a committed file that differs from a fresh dump is named as drift, with a short diff', async () => {
  const dir = committedCopy();
  const file = path.join(dir, 'intent.sql');
  writeFileSync(
    file,
    readFileSync(file, 'utf8').replace('CREATE SCHEMA intent;', 'CREATE SCHEMA intent_old;'),
  );
  writeFileSync(path.join(dir, 'stale.sql'), '-- nobody makes this\n');
  const drift = compareDump(fresh, dir);
  expect(drift.map((entry) => entry.problem)).toEqual([
    'schema/sql/intent.sql differs from a fresh dump',
    'schema/sql/stale.sql is not produced by any migration set',
  ]);
  expect(drift[0].diff).toEqual([
    expect.stringMatching(/^@@ line \d+ @@$/),
    '- CREATE SCHEMA intent_old;',
    '+ CREATE SCHEMA intent;',
  ]);

  const { io, err } = capture();
  await expect(
    main(['dump', '--check'], io, { serverUrl: process.env.DATABASE_URL!, sqlDir: dir }),
  ).resolves.toBe(1);
  expect(err).toContain('drift: schema/sql/intent.sql differs from a fresh dump');
  expect(err).toContain('  - CREATE SCHEMA intent_old;');
});

test('files made by another pg_dump major fail with that reason, not with a diff', () => {
  const dir = committedCopy();
  const file = path.join(dir, 'ledger.sql');
  writeFileSync(
    file,
    readFileSync(file, 'utf8').replace(/^-- pg_dump major: \d+$/m, '-- pg_dump major: 99'),
  );
  expect(() => compareDump(fresh, dir)).toThrow(/made by pg_dump 99 .* pg_dump \d+/);
});

test('normalising drops the banner, the \\restrict key and session SETs, but never touches a body', () => {
  const raw = [
    '--',
    '-- PostgreSQL database dump',
    '--',
    '',
    '\\restrict abcDEF123',
    '',
    '-- Dumped from database version 15.20',
    '-- Dumped by pg_dump version 15.20',
    '',
    'SET statement_timeout = 0;',
    "SELECT pg_catalog.set_config('search_path', '', false);",
    '',
    '--',
    '-- Name: f(); Type: FUNCTION; Schema: s; Owner: spend_control_owner',
    '--',
    '',
    'CREATE FUNCTION s.f() RETURNS void',
    '    LANGUAGE plpgsql',
    "    SET search_path TO 'pg_catalog'",
    '    AS $$',
    'BEGIN',
    '',
    '',
    'SET LOCAL lock_timeout = 0;',
    'END',
    '$$;',
    '',
    '',
    'ALTER FUNCTION s.f() OWNER TO spend_control_owner;',
    '',
    '--',
    '-- PostgreSQL database dump complete',
    '--',
    '',
    '\\unrestrict abcDEF123',
    '',
  ].join('\n');
  const body = normaliseDump(raw, 's', 15).split('\n').slice(4).join('\n');
  expect(body).toBe(
    [
      '--',
      '-- Name: f(); Type: FUNCTION; Schema: s; Owner: spend_control_owner',
      '--',
      '',
      'CREATE FUNCTION s.f() RETURNS void',
      '    LANGUAGE plpgsql',
      "    SET search_path TO 'pg_catalog'",
      '    AS $$',
      'BEGIN',
      '',
      '',
      'SET LOCAL lock_timeout = 0;',
      'END',
      '$$;',
      '',
      'ALTER FUNCTION s.f() OWNER TO spend_control_owner;',
      '',
    ].join('\n'),
  );
});

test('keeps only the first line of a body written by the calendar, so the dump does not change with the month', () => {
  const dump = (months: string[]) =>
    [
      'CREATE FUNCTION ledger.month_entries(p_group_id text) RETURNS record',
      '    LANGUAGE plpgsql STABLE',
      '    AS $_$',
      '-- Written by ledger.write_month_lookups() for the months attached now (the schema dump shows this line only).',
      'BEGIN',
      ...months.map((month) => `  IF p_group_id >= 'lg_${month}' THEN RETURN; END IF;`),
      'END',
      '$_$;',
      '',
      'CREATE FUNCTION ledger.other() RETURNS void',
      '    LANGUAGE plpgsql',
      '    AS $$',
      'BEGIN',
      'END',
      '$$;',
    ].join('\n');
  const november = normaliseDump(dump(['2026_11', '2026_12']), 'ledger', 15);
  expect(normaliseDump(dump(['2027_01', '2027_02', '2027_03']), 'ledger', 15)).toBe(november);
  expect(november).toContain(
    [
      '    AS $_$',
      '-- Written by ledger.write_month_lookups() for the months attached now (the schema dump shows this line only).',
      '$_$;',
    ].join('\n'),
  );
  expect(november).not.toContain('2026_11');
  // Any other body passes through whole.
  expect(november).toContain(['    AS $$', 'BEGIN', 'END', '$$;'].join('\n'));
});

test('usage errors exit 2 without touching a database', async () => {
  for (const argv of [[], ['dump', '--nope'], ['load'], ['dump', 'extra']]) {
    const { io, err } = capture();
    await expect(main(argv, io, { serverUrl: 'postgres://nobody@127.0.0.1:1/none' })).resolves.toBe(
      2,
    );
    expect(err).toEqual(['usage: spend-control schema dump [--check]']);
  }
});
