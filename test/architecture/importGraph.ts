// The repository's import graph as the architecture tests read it: the real import, export,
// require and dynamic import() statements of TypeScript files, relative ones resolved to files and
// followed, package ones recorded by package name. Unresolvable relative imports and dynamic
// imports of a computed path fail the walk, so nothing can hide from it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

export const REPO_ROOT = resolve(__dirname, '..', '..');

/** The non-test .ts files under `dir` (absolute), sorted. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return name === 'migrations' ? [] : sourceFiles(path);
      return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')
        ? [path]
        : [];
    })
    .sort();
}

/** Every module specifier a file names, with `<computed>` for an import() of a non-literal. */
export function specifiersOf(file: ts.SourceFile): string[] {
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      specifiers.push(node.moduleReference.expression.text);
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
    ) {
      const [argument] = node.arguments;
      specifiers.push(
        argument !== undefined && ts.isStringLiteralLike(argument) ? argument.text : '<computed>',
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return specifiers;
}

/** The file a relative specifier names: x.ts, x/index.ts, or a .json/.ts path as written. */
export function resolveRelative(fromFile: string, specifier: string): string {
  const base = resolve(dirname(fromFile), specifier);
  const candidates = /\.(ts|json)$/.test(base)
    ? [base]
    : [`${base}.ts`, join(base, 'index.ts'), base.replace(/\.js$/, '.ts')];
  const found = candidates.find(
    (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
  );
  if (found === undefined)
    throw new Error(`cannot resolve ${specifier} from ${relative(REPO_ROOT, fromFile)}`);
  return found;
}

/** "@scope/pkg/sub" → "@scope/pkg", "pkg/sub" → "pkg", "node:fs" stays. */
export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

export interface ImportGraph {
  /** Each reached file (absolute) and the file that first imported it (null for an entry). */
  readonly parentOf: ReadonlyMap<string, string | null>;
  /** Each package imported, with the files that import it. */
  readonly packages: ReadonlyMap<string, readonly string[]>;
  /** Imports the walk could not follow. */
  readonly unfollowed: readonly string[];
}

/** Breadth-first from `entries` through every relative import. */
export function walkImports(entries: readonly string[]): ImportGraph {
  const parentOf = new Map<string, string | null>(entries.map((entry) => [entry, null]));
  const packages = new Map<string, string[]>();
  const unfollowed: string[] = [];
  const queue = [...entries];
  for (let index = 0; index < queue.length; index += 1) {
    const path = queue[index];
    if (path.endsWith('.json')) continue;
    const file = ts.createSourceFile(
      path,
      readFileSync(path, 'utf8'),
      ts.ScriptTarget.ES2022,
      true,
    );
    for (const specifier of specifiersOf(file)) {
      if (specifier === '<computed>') {
        unfollowed.push(`${relative(REPO_ROOT, path)}: import() of a computed path`);
      } else if (specifier.startsWith('.')) {
        const target = resolveRelative(path, specifier);
        if (!parentOf.has(target)) {
          parentOf.set(target, path);
          queue.push(target);
        }
      } else {
        const name = packageName(specifier);
        packages.set(name, [...(packages.get(name) ?? []), path]);
      }
    }
  }
  return { parentOf, packages, unfollowed };
}

/** The import chain from an entry to `file`, as repository-relative paths. */
export function chainTo(graph: ImportGraph, file: string): string[] {
  const chain: string[] = [];
  for (
    let current: string | null | undefined = file;
    current != null;
    current = graph.parentOf.get(current)
  ) {
    chain.unshift(relative(REPO_ROOT, current));
  }
  return chain;
}

/** Repository-relative paths of the reached files. */
export function reachedFiles(graph: ImportGraph): string[] {
  return [...graph.parentOf.keys()].map((path) => relative(REPO_ROOT, path)).sort();
}
