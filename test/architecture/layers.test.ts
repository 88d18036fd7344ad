// Each layer rule of .dependency-cruiser.cjs refuses what it is meant to: for every rule a small
// fixture breaks exactly that rule from a source file, and does the same from a test file (exempt,
// except from no-cycles); some also show the permitted way. The fixtures use disjoint folders, so
// one cruise of them all (with our config) tells each rule's story. The real tree breaks none.
import { join } from 'node:path';
import { REPO_ROOT } from './importGraph';
import { removeTrees, runBin, writeTree, type Tree } from './fixtureTree';

const CONFIG = join(REPO_ROOT, '.dependency-cruiser.cjs');
const LAYERS = ['core', 'platform', 'subgraphs', 'gateway', 'cli', 'devnet', 'channels', 'bench'];

interface Violation {
  readonly rule: string;
  readonly from: string;
  readonly to: string;
  readonly cycle: readonly string[];
}

async function cruise(root: string, dirs: readonly string[]): Promise<Violation[]> {
  const output = await runBin(
    'depcruise',
    [...dirs, '--config', CONFIG, '--output-type', 'json'],
    root,
  );
  const result = JSON.parse(output) as {
    summary: {
      violations: Array<{
        rule: { name: string };
        from: string;
        to: string;
        cycle?: Array<{ name: string }>;
      }>;
    };
  };
  return result.summary.violations.map(({ rule, from, to, cycle }) => ({
    rule: rule.name,
    from,
    to,
    cycle: (cycle ?? []).map((step) => step.name),
  }));
}

const LEAF = 'export const value = 1;\n';
/** A module that uses `specifier` at run time (a value import, not a type-only one). */
const uses = (specifier: string): string =>
  `import { value } from '${specifier}';\nexport const used = value;\n`;
const READS_FS = "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n";

interface Fixture {
  /** Breaks the rule once from a source file (and, where tests are exempt, once from a test). */
  readonly breaks: Tree;
  /** The permitted way of doing the same: no violation. */
  readonly allowed?: Tree;
}

const FIXTURES: Record<string, Fixture> = {
  'core-is-pure': {
    breaks: {
      'core/pure/decide.ts': uses('../../platform/pure/pool'),
      'core/pure/decide.test.ts': uses('../../platform/pure/pool'),
      'platform/pure/pool.ts': LEAF,
    },
    allowed: {
      'core/pureSibling/decide.ts': uses('../pureSibling/money'),
      'core/pureSibling/money.ts': LEAF,
    },
  },
  'core-no-io-modules': {
    breaks: { 'core/io/read.ts': READS_FS, 'core/io/read.test.ts': READS_FS },
  },
  'platform-below-subgraphs': {
    breaks: {
      'platform/below/pool.ts': uses('../../subgraphs/below/index'),
      'platform/below/pool.test.ts': uses('../../subgraphs/below/index'),
      'subgraphs/below/index.ts': LEAF,
    },
  },
  'gateway-through-subgraph-index': {
    breaks: {
      'gateway/deep/server.ts': uses('../../subgraphs/deep/posting'),
      'gateway/deep/server.test.ts': uses('../../subgraphs/deep/posting'),
      'subgraphs/deep/posting.ts': LEAF,
    },
    allowed: {
      'gateway/viaIndex/server.ts': uses('../../subgraphs/viaIndex/index'),
      'subgraphs/viaIndex/index.ts': LEAF,
    },
  },
  'subgraph-through-other-index': {
    breaks: {
      'subgraphs/reacher/settlement.ts': uses('../reached/posting'),
      'subgraphs/reacher/settlement.test.ts': uses('../reached/posting'),
      'subgraphs/reached/posting.ts': LEAF,
    },
    allowed: {
      'subgraphs/polite/settlement.ts': `${uses('../politeTarget/index')}export { value as own } from './window';\n`,
      'subgraphs/polite/window.ts': LEAF,
      'subgraphs/politeTarget/index.ts': LEAF,
    },
  },
  'subgraphs-below-gateway': {
    breaks: {
      'subgraphs/upward/settlement.ts': uses('../../gateway/upward/server'),
      'subgraphs/upward/settlement.test.ts': uses('../../gateway/upward/server'),
      'gateway/upward/server.ts': LEAF,
    },
  },
  'gateway-below-cli': {
    breaks: {
      'gateway/upCli/server.ts': uses('../../cli/upCli/start'),
      'gateway/upCli/server.test.ts': uses('../../cli/upCli/start'),
      'cli/upCli/start.ts': LEAF,
    },
  },
  'no-folder-cycles-in-subgraph': {
    // alpha → beta → core → alpha: a folder loop even though no module loops (core's test reaches
    // back). Reported once, at the edge inside the subgraph; folderLoops.test.ts adds a direct one.
    breaks: {
      'subgraphs/loop/alpha/a.ts': uses('../beta/b'),
      'subgraphs/loop/alpha/c.ts': LEAF,
      'subgraphs/loop/beta/b.ts': uses('../../../core/loopBack/helper'),
      'core/loopBack/helper.ts': LEAF,
      'core/loopBack/helper.test.ts': uses('../../subgraphs/loop/alpha/c'),
    },
    allowed: {
      'subgraphs/tree/alpha/a.ts': uses('../beta/b'),
      'subgraphs/tree/beta/b.ts': uses('../gamma/c'),
      'subgraphs/tree/gamma/c.ts': LEAF,
    },
  },
  'no-cycles': {
    breaks: {
      'core/cycle/a.ts': `${uses('./b')}export const value = 1;\n`,
      'core/cycle/b.ts': `${uses('./a')}export const value = 2;\n`,
    },
  },
};

let fixtureViolations: Violation[];
let realViolations: Violation[];

beforeAll(async () => {
  const tree: Record<string, string> = {};
  for (const { breaks, allowed } of Object.values(FIXTURES)) Object.assign(tree, breaks, allowed);
  const root = writeTree(tree);
  const dirs = LAYERS.filter((layer) =>
    Object.keys(tree).some((file) => file.startsWith(`${layer}/`)),
  );
  // Both at once: each cruise is a second or two of one core.
  [fixtureViolations, realViolations] = await Promise.all([
    cruise(root, dirs),
    cruise(REPO_ROOT, LAYERS),
  ]);
});

afterAll(removeTrees);

/** The violations from a file of `tree`, or (folder rules) from a folder of it. */
const from = (tree: Tree): Violation[] =>
  fixtureViolations.filter((violation) =>
    Object.keys(tree).some(
      (file) => file === violation.from || file.startsWith(`${violation.from}/`),
    ),
  );

test('every rule of the config has a fixture, and the fixtures break nothing else', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const config = require(CONFIG) as { forbidden: Array<{ name: string }> };
  expect(Object.keys(FIXTURES).sort()).toEqual(config.forbidden.map((rule) => rule.name).sort());
  expect(fixtureViolations.map((violation) => violation.rule).sort()).toEqual(
    Object.keys(FIXTURES).sort(),
  );
});

describe.each(Object.keys(FIXTURES))('%s', (rule) => {
  test('a fixture that breaks it gets exactly that violation, from the source file only', () => {
    const violations = from(FIXTURES[rule].breaks);
    expect(violations.map((violation) => violation.rule)).toEqual([rule]);
    expect(violations[0].from).not.toMatch(/\.test\.ts$/);
    if (rule === 'no-cycles') expect(violations[0].cycle).toContain('core/cycle/b.ts');
  });

  if (FIXTURES[rule].allowed !== undefined) {
    test('the permitted way is accepted', () => {
      expect(from(FIXTURES[rule].allowed!)).toEqual([]);
    });
  }
});

test('the real tree breaks no layer rule', () => {
  expect(
    realViolations.map(
      ({ rule, from, to, cycle }) =>
        `${rule}: ${from} → ${cycle.length > 0 ? cycle.join(' → ') : to}`,
    ),
  ).toEqual([]);
});
