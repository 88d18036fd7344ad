// core/builder stays pure: its import graph stays inside core/ (never platform, so never the model
// client), imports no package or Node built-in at all, and its code touches no clock, unseeded
// randomness, timer, network or process global. Its one source of variety is seededRandom.ts.
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { impureUsesOf } from './impureCode';
import { REPO_ROOT, reachedFiles, sourceFiles, walkImports } from './importGraph';

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
      impureUsesOf(readFileSync(path, 'utf8')).map(
        (problem) => `${relative(REPO_ROOT, path)}: ${problem}`,
      ),
    );
    expect(problems).toEqual([]);
  });

  it('would catch a clock read, Math.random or a network call (checked on sample code)', () => {
    expect(
      impureUsesOf(
        'const a = Date.now(); const b = new Date(); const c = Math.random(); fetch("x"); const d = new Date(5); const e = { fetch: 1 };',
      ),
    ).toEqual(['uses Date.now', 'reads the clock with Date()', 'uses Math.random', 'uses fetch']);
  });
});
