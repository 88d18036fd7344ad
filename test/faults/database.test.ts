// Fault: the PostgreSQL server stops under load and starts again a few seconds later (a failover,
// a restart for a minor upgrade). The service runs on a server of this test's own (never the
// machine's shared one), on a fixed port, so the restarted server is where the pools reconnect.
// While it is down every request that needs it fails closed with a retryable code; afterwards
// every kind of request succeeds again, the workers finish every queued job, and the books and
// chains agree — without restarting the service or editing anything by hand.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type RunningEmbeddedPostgres, startEmbeddedPostgres } from '../../platform/db/embedded';
import { freeLoopbackPort } from '../../platform/db/embedded/launch';
import { withDatabase } from '../../platform/db/testDb';
import type { Agent } from './load';
import { faultAnswers, newAgents, progress, runThroughFault } from './run';
import { type FaultWorld, startFaultWorld } from './world';

let dir: string;
let port: number;
let server: RunningEmbeddedPostgres;
let world: FaultWorld;
let agents: Agent[];

const startServer = () =>
  startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port, durable: false });

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'spend-control-fault-db-'));
  chmodSync(dir, 0o755);
  port = await freeLoopbackPort();
  server = await startServer();
  world = await startFaultWorld({ databaseServer: withDatabase(server.url, 'postgres') });
  progress('world started');
  agents = await newAgents(world);
  progress('agents ready');
}, 120_000);

afterAll(async () => {
  await world?.stop();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('PostgreSQL stopped for 3 s under load and started again: requests fail closed with retryable codes, then every kind succeeds, every job drains, books zero, no payment doubled', async () => {
  const run = await runThroughFault(world, agents, {
    faultMs: 3_000,
    inject: () => server.stop(),
    heal: async () => {
      server = await startServer();
    },
  });
  const during = faultAnswers(run);
  // The fault was felt: some requests were refused while the server was down, each retryable.
  expect(
    run.answers.filter((answer) => answer.phase === 'fault' && answer.status >= 500).length,
  ).toBeGreaterThan(0);
  // The database's refusals tell the client when to come back.
  const unavailable = run.answers.filter((answer) => answer.code === 'SERVICE_UNAVAILABLE');
  expect(unavailable.length).toBeGreaterThan(0);
  for (const answer of unavailable) expect(answer).toMatchObject({ status: 503, retryAfter: '1' });
  console.log('answers while PostgreSQL was down', during);
}, 150_000);
