// Events benchmark (issue 32 item 1): live escalation events to many owner sockets on one replica.
// Starts the real stack (all-in-one, one LISTEN connection, production websocket limits), creates
// one policy per owner and signs each owner in with SIWE, then a child process (bench/eventsClients.ts)
// opens SOCKETS_PER_OWNER graphql-ws sockets per owner, each subscribed to escalationUpdated. The
// child then sends one real escalating preflight per owner (each commits an escalation and its
// NOTIFY) and reports, per socket, when each of its owner's events arrived. The verdict's latency is
// commit → event: from the instant an independent LISTEN connection (a worker thread of the
// clients' process, bench/eventsCommitClock.ts) hears the escalation's NOTIFY, which PostgreSQL
// sends right after the commit, to the instant the client socket reads the event's frame. Two more
// figures bracket it: from the escalation's createdAt (the service's clock when the preflight
// began, so the preflight's own work is in it: an upper bound) and from the preflight's HTTP answer
// (sent after the commit: a lower bound). Sockets open and close 100 at a time. Memory is the server process's, after a full GC: before the
// sockets, with them open and idle, and after they closed. GET /healthz is probed from a thread of
// its own throughout. Needs about two file descriptors per socket across the two processes (ulimit
// -n is per process; 20,000 covers 10,000 sockets).
// Run: npm run bench:events   (args: [sockets, default 10000] [escalations per owner, default 1])
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import 'reflect-metadata';
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { RunningStack } from '../cli/stack';
import { freshWireIntent, policyDocument } from '../core/test-support/spend-fixtures';
import { signIn } from '../devnet/agents/signIn';
import { DEFAULT_SUBSCRIPTION_LIMITS } from '../platform/config';
import type { ClientCommand, ClientReport, Preflight } from './eventsClients';
import { startHealthProber, type HealthProber, type ProbeReport } from './healthProber';
import { createScratchDatabase, startDeployedStack } from './service';
import { type Memory, PREFLIGHT_CONCURRENCY, report, type Run } from './eventsReport';
import { runBenchMain } from './entry';
import { profiled } from './cpuProfile';

/** Each owner holds as many sockets as a session may (SUBSCRIPTION_MAX_SOCKETS_PER_SESSION). */
const SOCKETS_PER_OWNER = DEFAULT_SUBSCRIPTION_LIMITS.maxSocketsPerSession;
const SETUP_CONCURRENCY = 8;
const OPEN_CONCURRENCY = 100;

setFlagsFromString('--expose-gc');
/** V8's full collection (`gc()` with no options: given `{ type: 'major' }`, Node 20 collects far less). */
const gc = runInNewContext('gc') as () => void;

/**
 * The server process's memory after full collections, each followed by a pause for what they leave
 * to run (weak callbacks, finalizers, the freeing of ArrayBuffers), so that neither garbage nor
 * what V8 keeps in reserve after a burst of work is counted as the sockets'. Plain `gc()`: measured
 * here, it takes a heap of 30 MB with garbage to 3 MB, where `gc({ type: 'major', execution: 'sync'
 * })` left 34 MB; and no heap snapshot, whose collection also shrinks the heap (so the work after
 * it runs more major collections) and whose streamed chunks stayed counted in `arrayBuffers`
 * through later collections (82–91 MB, as large as the heap).
 */
async function memory(): Promise<Memory> {
  for (let round = 0; round < 3; round += 1) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const usage = process.memoryUsage();
  return { rss: usage.rss, heap: usage.heapUsed + usage.external, committed: usage.heapTotal };
}

interface Owner {
  token: string;
  policy: { policyId: string; policyHash: string };
}

function escalatingIntent(policy: Owner['policy'], nowMs: number): Record<string, unknown> {
  return freshWireIntent(
    policy,
    nowMs,
    { amount: '1500000', endpoint: 'https://api.vendor.example/ticks' },
    { description: 'EURUSD tick history, 30 days', params: {} },
  );
}

/** One escalating preflight, so that a new subscription's snapshot is one open escalation. */
async function openEscalation(url: string, policy: Owner['policy']): Promise<void> {
  const answer = await fetch(`${url}/preflight_payment`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      policyId: policy.policyId,
      intent: escalatingIntent(policy, Date.now()),
    }),
  });
  const body = (await answer.json()) as { escalation?: unknown };
  if (!body.escalation) throw new Error(`preflight did not escalate: ${JSON.stringify(body)}`);
}

/**
 * `count` owners, each with a policy of their own that escalates above 1.00 and one open
 * escalation (what a subscription starts with: its first message tells the client it is live),
 * signed in with SIWE.
 */
async function prepareOwners(url: string, adminToken: string, count: number): Promise<Owner[]> {
  const owners: Owner[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: SETUP_CONCURRENCY }, async () => {
      while (next < count) {
        next += 1;
        const account = privateKeyToAccount(generatePrivateKey());
        const created = await fetch(`${url}/create_spend_policy`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
          body: JSON.stringify({
            policy: policyDocument({ owner: account.address.toLowerCase() }),
          }),
        });
        const policy = (await created.json()) as Owner['policy'];
        if (created.status !== 201) throw new Error(`policy refused: ${JSON.stringify(policy)}`);
        await openEscalation(url, policy);
        owners.push({ token: await signIn(url, account), policy });
      }
    }),
  );
  return owners;
}

function ask<T extends ClientReport['type']>(
  child: ChildProcess,
  command: ClientCommand,
  answer: T,
): Promise<Extract<ClientReport, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`clients exited with ${code}`));
    child.once('exit', onExit);
    child.once('message', (report: ClientReport) => {
      child.off('exit', onExit);
      if (report.type !== answer) reject(new Error(`clients answered ${report.type}`));
      else resolve(report as Extract<ClientReport, { type: T }>);
    });
    child.send(command);
  });
}

async function until(condition: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`events bench: timed out until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function openSockets(
  child: ChildProcess,
  wsUrl: string,
  owners: readonly Owner[],
  firstOwner: number,
): Promise<Extract<ClientReport, { type: 'opened' }>> {
  return ask(
    child,
    {
      type: 'open',
      wsUrl,
      tokens: owners.map((owner) => owner.token),
      firstOwner,
      socketsPerOwner: SOCKETS_PER_OWNER,
      concurrency: OPEN_CONCURRENCY,
    },
    'opened',
  );
}

/**
 * Opens the owners' sockets in two halves, memory measured after the first: the second half's
 * growth over its sockets is what one more socket costs, free of what the process grows by once
 * (code, pools, V8 spaces). /healthz is probed while each half opens, not while memory is read (the
 * collection before a reading stops the process, which no deployment does).
 */
async function openInHalves(
  child: ChildProcess,
  wsUrl: string,
  owners: readonly Owner[],
  fanout: RunningStack['gateway']['fanout'],
  prober: HealthProber,
) {
  const half = Math.ceil(owners.length / 2);
  let first!: Awaited<ReturnType<typeof openSockets>>;
  const firstHealth = await prober.beside(async () => {
    first = await openSockets(child, wsUrl, owners.slice(0, half), 0);
    await until(
      () => fanout.listenerCount('escalationUpdated') >= first.acknowledged,
      'every live subscription of the first half is counted',
    );
  });
  const halfway = await memory();
  let second!: Awaited<ReturnType<typeof openSockets>>;
  const secondHealth = await prober.beside(async () => {
    second = await openSockets(child, wsUrl, owners.slice(half), half);
    await until(
      () => fanout.listenerCount('escalationUpdated') >= first.acknowledged + second.acknowledged,
      'every live subscription is counted',
    );
  });
  // Every socket open, before any event: the same state as the halfway reading.
  const allOpen = await memory();
  const opened: Run['opened'] = {
    type: 'opened',
    acknowledged: first.acknowledged + second.acknowledged,
    refused: first.refused + second.refused,
    ms: first.ms + second.ms,
  };
  const health: ProbeReport = {
    latenciesMs: [...firstHealth.latenciesMs, ...secondHealth.latenciesMs],
    failures: firstHealth.failures + secondHealth.failures,
  };
  return { opened, second, halfway, allOpen, health };
}

/** One escalating preflight per owner and round, for the child to send (4 at a time). */
function fireCommand(
  url: string,
  databaseUrl: string,
  owners: Owner[],
  escalationsPerOwner: number,
): ClientCommand {
  const nowMs = Date.now();
  const preflights: Preflight[] = owners.flatMap((owner, index) =>
    Array.from({ length: escalationsPerOwner }, () => ({
      owner: index,
      policyId: owner.policy.policyId,
      intent: escalatingIntent(owner.policy, nowMs),
    })),
  );
  return {
    type: 'fire',
    url,
    databaseUrl,
    preflights,
    concurrency: PREFLIGHT_CONCURRENCY,
    waitMs: 30_000,
  };
}

/** Opens the sockets, fires the escalations, closes the sockets; memory and /healthz around each. */
async function drive(
  stack: RunningStack,
  databaseUrl: string,
  prober: HealthProber,
  child: ChildProcess,
  owners: Owner[],
  escalationsPerOwner: number,
): Promise<Run> {
  const fanout = stack.gateway.fanout;
  const sockets = owners.length * SOCKETS_PER_OWNER;
  const wsUrl = `${stack.gateway.url.replace(/^http/, 'ws')}/graphql`;
  const health: Record<string, ProbeReport> = {};
  const before = await memory();
  if (process.env.EVENTS_HEAP_SNAPSHOT)
    writeHeapSnapshot(`${process.env.EVENTS_HEAP_SNAPSHOT}.before`);
  const {
    opened,
    second,
    halfway,
    allOpen,
    health: opening,
  } = await profiled('open', () => openInHalves(child, wsUrl, owners, fanout, prober));
  health.open = opening;
  health.idle = await prober.beside(() => new Promise((resolve) => setTimeout(resolve, 2_000)));
  const fire = fireCommand(stack.gateway.url, databaseUrl, owners, escalationsPerOwner);
  let fired!: Run['fired'];
  // BENCH_CPU_PROFILE=<folder>: the server's main thread while the sockets open (open.cpuprofile)
  // and while the events flow (events.cpuprofile).
  health.events = await prober.beside(async () => {
    fired = await profiled('events', () => ask(child, fire, 'fired'));
  });
  // Read right after the events, with the sockets idle again.
  const open = await memory();
  // EVENTS_HEAP_SNAPSHOT=<file>: where an idle socket's memory goes, for a heap profiler.
  if (process.env.EVENTS_HEAP_SNAPSHOT) writeHeapSnapshot(process.env.EVENTS_HEAP_SNAPSHOT);
  health.close = await prober.beside(async () => {
    await ask(child, { type: 'close', concurrency: OPEN_CONCURRENCY }, 'closed');
    await until(() => fanout.listenerCount('escalationUpdated') === 0, 'every socket let go');
  });
  const closed = await memory();
  if (process.env.EVENTS_HEAP_SNAPSHOT)
    writeHeapSnapshot(`${process.env.EVENTS_HEAP_SNAPSHOT}.closed`);
  return {
    sockets,
    owners: owners.length,
    opened,
    secondHalf: second.acknowledged,
    fired,
    before,
    halfway,
    allOpen,
    open,
    closed,
    health,
  };
}

async function main(): Promise<void> {
  const sockets = Number(process.argv[2] ?? 10_000);
  const escalationsPerOwner = Number(process.argv[3] ?? 1);
  const ownerCount = Math.ceil(sockets / SOCKETS_PER_OWNER);
  const database = await createScratchDatabase();
  const adminToken = randomBytes(32).toString('base64url');
  let stack: RunningStack | null = null;
  let prober: HealthProber | null = null;
  let child: ChildProcess | null = null;
  try {
    stack = await startDeployedStack(database, adminToken);
    process.stdout.write(`events: signing in ${ownerCount} owners …\n`);
    const owners = await prepareOwners(stack.gateway.url, adminToken, ownerCount);
    prober = startHealthProber(stack.gateway.url);
    child = fork(path.join(__dirname, 'eventsClients.js'), [], { stdio: 'inherit' });
    process.stdout.write(`events: ${sockets} sockets …\n`);
    report(await drive(stack, database.url, prober, child, owners, escalationsPerOwner));
  } finally {
    child?.kill();
    await prober?.close();
    await stack?.stop().catch(() => undefined);
    await database.drop();
  }
}

runBenchMain('bench events', main);
