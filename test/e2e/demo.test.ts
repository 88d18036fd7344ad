// `spend-control demo` as a user runs it: the built CLI in its own process, starting the whole
// service on the devnet (here on a fresh database of the test server rather than an embedded one,
// to keep the suite fast; `npm run demo` on a fresh clone uses the embedded default), buying one
// domains.check end to end, printing the receipt and the trial balance, then waiting for the
// receipt to be ANCHORED by the service's own anchoring worker and verifying its proof against the
// chain, and exiting 0.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '../../platform/db/testDb';

const CLI = path.join(__dirname, '../../dist/cli/main.js');

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

function runDemo(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'demo'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

test('npm run demo: every step passes, the receipt shows both payment legs, the books balance', async () => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    MIGRATION_DATABASE_URL: db.ownerUrl,
    LOG_LEVEL: 'warn',
  };
  delete env.NODE_ENV;
  const { code, output } = await runDemo(env);
  expect({ code, tail: output.slice(-2000) }).toEqual({ code: 0, tail: expect.any(String) });
  for (let step = 1; step <= 10; step += 1) expect(output).toContain(`step ${step}/10`);
  expect(output).toMatch(/state COMPLETED/);
  expect(output).toMatch(/funding\s+50250 atomic on eip155:196/);
  expect(output).toMatch(/settlement\s+50000 atomic on eip155:8453/);
  expect(output).toMatch(/"verified":true/);
  expect(output).not.toMatch(/NOT BALANCED/);
  // Anchored by the service's own worker, and the proof checked against the chain.
  expect(output).toMatch(/ANCHORED in block \d+, tx 0x[0-9a-f]{64}/);
  expect(output).toMatch(
    /verified {2}receipt 0x[0-9a-f]{64} is leaf \d+ of \d+ in batch 0x[0-9a-f]{64}/,
  );
  expect(output).not.toMatch(/NOT verified/);
  expect(output).toContain('demo: every step passed');
}, 180_000);
