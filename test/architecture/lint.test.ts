// The house limits in eslint.config.mjs refuse what they are meant to: a source file over 400 lines
// and a function over 70 are errors, the same in a test file is not, and exactly 400 and 70 pass.
// ESLint runs as the CLI in a fixture tree (its Node API loads our ES-module config, which jest's
// module system cannot), with our config.
import { join } from 'node:path';
import { REPO_ROOT } from './importGraph';
import { removeTrees, runBin, writeTree } from './fixtureTree';

/** A module of exactly `lines` lines. */
function fileOf(lines: number): string {
  return `${Array.from({ length: lines }, (_, index) => `export const v${index} = ${index};`).join('\n')}\n`;
}

/** A module holding one function of exactly `lines` lines (its signature and closing brace count). */
function functionOf(lines: number): string {
  const body = Array.from({ length: lines - 4 }, (_, index) => `  total += ${index};`);
  return [
    'export function long(): number {',
    '  let total = 0;',
    ...body,
    '  return total;',
    '}',
    '',
  ].join('\n');
}

let problems: Record<string, string[]>;

beforeAll(async () => {
  const root = writeTree({
    'platform/long.ts': fileOf(401),
    'platform/atLimit.ts': fileOf(400),
    'platform/longFunction.ts': functionOf(71),
    'platform/functionAtLimit.ts': functionOf(70),
    'platform/long.test.ts': fileOf(401),
    'platform/longFunction.test.ts': functionOf(71),
    'test/e2e/long.ts': fileOf(401),
    'platform/test-support.ts': functionOf(71),
  });
  const output = await runBin(
    'eslint',
    [
      '--config',
      join(REPO_ROOT, 'eslint.config.mjs'),
      '--format',
      'json',
      '--no-warn-ignored',
      '.',
    ],
    root,
  );
  const results = JSON.parse(output) as Array<{
    filePath: string;
    messages: Array<{ ruleId: string | null; message: string }>;
  }>;
  problems = Object.fromEntries(
    results.map((result) => [
      result.filePath.slice(root.length + 1),
      result.messages.map((message) => message.ruleId ?? message.message),
    ]),
  );
});

afterAll(removeTrees);

test('a source file over 400 lines is refused; one of exactly 400 passes', () => {
  expect(problems['platform/long.ts']).toEqual(['max-lines']);
  expect(problems['platform/atLimit.ts']).toEqual([]);
});

test('a function over 70 lines is refused; one of exactly 70 passes', () => {
  expect(problems['platform/longFunction.ts']).toEqual(['max-lines-per-function']);
  expect(problems['platform/functionAtLimit.ts']).toEqual([]);
});

test('tests and test support are exempt from both limits', () => {
  expect(problems['platform/long.test.ts']).toEqual([]);
  expect(problems['platform/longFunction.test.ts']).toEqual([]);
  expect(problems['test/e2e/long.ts']).toEqual([]);
  expect(problems['platform/test-support.ts']).toEqual([]);
});
