// core/builder stays pure: its import graph stays inside core/ (never platform, so never the model
// client), imports no package or Node built-in at all, and its code touches no clock, unseeded
// randomness, timer, network or process global. Its one source of variety is seededRandom.ts.
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT, reachedFiles, sourceFiles, walkImports } from './importGraph';

const FORBIDDEN_GLOBALS = new Set([
  'process',
  'performance',
  'setTimeout',
  'setInterval',
  'setImmediate',
  'queueMicrotask',
  'fetch',
  'XMLHttpRequest',
  'WebSocket',
  'crypto',
  'require',
  'globalThis',
  'global',
  'eval',
  'Function',
  'console',
]);

/** Clock reads, Math.random and references to the globals above. */
function impureUses(source: string): string[] {
  const file = ts.createSourceFile('module.ts', source, ts.ScriptTarget.ES2022, true);
  const problems: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && FORBIDDEN_GLOBALS.has(node.text)) {
      const parent = node.parent;
      const isPropertyName =
        (ts.isPropertyAccessExpression(parent) ||
          ts.isPropertyAssignment(parent) ||
          ts.isPropertySignature(parent)) &&
        parent.name === node;
      if (!isPropertyName) problems.push(`uses ${node.text}`);
    }
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
      const name = `${node.expression.text}.${node.name.text}`;
      if (name === 'Date.now' || name === 'Math.random') problems.push(`uses ${name}`);
    }
    if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'Date'
    ) {
      if ((node.arguments?.length ?? 0) === 0) problems.push('reads the clock with Date()');
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return problems;
}

describe('core/builder purity (from the import graph)', () => {
  const entries = sourceFiles(resolve(REPO_ROOT, 'core/builder'));
  const graph = walkImports(entries);
  const reached = reachedFiles(graph);

  it('walks the builder modules', () => {
    expect(reached).toEqual(
      expect.arrayContaining([
        'core/builder/fallbackNames.ts',
        'core/builder/rankOptions.ts',
        'core/builder/seoTips.ts',
        'core/builder/validate.ts',
      ]),
    );
    expect(graph.unfollowed).toEqual([]);
  });

  it('stays inside core/ and imports no package or built-in', () => {
    expect(reached.filter((file) => !file.startsWith('core/'))).toEqual([]);
    expect([...graph.packages.keys()]).toEqual([]);
  });

  it('reaches no clock, unseeded randomness, timer, network or process global', () => {
    const problems = [...graph.parentOf.keys()].flatMap((path) =>
      impureUses(readFileSync(path, 'utf8')).map(
        (problem) => `${relative(REPO_ROOT, path)}: ${problem}`,
      ),
    );
    expect(problems).toEqual([]);
  });

  it('would catch a clock read, Math.random or a network call (checked on sample code)', () => {
    expect(
      impureUses(
        'const a = Date.now(); const b = new Date(); const c = Math.random(); fetch("x"); const d = new Date(5); const e = { fetch: 1 };',
      ),
    ).toEqual(['uses Date.now', 'reads the clock with Date()', 'uses Math.random', 'uses fetch']);
  });
});
