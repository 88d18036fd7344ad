// The events benchmark's clients (bench/events.ts), in a process of their own so that thousands of
// websockets and their parsing never run on the server's event loop. Each socket speaks
// graphql-transport-ws over `ws` by hand (the protocol is four message types; graphql-ws's client
// would cost more memory per socket than the server under test) as one signed-in owner, and
// subscribes to escalationUpdated. The parent drives it over IPC: open the sockets, fire real
// preflights that escalate (one commit each), then report what every socket received, and close.
// Timing: a socket's arrival is taken when its frame is read, before it is parsed; the commit
// instant is taken by a worker thread's own LISTEN connection (bench/eventsCommitClock.ts), so the
// headline figure is commit → event as a client sees it. Client-side work is kept to the minimum:
// one JSON.parse per frame, nothing else per socket.
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import WebSocket from 'ws';
import type { CommitClockMessage } from './eventsCommitClock';

export const EVENTS_QUERY =
  'subscription { escalationUpdated { pollRef state policyId createdAt } }';

export type ClientCommand =
  | {
      type: 'open';
      wsUrl: string;
      /** The owners' tokens, from owner number `firstOwner` on (the preflights name owners by number). */
      tokens: string[];
      firstOwner: number;
      socketsPerOwner: number;
      concurrency: number;
    }
  | {
      type: 'fire';
      url: string;
      /** Where the commit clock LISTENs (the stack's database). */
      databaseUrl: string;
      preflights: Preflight[];
      concurrency: number;
      waitMs: number;
    }
  | { type: 'close'; concurrency: number };

export interface Preflight {
  readonly owner: number;
  readonly policyId: string;
  readonly intent: Record<string, unknown>;
}

export type ClientReport =
  /** acknowledged: sockets whose subscription answered with its snapshot; refused: the others. */
  | { type: 'opened'; acknowledged: number; refused: number; ms: number }
  | {
      type: 'fired';
      /** Commit (its NOTIFY heard by the commit clock's own LISTEN) → arrival, per delivery. */
      commitMs: number[];
      /** Deliveries whose NOTIFY the commit clock did not hear (none expected). */
      unheard: number;
      /** createdAt (the service's clock when the preflight began, before its commit) → arrival, per delivery. */
      latenciesMs: number[];
      /** The preflight's answer received (after its commit) → arrival: a lower bound, per delivery. */
      afterAnswerMs: number[];
      expected: number;
      lost: number;
      errors: number;
      preflightMsMax: number;
      escalations: number;
      firingMs: number;
    }
  | { type: 'closed'; ms: number };

interface OwnerSocket {
  readonly owner: number;
  readonly socket: WebSocket;
  /** Per escalation: when it arrived and its createdAt, both in epoch ms. */
  readonly received: Map<string, { arrived: number; created: number }>;
  errors: number;
  closedByServer: boolean;
  /** Its subscription answered with the snapshot (else it was refused: not counted below). */
  live: boolean;
}

const sockets: OwnerSocket[] = [];
const send = (report: ClientReport): void => {
  process.send?.(report);
};
const nowEpochMs = (): number => performance.timeOrigin + performance.now();

/** Resolves once the subscription answered (or the socket closed); `live` says how. */
function openOne(wsUrl: string, owner: number, token: string): Promise<OwnerSocket> {
  return new Promise((resolve) => {
    const socket = new WebSocket(wsUrl, 'graphql-transport-ws');
    const entry: OwnerSocket = {
      owner,
      socket,
      received: new Map(),
      errors: 0,
      closedByServer: false,
      live: false,
    };
    socket.on('open', () =>
      socket.send(
        JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }),
      ),
    );
    socket.on('message', (frame) => {
      const arrived = nowEpochMs();
      const message = JSON.parse(String(frame)) as {
        type: string;
        payload?: { data?: { escalationUpdated?: { pollRef: string; createdAt: string } } };
      };
      if (message.type === 'connection_ack') {
        socket.send(
          JSON.stringify({ id: '1', type: 'subscribe', payload: { query: EVENTS_QUERY } }),
        );
      } else if (message.type === 'next') {
        const update = message.payload?.data?.escalationUpdated;
        if (update)
          entry.received.set(update.pollRef, { arrived, created: Date.parse(update.createdAt) });
        else entry.errors += 1;
        // The first message is the snapshot (the owner's open escalation): the subscription is live.
        entry.live ||= update !== undefined;
        resolve(entry);
      } else if (message.type === 'error' || message.type === 'complete') {
        entry.errors += 1;
        resolve(entry);
      } else if (message.type === 'ping') {
        socket.send(JSON.stringify({ type: 'pong' }));
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      entry.closedByServer = true;
      resolve(entry);
    });
  });
}

async function open(command: Extract<ClientCommand, { type: 'open' }>): Promise<void> {
  const started = performance.now();
  const slots = command.tokens.flatMap((token, owner) =>
    Array.from({ length: command.socketsPerOwner }, () => ({ owner, token })),
  );
  let next = 0;
  const opened: OwnerSocket[] = [];
  await Promise.all(
    Array.from({ length: command.concurrency }, async () => {
      while (next < slots.length) {
        const slot = slots[next++];
        opened.push(await openOne(command.wsUrl, command.firstOwner + slot.owner, slot.token));
      }
    }),
  );
  sockets.push(...opened);
  const acknowledged = opened.filter((entry) => entry.live).length;
  send({
    type: 'opened',
    acknowledged,
    refused: opened.length - acknowledged,
    ms: performance.now() - started,
  });
}

async function postPreflight(
  agent: http.Agent,
  url: string,
  preflight: Preflight,
): Promise<string> {
  const body = JSON.stringify({ policyId: preflight.policyId, intent: preflight.intent });
  const answer = await new Promise<string>((resolve, reject) => {
    const request = http.request(
      `${url}/preflight_payment`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        response.on('end', () => resolve(text));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
  const pollRef = (JSON.parse(answer) as { escalation?: { pollRef?: string } }).escalation?.pollRef;
  if (typeof pollRef !== 'string') throw new Error(`preflight did not escalate: ${answer}`);
  return pollRef;
}

/** One figure per expected escalation each socket received. */
function deliveries(
  live: readonly OwnerSocket[],
  byOwner: ReadonlyMap<number, string[]>,
  figure: (got: { arrived: number; created: number }, pollRef: string) => number,
): number[] {
  return live.flatMap((entry) =>
    (byOwner.get(entry.owner) ?? []).flatMap((pollRef) => {
      const got = entry.received.get(pollRef);
      return got === undefined ? [] : [figure(got, pollRef)];
    }),
  );
}

/** The commit clock's worker, listening: `heardAt` fills with each escalation's commit instant. */
async function startCommitClock(
  databaseUrl: string,
  heardAt: Map<string, number>,
): Promise<Worker> {
  const clock = new Worker(path.join(__dirname, 'eventsCommitClock.js'), {
    workerData: { databaseUrl },
  });
  await new Promise<void>((resolve, reject) => {
    clock.once('error', reject);
    clock.on('message', (message: CommitClockMessage) => {
      if (message.type === 'ready') resolve();
      else if (!heardAt.has(message.pollRef)) heardAt.set(message.pollRef, message.heardAt);
    });
  });
  return clock;
}

/** Runs the preflights `concurrency` at a time; `byOwner` gets each owner's pollRefs. */
async function firePreflights(
  command: Extract<ClientCommand, { type: 'fire' }>,
  byOwner: Map<number, string[]>,
  answeredAt: Map<string, number>,
): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: command.concurrency });
  let next = 0;
  let preflightMsMax = 0;
  await Promise.all(
    Array.from({ length: command.concurrency }, async () => {
      while (next < command.preflights.length) {
        const preflight = command.preflights[next++];
        const sent = performance.now();
        const pollRef = await postPreflight(agent, command.url, preflight);
        answeredAt.set(pollRef, nowEpochMs());
        preflightMsMax = Math.max(preflightMsMax, performance.now() - sent);
        byOwner.set(preflight.owner, [...(byOwner.get(preflight.owner) ?? []), pollRef]);
      }
    }),
  );
  agent.destroy();
  return preflightMsMax;
}

async function fire(command: Extract<ClientCommand, { type: 'fire' }>): Promise<void> {
  const byOwner = new Map<number, string[]>();
  const answeredAt = new Map<string, number>();
  const heardAt = new Map<string, number>();
  const clock = await startCommitClock(command.databaseUrl, heardAt);
  const started = performance.now();
  const preflightMsMax = await firePreflights(command, byOwner, answeredAt);
  const firingMs = performance.now() - started;
  const live = sockets.filter((entry) => entry.live);
  const missing = (): number =>
    live.reduce(
      (sum, entry) =>
        sum +
        (byOwner.get(entry.owner) ?? []).filter((pollRef) => !entry.received.has(pollRef)).length,
      0,
    );
  const deadline = performance.now() + command.waitMs;
  while (missing() > 0 && performance.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  clock.postMessage('stop');
  // A delivery whose NOTIFY the clock did not hear has no commit instant: counted as unheard.
  const commitMs = deliveries(live, byOwner, (got, pollRef) =>
    heardAt.has(pollRef) ? got.arrived - heardAt.get(pollRef)! : Number.NaN,
  );
  send({
    type: 'fired',
    commitMs: commitMs.filter((ms) => !Number.isNaN(ms)),
    unheard: commitMs.filter((ms) => Number.isNaN(ms)).length,
    latenciesMs: deliveries(live, byOwner, (got) => got.arrived - got.created),
    afterAnswerMs: deliveries(
      live,
      byOwner,
      (got, pollRef) => got.arrived - answeredAt.get(pollRef)!,
    ),
    expected: live.reduce((sum, entry) => sum + (byOwner.get(entry.owner)?.length ?? 0), 0),
    lost: missing(),
    errors: live.reduce((sum, entry) => sum + entry.errors + (entry.closedByServer ? 1 : 0), 0),
    preflightMsMax,
    escalations: command.preflights.length,
    firingMs,
  });
}

/** Closes every socket, `concurrency` closing handshakes at a time (as they were opened). */
async function closeAll(concurrency: number): Promise<void> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < sockets.length) {
        const { socket } = sockets[next++];
        if (socket.readyState === WebSocket.CLOSED) continue;
        await new Promise<void>((resolve) => {
          socket.once('close', () => resolve());
          socket.close(1000, 'bench done');
        });
      }
    }),
  );
  sockets.length = 0;
  send({ type: 'closed', ms: performance.now() - started });
}

process.on('message', (command: ClientCommand) => {
  const done =
    command.type === 'open'
      ? open(command)
      : command.type === 'fire'
        ? fire(command)
        : closeAll(command.concurrency);
  done.catch((error: unknown) => {
    process.stderr.write(`events clients failed: ${String(error)}\n`);
    process.exit(1);
  });
});
