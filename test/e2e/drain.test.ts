// Draining on SIGTERM as an orchestrator sees it: `spend-control start` in its own process with a
// drain delay; after SIGTERM /readyz answers 503 while the same server still answers /healthz and
// real requests on new connections, and the process then stops cleanly (exit 0).
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, cliEnv, freePort, startCli, type Started } from '../support/cliProcess';

const DRAIN_DELAY_MS = 4000;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'spend-control-drain-'));
// mkdtemp makes 0700; the embedded PostgreSQL runs as the postgres user and must reach its folder.
chmodSync(dataDir, 0o755);
let running: Started | null = null;

afterAll(async () => {
  if (running && running.child.exitCode === null) {
    running.child.kill('SIGINT');
    await running.exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

/** A fresh connection each time (no keep-alive), so each answer proves the server still accepts. */
async function get(url: string): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { headers: { connection: 'close' } });
  return { status: response.status, body: await response.json() };
}

test('SIGTERM: /readyz answers 503 while requests are still served, then the process exits 0', async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build"`);
  const port = await freePort();
  running = await startCli(cliEnv(dataDir, port, { DRAIN_DELAY_MS: String(DRAIN_DELAY_MS) }));
  const url = `http://127.0.0.1:${port}`;
  expect(await get(`${url}/readyz`)).toMatchObject({ status: 200, body: { ready: true } });

  running.child.kill('SIGTERM');
  let readiness = await get(`${url}/readyz`);
  for (let attempt = 0; attempt < 100 && readiness.status === 200; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    readiness = await get(`${url}/readyz`);
  }
  expect(readiness).toEqual({
    status: 503,
    body: { ready: false, checks: { draining: 'stopping' } },
  });
  // Still serving while draining: liveness, a public document and a GraphQL query.
  expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: { ok: true } });
  expect((await get(`${url}/openapi.json`)).body.openapi).toMatch(/^3\./);
  const graphql = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', connection: 'close' },
    body: JSON.stringify({ query: '{ __typename }' }),
  });
  expect(graphql.status).toBe(200);
  expect(running.child.exitCode).toBeNull();

  expect(await running.exited).toBe(0);
  expect(running.output()).toContain('SIGTERM: stopping');
  await expect(fetch(`${url}/healthz`)).rejects.toThrow();
}, 150_000);
