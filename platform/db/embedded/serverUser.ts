// Who the embedded server runs as (PostgreSQL refuses root, so under root the `postgres` OS
// user), and whether that user can reach the binaries and the data directory, checked up front so
// a failure names the directory to fix instead of an EACCES from spawn.
import { constants as fsConstants, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SUPERUSER } from './cluster';
import { EmbeddedPostgresError } from './errors';
import { run, type Binaries, type ServerUser } from './processes';

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
