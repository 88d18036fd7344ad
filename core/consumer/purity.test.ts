// The consumer and trust building blocks are pure like the engine: everything they import,
// transitively, stays inside core/, imports no package, and never reads a clock, draws randomness
// or touches process/network globals (time is passed in; ids are minted elsewhere).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { impureUses } from '../../test/architecture/impureCode';

const REPO_ROOT = resolve(__dirname, '..', '..');

/**
 * The one exception to "no package": the canonical hashing primitives in core/canon (JCS and
 * keccak256), which receipts need for their digest, may use the pure packages they are built on.
 * Type-only imports (viem's `Hex`) erase at compile time and are not dependencies at all.
 */
const CANON_PACKAGES: Readonly<Record<string, readonly string[]>> = {
  'core/canon/jcs.ts': ['canonicalize'],
  'core/canon/keccak.ts': ['js-sha3'],
};
const ROOTS = ['core/consumer', 'core/trust', 'core/disputes'];

const sources = (dir: string): string[] =>
  readdirSync(resolve(REPO_ROOT, dir))
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .map((name) => resolve(REPO_ROOT, dir, name));

function problemsOf(file: ts.SourceFile, imports: string[]): string[] {
  const problems: string[] = [];
  const visit = (node: ts.Node): void => {
    // A type-only import erases at compile time: it is no dependency at run time.
    const typeOnly =
      (ts.isImportDeclaration(node) && node.importClause?.isTypeOnly === true) ||
      (ts.isExportDeclaration(node) && node.isTypeOnly);
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      !typeOnly
    ) {
      imports.push(node.moduleSpecifier.text);
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      problems.push('dynamic import');
    ts.forEachChild(node, visit);
  };
  visit(file);
  return [...problems, ...impureUses(file)];
}

function walk(entries: string[]): { reached: string[]; problems: string[] } {
  const seen = new Set<string>();
  const problems: string[] = [];
  const queue = [...entries];
  while (queue.length > 0) {
    const path = queue.pop()!;
    if (seen.has(path)) continue;
    seen.add(path);
    const name = relative(REPO_ROOT, path);
    const imports: string[] = [];
    const file = ts.createSourceFile(
      path,
      readFileSync(path, 'utf8'),
      ts.ScriptTarget.ES2022,
      true,
    );
    for (const problem of problemsOf(file, imports)) problems.push(`${name}: ${problem}`);
    for (const specifier of imports) {
      if (!specifier.startsWith('.')) {
        if (CANON_PACKAGES[name]?.includes(specifier) !== true)
          problems.push(`${name}: imports ${specifier}`);
        continue;
      }
      const base = resolve(dirname(path), specifier);
      const target = [`${base}.ts`, join(base, 'index.ts')].find((candidate) =>
        existsSync(candidate),
      );
      if (target === undefined) problems.push(`${name}: cannot resolve ${specifier}`);
      else queue.push(target);
    }
  }
  return { reached: [...seen].map((path) => relative(REPO_ROOT, path)).sort(), problems };
}

describe('consumer and trust purity (from the import graph)', () => {
  const { reached, problems } = walk(ROOTS.flatMap(sources));

  it('finds the modules it must check', () => {
    expect(reached).toEqual(
      expect.arrayContaining([
        'core/consumer/lifecycle.ts',
        'core/consumer/quote.ts',
        'core/consumer/paymentCapability.ts',
        'core/trust/score.ts',
      ]),
    );
  });

  it('reaches no package, clock, randomness or process global, and stays inside core/ without the id generator', () => {
    expect(problems).toEqual([]);
    expect(reached.filter((file) => !file.startsWith('core/'))).toEqual([]);
    expect(reached).not.toContain('core/canon/ids.ts');
  });

  it('would catch a clock read, randomness and a package import (checked on known-impure code)', () => {
    const imports: string[] = [];
    const sample = ts.createSourceFile(
      's.ts',
      "import x from 'node:crypto'; const a = Date.now(); const b = new Date(); Math.random(); process.env.X;",
      ts.ScriptTarget.ES2022,
      true,
    );
    expect(problemsOf(sample, imports)).toEqual([
      'uses Date.now',
      'reads the clock with Date()',
      'uses Math.random',
      'uses process',
    ]);
    expect(imports).toEqual(['node:crypto']);
    expect(walk([resolve(REPO_ROOT, 'core/canon/ids.ts')]).problems).toContain(
      'core/canon/ids.ts: imports node:crypto',
    );
  });
});
