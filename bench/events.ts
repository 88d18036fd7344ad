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
import os from 'node:os';
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
import { percentile } from './stats';

const TARGET_P99_MS = 50;
const TARGET_KB_PER_SOCKET = 20;
const TARGET_HEALTH_MS = 100;
/** Each owner holds as many sockets as a session may (SUBSCRIPTION_MAX_SOCKETS_PER_SESSION). */
const SOCKETS_PER_OWNER = DEFAULT_SUBSCRIPTION_LIMITS.maxSocketsPerSession;
const SETUP_CONCURRENCY = 8;
const OPEN_CONCURRENCY = 100;
const PREFLIGHT_CONCURRENCY = 4;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

interface Memory {
  rss: number;
  heap: number;
}

async function memory(): Promise<Memory> {
  for (let round = 0; round < 3; round += 1) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const usage = process.memoryUsage();
  return { rss: usage.rss, heap: usage.heapUsed + usage.external };
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

function maxOf(report: ProbeReport): number {
  return report.latenciesMs.reduce((max, latency) => Math.max(max, latency), 0);
}

interface Run {
  sockets: number;
  owners: number;
  opened: Extract<ClientReport, { type: 'opened' }>;
  fired: Extract<ClientReport, { type: 'fired' }>;
  before: Memory;
  open: Memory;
  closed: Memory;
  health: Record<string, ProbeReport>;
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
  let opened!: Run['opened'];
  health.open = await prober.beside(async () => {
    opened = await ask(
      child,
      {
        type: 'open',
        wsUrl,
        tokens: owners.map((owner) => owner.token),
        socketsPerOwner: SOCKETS_PER_OWNER,
        concurrency: OPEN_CONCURRENCY,
      },
      'opened',
    );
    await until(
      () => fanout.listenerCount('escalationUpdated') >= opened.acknowledged,
      'every live subscription is counted',
    );
  });
  health.idle = await prober.beside(() => new Promise((resolve) => setTimeout(resolve, 2_000)));
  const open = await memory();
  // EVENTS_HEAP_SNAPSHOT=<file>: where an idle socket's memory goes, for a heap profiler.
  if (process.env.EVENTS_HEAP_SNAPSHOT) writeHeapSnapshot(process.env.EVENTS_HEAP_SNAPSHOT);
  const nowMs = Date.now();
  const preflights: Preflight[] = owners.flatMap((owner, index) =>
    Array.from({ length: escalationsPerOwner }, () => ({
      owner: index,
      policyId: owner.policy.policyId,
      intent: escalatingIntent(owner.policy, nowMs),
    })),
  );
  let fired!: Run['fired'];
  health.events = await prober.beside(async () => {
    fired = await ask(
      child,
      {
        type: 'fire',
        url: stack.gateway.url,
        databaseUrl,
        preflights,
        concurrency: PREFLIGHT_CONCURRENCY,
        waitMs: 30_000,
      },
      'fired',
    );
  });
  health.close = await prober.beside(async () => {
    await ask(child, { type: 'close', concurrency: OPEN_CONCURRENCY }, 'closed');
    await until(() => fanout.listenerCount('escalationUpdated') === 0, 'every socket let go');
  });
  const closed = await memory();
  return { sockets, owners: owners.length, opened, fired, before, open, closed, health };
}

const kb = (bytes: number): string => (bytes / 1024).toFixed(1);

function report(run: Run): void {
  const { fired, opened } = run;
  const sorted = [...fired.commitMs].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  const p99 = percentile(sorted, 99);
  const n = opened.acknowledged || 1;
  const heldRss = (run.open.rss - run.before.rss) / n;
  const heldHeap = (run.open.heap - run.before.heap) / n;
  const keptRss = (run.closed.rss - run.before.rss) / n;
  const keptHeap = (run.closed.heap - run.before.heap) / n;
  const healthMax = Math.max(...Object.values(run.health).map(maxOf));
  const healthFailures = Object.values(run.health).reduce((sum, r) => sum + r.failures, 0);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(
    `\nevents: ${run.sockets} owner sockets (${run.owners} owners × ${SOCKETS_PER_OWNER}) on one replica, ` +
      `${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)}`,
  );
  out(
    `  sockets: ${opened.acknowledged} subscribed (snapshot received), ${opened.refused} refused, opened in ${(opened.ms / 1000).toFixed(1)} s`,
  );
  out(
    `  escalations: ${fired.escalations} committed in ${(fired.firingMs / 1000).toFixed(1)} s ` +
      `(${PREFLIGHT_CONCURRENCY} preflights at a time, slowest ${fired.preflightMsMax.toFixed(0)} ms)`,
  );
  out(
    `  deliveries: ${fired.latenciesMs.length} of ${fired.expected}, lost ${fired.lost}, errors ${fired.errors}; ` +
      `commit → event p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${(sorted.at(-1) ?? 0).toFixed(1)} ms ` +
      `(commit: the NOTIFY heard by the bench's own LISTEN; ${fired.unheard} deliveries unheard)`,
  );
  const created = [...fired.latenciesMs].sort((a, b) => a - b);
  const after = [...fired.afterAnswerMs].sort((a, b) => a - b);
  out(
    `  (bounds: createdAt → event, preflight's work included, p50 ${percentile(created, 50).toFixed(1)} ms, ` +
      `p99 ${percentile(created, 99).toFixed(1)} ms; preflight answered → event ` +
      `p50 ${percentile(after, 50).toFixed(1)} ms, p99 ${percentile(after, 99).toFixed(1)} ms)`,
  );
  out(
    `  memory per idle socket: RSS ${kb(heldRss)} KB, heap+external ${kb(heldHeap)} KB; ` +
      `kept after close + GC: RSS ${kb(keptRss)} KB, heap+external ${kb(keptHeap)} KB`,
  );
  out(
    `  /healthz max ms: ${Object.entries(run.health)
      .map(
        ([phase, probes]) =>
          `${phase} ${maxOf(probes).toFixed(1)} (${probes.latenciesMs.length} probes)`,
      )
      .join(', ')}; failures ${healthFailures}`,
  );
  const misses = [
    p99 > TARGET_P99_MS ? `p99 ${p99.toFixed(1)} ms` : null,
    fired.lost > 0 || fired.errors > 0 || opened.refused > 0 || fired.unheard > 0
      ? 'events lost, refused or unheard'
      : null,
    heldRss > TARGET_KB_PER_SOCKET * 1024 || heldHeap > TARGET_KB_PER_SOCKET * 1024
      ? 'memory per socket'
      : null,
    // Given back: what a closed socket leaves behind is under a tenth of what it held.
    keptHeap > Math.max(heldHeap, 0) / 10 + 256 ? 'memory not given back' : null,
    healthMax >= TARGET_HEALTH_MS || healthFailures > 0
      ? `/healthz ${healthMax.toFixed(0)} ms`
      : null,
  ].filter((miss) => miss !== null);
  out(
    `verdict: ${misses.length === 0 ? 'target met' : `target missed (${misses.join(', ')})`} ` +
      `(target: ${run.sockets} sockets, commit → event p99 ≤ ${TARGET_P99_MS} ms, none lost, ` +
      `≤ ${TARGET_KB_PER_SOCKET} KB per idle socket given back on close, /healthz < ${TARGET_HEALTH_MS} ms throughout)`,
  );
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

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `bench events failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
