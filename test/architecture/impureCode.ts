// What the purity tests (core/engine, core/consumer, core/builder) count as impure code: a read of
// the clock, Math.random, or a reference to a global that reaches the outside world. Syntax only:
// the import graph each test walks decides which files are read.
import ts from 'typescript';

/** Globals that read the outside world; calling or touching any of them makes code impure. */
export const FORBIDDEN_GLOBALS: ReadonlySet<string> = new Set([
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

/** The impure uses in `file`, in source order. */
export function impureUses(file: ts.SourceFile): string[] {
  const problems: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && FORBIDDEN_GLOBALS.has(node.text)) {
      const parent = node.parent;
      // A member name (`x.process`, `{ fetch: 1 }`) is not a reference to the global.
      const isMemberName =
        (ts.isPropertyAccessExpression(parent) ||
          ts.isPropertyAssignment(parent) ||
          ts.isPropertySignature(parent)) &&
        parent.name === node;
      if (!isMemberName) problems.push(`uses ${node.text}`);
    }
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
      const name = `${node.expression.text}.${node.name.text}`;
      if (name === 'Date.now' || name === 'Math.random') problems.push(`uses ${name}`);
    }
    // new Date() and Date() without an argument read the clock; new Date(x) does not.
    if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'Date' &&
      (node.arguments?.length ?? 0) === 0
    ) {
      problems.push('reads the clock with Date()');
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return problems;
}

/** `impureUses` of source text. */
export function impureUsesOf(source: string): string[] {
  return impureUses(ts.createSourceFile('module.ts', source, ts.ScriptTarget.ES2022, true));
}
