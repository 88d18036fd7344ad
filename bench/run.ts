// `npm run bench`: every benchmark in turn, each in its own process so one cannot warm or starve
// the next. Benchmarks that need PostgreSQL use DATABASE_URL, or an embedded server started here
// for the run when it is unset. Targets are printed by each benchmark; tests never time anything.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../platform/db/embedded';
import { readSelection } from './selection';

async function main(): Promise<number> {
  const selection = readSelection(process.argv.slice(2));
  if ('problem' in selection) {
    process.stderr.write(`${selection.problem}\n`);
    return 2;
  }
  const { selected, args } = selection;
  let databaseUrl = process.env.DATABASE_URL;
  let stopEmbedded: (() => Promise<void>) | null = null;
  let tempDir: string | null = null;
  if (!databaseUrl && selected.some((bench) => bench.needsDatabase)) {
    tempDir = mkdtempSync(path.join(os.tmpdir(), 'spend-control-bench-'));
    chmodSync(tempDir, 0o755); // the server runs as the postgres user and must reach its folder
    const embedded = await startEmbeddedPostgres({ dataDir: path.join(tempDir, 'pg') });
    stopEmbedded = () => embedded.stop();
    databaseUrl = embedded.url;
    process.stdout.write(`bench: embedded PostgreSQL at 127.0.0.1:${embedded.port}\n`);
  }
  let failed = 0;
  try {
    for (const bench of selected) {
      process.stdout.write(`\n== bench ${bench.name}\n`);
      const result = spawnSync(process.execPath, [path.join(__dirname, bench.script), ...args], {
        stdio: 'inherit',
        env: { ...process.env, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) },
      });
      if (result.status !== 0) failed += 1;
    }
  } finally {
    await stopEmbedded?.();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  }
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `bench failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
