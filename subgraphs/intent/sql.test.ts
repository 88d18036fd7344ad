// Every custom SQLSTATE the intent subgraph's migrations raise is mapped in INTENT_SQLSTATES
// (standard classes such as 22023 are PostgreSQL's own and stay unmapped), and the map names no
// code the migrations never raise.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { INTENT_SQLSTATES } from './sql';

const MIGRATIONS = join(__dirname, 'migrations');

function customSqlStates(): Set<string> {
  const codes = new Set<string>();
  for (const name of readdirSync(MIGRATIONS).filter((file) => file.endsWith('.sql'))) {
    const text = readFileSync(join(MIGRATIONS, name), 'utf8');
    for (const match of text.matchAll(/ERRCODE\s*=\s*'([0-9A-Z]{5})'/g))
      if (/^[A-Z]{2}/.test(match[1]!)) codes.add(match[1]!);
  }
  return codes;
}

describe('INTENT_SQLSTATES', () => {
  it('maps every custom ERRCODE of the intent migrations, and only those', () => {
    const raised = customSqlStates();
    expect([...raised].sort()).toEqual([
      'IN001',
      'IN002',
      'IN003',
      'IN004',
      'IN005',
      'IN006',
      'IN007',
    ]);
    expect(Object.keys(INTENT_SQLSTATES).sort()).toEqual([...raised].sort());
  });
});
