// `npm run check:layers` refuses a folder loop inside a subgraph: a copy of the repository's
// script and layer config run on a throwaway tree where two folders of one subgraph import each
// other (no module imports itself back, so only the folder rule can see it), and accept the same
// tree once the loop is cut.
import { spawn } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { REPO_ROOT } from './importGraph';
import { removeTrees, writeTree, type Tree } from './fixtureTree';

const LEAF = 'export const value = 1;\n';
const uses = (specifier: string): string =>
  `import { value } from '${specifier}';\nexport const used = value;\n`;

function checkLayers(tree: Tree): Promise<{ code: number | null; output: string }> {
  const root = writeTree(tree);
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  writeFileSync(
    join(root, 'package.json'),
    JSON.stringify({
      name: 'fixture',
      private: true,
      scripts: { 'check:layers': pkg.scripts['check:layers'] },
    }),
  );
  copyFileSync(join(REPO_ROOT, '.dependency-cruiser.cjs'), join(root, '.dependency-cruiser.cjs'));
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'check:layers'], {
      cwd: root,
      env: {
        ...process.env,
        PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => out.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output: Buffer.concat(out).toString('utf8') }));
  });
}

const LAYER_DIRS: Tree = Object.fromEntries(
  ['core', 'platform', 'gateway', 'cli', 'devnet', 'channels', 'bench'].map((layer) => [
    `${layer}/keep.ts`,
    LEAF,
  ]),
);

afterAll(removeTrees);

test('a folder loop inside a subgraph fails check:layers, naming the rule and both folders', async () => {
  const { code, output } = await checkLayers({
    ...LAYER_DIRS,
    'subgraphs/shop/dashboard/resolvers.ts': uses('../decisions/reads'),
    'subgraphs/shop/dashboard/paging.ts': LEAF,
    'subgraphs/shop/decisions/reads.ts': uses('../dashboard/paging'),
  });
  expect(code).not.toBe(0);
  expect(output).toContain('no-folder-cycles-in-subgraph');
  expect(output).toMatch(
    /subgraphs\/shop\/dashboard →\s+subgraphs\/shop\/decisions →\s+subgraphs\/shop\/dashboard/,
  );
  expect(output).not.toMatch(/error no-cycles/);
});

test('the same folders with the loop cut (paging in its own folder) pass check:layers', async () => {
  const { code, output } = await checkLayers({
    ...LAYER_DIRS,
    'subgraphs/shop/dashboard/resolvers.ts': uses('../decisions/reads'),
    'subgraphs/shop/lists/paging.ts': LEAF,
    'subgraphs/shop/decisions/reads.ts': uses('../lists/paging'),
  });
  expect(output).toContain('no dependency violations found');
  expect(code).toBe(0);
});
