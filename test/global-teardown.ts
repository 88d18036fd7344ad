// Jest global teardown: stops the embedded PostgreSQL that global setup started (if it started one)
// and removes its temporary directory. On a server given by DATABASE_URL it drops the two group
// roles the test databases made, unless another run (or anything else) still uses them, after this
// run's template databases.
import { rmSync } from 'node:fs';
import { TEMPLATE_RUN_ENV, dropGroupRolesIfUnused, dropTemplates } from '../platform/db/testDb';
import { EMBEDDED_HANDLE, type EmbeddedForTests } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const globals = globalThis as Record<symbol, unknown>;
  const handle = globals[EMBEDDED_HANDLE] as EmbeddedForTests | undefined;
  if (!handle) {
    const server = process.env.DATABASE_URL;
    if (server) {
      const run = process.env[TEMPLATE_RUN_ENV];
      if (run) await dropTemplates(server, run);
      await dropGroupRolesIfUnused(server);
    }
    return;
  }
  delete globals[EMBEDDED_HANDLE];
  delete process.env.DATABASE_URL;
  try {
    await handle.server.stop();
  } finally {
    rmSync(handle.dir, { recursive: true, force: true });
  }
}
