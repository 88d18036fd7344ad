// A server left behind by an earlier run: a stale postmaster.pid goes, an orphan (its owner was
// SIGKILLed) is stopped, and a server whose owner still runs is refused, so two servers never
// share a data directory. Reads /proc where there is one (Linux).
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { isProcessAlive as isAlive } from '../../process';
import { EmbeddedPostgresError } from './errors';
import { run, type Binaries, type ServerUser } from './processes';

/** The pid of the Node process that started the server, kept beside PostgreSQL's own files. */
export const OWNER_FILE = 'spend-control.owner';
export const STOP_TIMEOUT_MS = 30_000;

/** State and parent pid from /proc (Linux); null where /proc is unavailable or the pid is gone. */
function procStat(pid: number): { state: string; ppid: number } | null {
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

function readPidFile(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * A `postmaster.pid` at start means an earlier server did not shut down. If its process is gone
 * the file is stale and goes. If it still runs but the Node process that started it is dead (a
 * crash or SIGKILL orphaned it), it is stopped with pg_ctl as the server's user. If its owner is
 * alive, the directory is in use and we refuse: two servers must never share a data directory.
 */
export async function recoverLeftoverServer(
  dataDir: string,
  bin: Binaries,
  user: ServerUser,
): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const postmaster = readPidFile(pidFile);
  // pg_ctl runs as the server's user, so a pid reused by another user's process reads as stopped.
  const status =
    postmaster !== null && isRunning(postmaster)
      ? await run(bin.pg_ctl, ['-D', dataDir, 'status'], user)
      : null;
  if (postmaster === null || status?.code !== 0) {
    rmSync(pidFile, { force: true });
    return;
  }
  const owner = readPidFile(path.join(dataDir, OWNER_FILE));
  if (owner !== null && isRunning(owner)) {
    const parent = procStat(postmaster)?.ppid ?? null;
    if (parent === null || parent === owner) {
      throw new EmbeddedPostgresError(
        `${dataDir} is in use by a PostgreSQL server (pid ${postmaster}) that process ${owner} started and still runs; ` +
          'stop that process or use another data directory',
      );
    }
  }
  const stopSeconds = String(STOP_TIMEOUT_MS / 1000);
  const stopped = await run(
    bin.pg_ctl,
    ['-D', dataDir, 'stop', '-m', 'fast', '-w', '-t', stopSeconds],
    user,
  );
  if (stopped.code !== 0) {
    throw new EmbeddedPostgresError(
      `could not stop the orphaned PostgreSQL server on ${dataDir}: ${stopped.output}`,
    );
  }
}
