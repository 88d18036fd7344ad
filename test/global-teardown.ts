// Jest global teardown: stops the embedded PostgreSQL that global setup started (if it started one)
// and removes its temporary directory. A server given by DATABASE_URL is left alone.
import { rmSync } from 'node:fs';
import { EMBEDDED_HANDLE, type EmbeddedForTests } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const globals = globalThis as Record<symbol, unknown>;
  const handle = globals[EMBEDDED_HANDLE] as EmbeddedForTests | undefined;
  if (!handle) return;
  delete globals[EMBEDDED_HANDLE];
  delete process.env.DATABASE_URL;
  try {
    await handle.server.stop();
  } finally {
    rmSync(handle.dir, { recursive: true, force: true });
  }
}
