// npm ci refuses a lockfile that lacks an optional dependency of a locked package; on this network
// `npm install` leaves out other platforms' binaries, so tools/complete-lockfile.js adds them.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../platform/paths';

describe('package-lock.json', () => {
  it('lists every optional platform package, so npm ci accepts it on a fresh machine', () => {
    const tool = path.join(projectRoot(), 'tools', 'complete-lockfile.js');
    expect(() =>
      execFileSync(process.execPath, [tool, '--check'], { stdio: 'pipe' }),
    ).not.toThrow();
  });
});
