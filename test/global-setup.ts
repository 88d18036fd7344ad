// Jest global setup: when DATABASE_URL is unset, start ONE embedded PostgreSQL for the whole run in
// a fresh temporary directory and export its superuser's URL; workers start afterwards and inherit
// it. Each test file then makes its own database, and the service and owner logins for it, on that
// server (platform/db/testDb.ts), a copy of a template migrated once per run. With DATABASE_URL set
// (a superuser): only the run's name for its templates.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres, type RunningEmbeddedPostgres } from '../platform/db/embedded';
import { randomBytes } from 'node:crypto';
import { TEMPLATE_RUN_ENV, withDatabase } from '../platform/db/testDb';

export interface EmbeddedForTests {
  server: RunningEmbeddedPostgres;
  dir: string;
}

/** Global setup and teardown run in the same process; this is how the handle reaches teardown. */
export const EMBEDDED_HANDLE = Symbol.for('spend-control.jest.embedded-postgres');

export default async function globalSetup(): Promise<void> {
  // Each set of migrations is applied once in this run, to a template its test databases copy.
  process.env[TEMPLATE_RUN_ENV] = randomBytes(6).toString('hex');
  if (process.env.DATABASE_URL) return;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spend-control-jest-'));
  // mkdtemp makes the folder 0700; the server runs as the postgres user and must enter it.
  chmodSync(dir, 0o755);
  try {
    // Throwaway data: skip fsync, which is most of the start-up and CREATE DATABASE time.
    const server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), durable: false });
    (globalThis as Record<symbol, unknown>)[EMBEDDED_HANDLE] = {
      server,
      dir,
    } satisfies EmbeddedForTests;
    // testDb.ts creates each file's database from this URL; the maintenance database `postgres`
    // is the neutral place to run CREATE/DROP DATABASE from.
    process.env.DATABASE_URL = withDatabase(server.url, 'postgres');
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
