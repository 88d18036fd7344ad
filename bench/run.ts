// `npm run bench`: every benchmark in turn, each in its own process so one cannot warm or starve
// the next. Benchmarks that need PostgreSQL use DATABASE_URL, or an embedded server started here
// for the run when it is unset. Targets are printed by each benchmark; tests never time anything.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../platform/db/embedded';

const BENCHMARKS: ReadonlyArray<{ name: string; script: string; needsDatabase: boolean }> = [
  { name: 'engine', script: 'engine.js', needsDatabase: false },
  { name: 'ledger', script: 'ledger.js', needsDatabase: true },
  { name: 'preflight', script: 'preflight.js', needsDatabase: true },
  { name: 'x402', script: 'x402.js', needsDatabase: true },
  { name: 'mcp', script: 'mcp.js', needsDatabase: true },
  { name: 'consumer', script: 'consumer.js', needsDatabase: true },
  { name: 'anchor', script: 'anchor.js', needsDatabase: true },
  { name: 'abuse', script: 'abuse.js', needsDatabase: true },
  { name: 'events', script: 'events.js', needsDatabase: true },
  { name: 'whatif', script: 'whatif.js', needsDatabase: false },
  { name: 'growth', script: 'growth.js', needsDatabase: true },
];

async function main(): Promise<number> {
  const only = process.argv.slice(2);
  const selected = BENCHMARKS.filter((bench) => only.length === 0 || only.includes(bench.name));
  if (selected.length === 0) {
    process.stderr.write(
      `unknown benchmark; choose from ${BENCHMARKS.map((bench) => bench.name).join(', ')}\n`,
    );
    return 2;
  }
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
      const result = spawnSync(process.execPath, [path.join(__dirname, bench.script)], {
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
