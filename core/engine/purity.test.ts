// The engine must stay pure. This walks the real import statements of every engine source file,
// transitively through the repository, and fails on any module that could do I/O, read a clock
// or draw randomness; it also scans the reached code for clock, randomness and process globals.
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { impureUses } from '../../test/architecture/impureCode';

const REPO_ROOT = resolve(__dirname, '..', '..');
const ENGINE_DIR = resolve(__dirname);

/** External modules the engine may reach, and exactly which bindings of each. */
const ALLOWED_EXTERNALS: Record<string, ReadonlySet<string>> = {
  viem: new Set([
    'keccak256',
    'stringToBytes',
    'encodePacked',
    'hexToBigInt',
    'hashTypedData',
    'Hex',
    'Address',
  ]),
  canonicalize: new Set(['default']),
  'js-sha3': new Set(['keccak256']),
  // Schema checks only (core/validation): zod does no I/O, reads no clock, draws no randomness.
  zod: new Set(['z']),
};

interface Violation {
  file: string;
  problem: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

function resolveLocal(fromFile: string, specifier: string): string {
  const base = resolve(dirname(fromFile), specifier);
  for (const candidate of [`${base}.ts`, join(base, 'index.ts')])
    if (existsSync(candidate)) return candidate;
  throw new Error(`cannot resolve ${specifier} from ${fromFile}`);
}

interface ImportEdge {
  specifier: string;
  bindings: string[];
}

function importsOf(file: ts.SourceFile): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const bindings: string[] = [];
      if (clause?.name) bindings.push('default');
      const named = clause?.namedBindings;
      if (named && ts.isNamespaceImport(named)) bindings.push('*');
      if (named && ts.isNamedImports(named))
        for (const e of named.elements) bindings.push((e.propertyName ?? e.name).text);
      edges.push({ specifier: node.moduleSpecifier.text, bindings });
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const clause = node.exportClause;
      const bindings =
        clause && ts.isNamedExports(clause)
          ? clause.elements.map((e) => (e.propertyName ?? e.name).text)
          : ['*'];
      edges.push({ specifier: node.moduleSpecifier.text, bindings });
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference)
    ) {
      const expr = node.moduleReference.expression;
      if (ts.isStringLiteral(expr)) edges.push({ specifier: expr.text, bindings: ['*'] });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      edges.push({
        specifier: arg && ts.isStringLiteral(arg) ? arg.text : '<dynamic>',
        bindings: ['*'],
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return edges;
}

/** Walks from the entry files through every local import; returns the files reached and violations. */
function walk(entries: string[]): { reached: string[]; violations: Violation[] } {
  const seen = new Set<string>();
  const violations: Violation[] = [];
  const queue = [...entries];
  while (queue.length > 0) {
    const path = queue.pop()!;
    if (seen.has(path)) continue;
    seen.add(path);
    const name = relative(REPO_ROOT, path);
    if (!path.startsWith(REPO_ROOT))
      violations.push({ file: name, problem: 'leaves the repository' });
    const file = ts.createSourceFile(
      path,
      readFileSync(path, 'utf8'),
      ts.ScriptTarget.ES2022,
      true,
    );
    for (const problem of impureUses(file)) violations.push({ file: name, problem });
    for (const edge of importsOf(file)) {
      if (edge.specifier.startsWith('.')) {
        queue.push(resolveLocal(path, edge.specifier));
        continue;
      }
      const allowed = ALLOWED_EXTERNALS[edge.specifier];
      if (allowed === undefined) {
        violations.push({ file: name, problem: `imports ${edge.specifier}` });
        continue;
      }
      for (const binding of edge.bindings) {
        if (!allowed.has(binding))
          violations.push({ file: name, problem: `imports ${binding} from ${edge.specifier}` });
      }
    }
  }
  return { reached: [...seen].map((p) => relative(REPO_ROOT, p)).sort(), violations };
}

describe('engine purity (from the import graph)', () => {
  const engineFiles = sourceFiles(ENGINE_DIR);
  const { reached, violations } = walk(engineFiles);

  it('finds the engine and the rule modules it must check', () => {
    expect(engineFiles.length).toBeGreaterThanOrEqual(14 + 5);
    expect(reached).toEqual(
      expect.arrayContaining([
        'core/engine/evaluate.ts',
        'core/engine/rules/13-budget-daily.ts',
        'core/canon/jcs.ts',
      ]),
    );
  });

  it('reaches nothing that does I/O, reads a clock or draws randomness', () => {
    expect(violations).toEqual([]);
  });

  it('never reaches the id generator, which uses randomness', () => {
    expect(reached).not.toContain('core/canon/ids.ts');
  });

  it('stays inside core/', () => {
    expect(reached.filter((file) => !file.startsWith('core/'))).toEqual([]);
  });

  it('would catch an impure import or a clock read (checked on known-impure code)', () => {
    const ids = walk([resolve(REPO_ROOT, 'core/canon/ids.ts')]);
    expect(ids.violations).toContainEqual({
      file: 'core/canon/ids.ts',
      problem: 'imports node:crypto',
    });
    const sample = ts.createSourceFile(
      'sample.ts',
      'const a = Date.now(); const b = new Date(); const c = Math.random(); process.env.X; const d = new Date(5);',
      ts.ScriptTarget.ES2022,
      true,
    );
    expect(impureUses(sample)).toEqual([
      'uses Date.now',
      'reads the clock with Date()',
      'uses Math.random',
      'uses process',
    ]);
  });
});
