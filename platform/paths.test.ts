// projectRoot finds the folder holding package.json from wherever this module runs (sources under
// ts-jest here; dist/ in production), independent of the working directory.
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from './paths';

describe('projectRoot', () => {
  it('is the folder with this project’s package.json and the contracts sources', () => {
    const root = projectRoot();
    expect(path.isAbsolute(root)).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).name).toBe(
      'agent-spend-control',
    );
    expect(fs.existsSync(path.join(root, 'contracts', 'src', 'Eip3009Token.sol'))).toBe(true);
  });

  it('does not depend on the working directory', () => {
    const expected = projectRoot();
    const cwd = process.cwd();
    try {
      process.chdir(path.parse(cwd).root);
      let fresh!: typeof import('./paths'); // a fresh module copy: nothing cached from the call above
      jest.isolateModules(() => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- isolateModules needs a synchronous load
        fresh = require('./paths');
      });
      expect(fresh.projectRoot()).toBe(expected);
    } finally {
      process.chdir(cwd);
    }
  });
});
