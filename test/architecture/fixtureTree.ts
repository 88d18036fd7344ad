// Throwaway source trees for the gate tests: each is written to a fresh temporary directory, the
// repository's own tool (dependency-cruiser, ESLint) is run on it with the repository's own config
// as a child process (both load ES modules, which jest's module system cannot), and then removed.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from './importGraph';

/** Relative path → content. */
export type Tree = Readonly<Record<string, string>>;

const made: string[] = [];

/** Writes `tree` (plus a tsconfig.json the layer config reads) under a new temporary directory. */
export function writeTree(tree: Tree): string {
  const root = mkdtempSync(join(tmpdir(), 'gate-fixture-'));
  made.push(root);
  const files: Tree = {
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'Node20', strict: true } }),
    ...tree,
  };
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), content);
  }
  return root;
}

export function removeTrees(): void {
  for (const root of made.splice(0)) rmSync(root, { recursive: true, force: true });
}

/** Runs a binary of node_modules/.bin in `cwd` and returns its stdout (these exit non-zero on findings). */
export function runBin(bin: string, args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(REPO_ROOT, 'node_modules', '.bin', bin), args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const stdout = Buffer.concat(out).toString('utf8');
      if (stdout.trim() === '')
        reject(
          new Error(
            `${bin} ${args.join(' ')} printed nothing (exit ${code}): ${Buffer.concat(err)}`,
          ),
        );
      else resolve(stdout);
    });
  });
}
