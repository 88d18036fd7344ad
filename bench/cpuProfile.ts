// An opt-in CPU profile of part of a benchmark: BENCH_CPU_PROFILE=<folder> makes `profiled` record
// the main thread's profile (node:inspector) around the part it wraps and write it there as
// <name>.cpuprofile, for Chrome DevTools or any .cpuprofile reader. Unset: nothing recorded.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';

export async function profiled<T>(name: string, work: () => Promise<T>): Promise<T> {
  const folder = process.env.BENCH_CPU_PROFILE;
  if (!folder) return work();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(path.join(folder, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}
