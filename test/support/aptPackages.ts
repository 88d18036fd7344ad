// Debian programs the tests run (Chromium, haproxy, PgBouncer): found on the PATH's usual places,
// else installed with apt-get when running as root (CI: Debian, root), non-interactive, so a fresh
// machine needs no manual step. Installing never starts the package's own service here: the tests
// start each program themselves with a configuration of their own.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface AptProgram {
  /** The Debian package that ships it. */
  readonly packageName: string;
  /** Where the package puts the executable, most likely first. */
  readonly paths: readonly string[];
  /** An environment variable that names the executable instead. */
  readonly env?: string;
}

let updated = false;

/** The executable's path; installs its package first when it is missing and we are root. */
export function aptProgram(program: AptProgram): string {
  const configured = program.env === undefined ? undefined : process.env[program.env];
  if (configured) return configured;
  const found = program.paths.find((candidate) => existsSync(candidate));
  if (found) return found;
  if (process.getuid?.() !== 0)
    throw new Error(
      `No ${program.packageName}: ${program.env ? `set ${program.env} or ` : ''}install it ` +
        `(apt-get install -y ${program.packageName}).`,
    );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!updated) execFileSync('apt-get', ['update'], { stdio: 'ignore', env });
  updated = true;
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', program.packageName], {
    stdio: 'ignore',
    env,
  });
  const installed = program.paths.find((candidate) => existsSync(candidate));
  if (!installed) throw new Error(`apt-get installed ${program.packageName} but not its program`);
  return installed;
}
