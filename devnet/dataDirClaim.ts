// Who may run chains on a dataDir: one devnet at a time, in this process and across processes. A
// start claims the dataDir (refusing a live owner, stopping anvil orphans of a dead one) and its
// stop releases it. Orphans are found through Linux /proc; elsewhere none are seen.
import fs from 'node:fs';
import path from 'node:path';
import { isProcessAlive as isAlive } from '../platform/process';
import { DEVNET_FILE, type DevnetInfo, devnetFilePath, readDevnetFile } from './devnetFile';

const ORPHAN_STOP_TIMEOUT_MS = 5_000;

export class DevnetAlreadyRunningError extends Error {
  readonly dataDir: string;
  readonly ownerPid: number;

  constructor(dataDir: string, ownerPid: number) {
    super(
      `a devnet for ${dataDir} is already running (owner pid ${ownerPid}); stop it first, ` +
        `or delete ${DEVNET_FILE} there if that process is not a devnet`,
    );
    this.name = 'DevnetAlreadyRunningError';
    this.dataDir = dataDir;
    this.ownerPid = ownerPid;
  }
}

/** dataDirs with chains running in this process: a second start would share their state files. */
const activeDataDirs = new Set<string>();

export function stateFilePath(dataDir: string, chainId: number): string {
  return path.join(dataDir, `anvil-${chainId}.json`);
}

/** True for a live process started with `--state <stateFile>`: an anvil of this dataDir (Linux /proc). */
function isAnvilOnStateFile(pid: number, stateFile: string): boolean {
  try {
    const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const stateIndex = args.indexOf('--state');
    return stateIndex >= 0 && args[stateIndex + 1] === stateFile;
  } catch {
    return false;
  }
}

async function waitUntilGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadlineMs = Date.now() + timeoutMs;
  while (Date.now() < deadlineMs) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return !isAlive(pid);
}

/**
 * Refuses a dataDir whose chains are still running for a live owner, and stops anvil orphans left
 * by an owner that died without stopping them: an orphan dumps its state into the same file when
 * it stops, and would overwrite the new chain's state. Stopping it with SIGTERM makes it write its
 * state first, so a crashed owner loses nothing (the devnet's anvils dump on stop only). A devnet counts as running
 * only while its anvils run on this dataDir's state files, so a reused owner pid cannot block a start.
 */
async function takeOverDataDir(
  dataDir: string,
  log: (line: string) => void,
): Promise<DevnetInfo | null> {
  if (activeDataDirs.has(dataDir)) throw new DevnetAlreadyRunningError(dataDir, process.pid);
  if (!fs.existsSync(devnetFilePath(dataDir))) return null;
  const previous = readDevnetFile(dataDir);
  const liveAnvils = (['funding', 'settlement'] as const)
    .map((role) => ({ role, pid: previous.pids[role] }))
    .filter(({ role, pid }) =>
      isAnvilOnStateFile(pid, stateFilePath(dataDir, previous.chains[role].chainId)),
    );
  if (liveAnvils.length === 0) return previous;
  const owner = previous.pids.owner;
  if (owner !== process.pid && isAlive(owner)) throw new DevnetAlreadyRunningError(dataDir, owner);
  for (const { role, pid } of liveAnvils) {
    log(`stopping orphaned anvil pid ${pid} (${role}) left by a previous run`);
    process.kill(pid, 'SIGTERM'); // anvil writes its state file on SIGTERM, so nothing is lost
    if (!(await waitUntilGone(pid, ORPHAN_STOP_TIMEOUT_MS))) {
      process.kill(pid, 'SIGKILL');
      await waitUntilGone(pid, ORPHAN_STOP_TIMEOUT_MS);
    }
  }
  return previous;
}

/** Claims `dataDir` for this process's chains; returns its devnet.json of a previous run, if any. */
export async function claimDataDir(
  dataDir: string,
  log: (line: string) => void,
): Promise<DevnetInfo | null> {
  const previous = await takeOverDataDir(dataDir, log);
  activeDataDirs.add(dataDir);
  return previous;
}

/** Lets this process start chains on `dataDir` again (after stop, or a start that failed). */
export function releaseDataDir(dataDir: string): void {
  activeDataDirs.delete(dataDir);
}
