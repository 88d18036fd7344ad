// CPU readings from /proc for the benchmarks: a thread's own CPU time, every PostgreSQL process's,
// and how busy the machine's cores were. Linux only: each reading is null where there is no /proc,
// and the bench then prints '-' instead of a figure.
import { readdirSync, readFileSync } from 'node:fs';

/** utime + stime in ms of a /proc stat line (clock ticks of 10 ms on Linux). */
function statCpuMs(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU time of the calling thread, or null where there is no /proc. */
export function threadCpuMs(): number | null {
  try {
    return statCpuMs(readFileSync('/proc/thread-self/stat', 'utf8'));
  } catch {
    return null;
  }
}

/** CPU time of each process named postgres, by pid, or null where there is no /proc. */
export function postgresCpuMs(): Map<string, number> | null {
  try {
    const byPid = new Map<string, number>();
    for (const entry of readdirSync('/proc')) {
      if (!/^[0-9]+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      } catch {
        continue; // gone since the listing
      }
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === 'postgres')
        byPid.set(entry, statCpuMs(stat));
    }
    return byPid;
  } catch {
    return null;
  }
}

/**
 * CPU PostgreSQL spent between two readings: processes alive at the end, less what they had at the
 * start (a backend that exited in between is missed, never counted negative).
 */
export function postgresCpuBetween(
  before: Map<string, number>,
  after: Map<string, number>,
): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** Busy and total jiffies of all cores (/proc/stat), or null where there is no /proc. */
export function machineTicks(): { busy: number; total: number } | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const total = fields.reduce((sum, value) => sum + value, 0);
    const idle = fields[3] + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

/** CPU time of one process (all its threads) by pid, or null where there is no /proc. */
export function processCpuMs(pid: number): number | null {
  try {
    return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}
