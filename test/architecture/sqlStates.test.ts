// Every custom SQLSTATE a subgraph's migrations raise (ERRCODE 'LG001': two letters, three digits,
// outside PostgreSQL's own classes) is named in that subgraph's map, `<NAME>_SQLSTATES` exported
// by subgraphs/<name>/sql.ts (kit/sqlStates.ts), and mapped to a known error code. A code raised
// with no entry would reach clients as an unexplained INTERNAL_ERROR.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isErrorCode } from '../../core/errors';
import { DEFECT } from '../../subgraphs/kit/sqlStates';
import { REPO_ROOT } from './importGraph';

const SUBGRAPHS = join(REPO_ROOT, 'subgraphs');
/** `ERRCODE = 'LG001'` in RAISE … USING, or `RAISE SQLSTATE 'LG001'`. */
const RAISED = /(?:ERRCODE\s*=\s*|SQLSTATE\s+)'([0-9A-Z]{5})'/gi;
const CUSTOM = /^[A-Z]{2}[0-9]{3}$/;
/** PostgreSQL's own classes that also read as two letters and three digits (FDW, internal). */
const POSTGRES_CLASSES = new Set(['HV', 'XX']);

/** Custom code → the migration files that raise it. Comments are skipped: they raise nothing. */
function customSqlStates(sql: string): string[] {
  const code = sql.replace(/--[^\n]*/g, '');
  const found = [...code.matchAll(RAISED)].map((match) => match[1].toUpperCase());
  return [...new Set(found)].filter(
    (state) => CUSTOM.test(state) && !POSTGRES_CLASSES.has(state.slice(0, 2)),
  );
}

/** Subgraph → custom code → the migrations raising it. */
function raisedBySubgraph(): Map<string, Map<string, string[]>> {
  const bySubgraph = new Map<string, Map<string, string[]>>();
  for (const name of readdirSync(SUBGRAPHS).sort()) {
    const dir = join(SUBGRAPHS, name, 'migrations');
    if (!existsSync(dir)) continue;
    const codes = new Map<string, string[]>();
    for (const file of readdirSync(dir)
      .filter((entry) => entry.endsWith('.sql'))
      .sort()) {
      for (const state of customSqlStates(readFileSync(join(dir, file), 'utf8')))
        codes.set(state, [...(codes.get(state) ?? []), file]);
    }
    if (codes.size > 0)
      bySubgraph.set(name, new Map([...codes].sort(([a], [b]) => a.localeCompare(b))));
  }
  return bySubgraph;
}

const RAISED_BY = raisedBySubgraph();

test('the grep finds the codes we know of, and not the standard ones', () => {
  expect([...(RAISED_BY.get('ledger')?.keys() ?? [])]).toEqual(
    expect.arrayContaining(['LG001', 'LG002', 'LG006']),
  );
  expect([...(RAISED_BY.get('intent')?.keys() ?? [])]).toEqual(
    expect.arrayContaining(['IN001', 'IN002', 'IN003']),
  );
  expect(
    customSqlStates(
      [
        "RAISE EXCEPTION 'x' USING ERRCODE = '22023';",
        "RAISE EXCEPTION 'x' USING ERRCODE = 'XX000';",
        "RAISE EXCEPTION 'x' USING errcode = 'ab123';",
        "RAISE SQLSTATE 'QQ001';",
        "-- ERRCODE = 'ZZ999' in a comment raises nothing",
      ].join('\n'),
    ),
  ).toEqual(['AB123', 'QQ001']);
});

describe.each([...RAISED_BY.keys()])('subgraphs/%s', (name) => {
  const codes = RAISED_BY.get(name)!;
  const exportName = `${name.toUpperCase()}_SQLSTATES`;

  test(`sql.ts exports ${exportName} naming every custom SQLSTATE its migrations raise`, () => {
    const file = join(SUBGRAPHS, name, 'sql.ts');
    if (!existsSync(file))
      throw new Error(
        `subgraphs/${name}/migrations raise ${[...codes.keys()].join(', ')} but subgraphs/${name}/sql.ts does not exist`,
      );
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const map = (require(file) as Record<string, unknown>)[exportName] as
      Record<string, unknown> | undefined;
    if (map === undefined)
      throw new Error(`subgraphs/${name}/sql.ts does not export ${exportName}`);
    const unmapped = [...codes]
      .filter(([state]) => !Object.prototype.hasOwnProperty.call(map, state))
      .map(([state, files]) => `${state} (raised in ${files.join(', ')})`);
    expect(unmapped).toEqual([]);
    const unknown = Object.entries(map)
      .filter(([, code]) => code !== DEFECT && !isErrorCode(code))
      .map(([state, code]) => `${state} → ${String(code)}`);
    expect(unknown).toEqual([]);
  });
});
