// The abuse benchmark's attacks that are not one GraphQL document: the websocket attacks of
// issue 15 items 9 and 10 (thousands of subscriptions on one socket, more sockets than a session
// may hold, credentials that are not strings, a client that stops reading) and the pool-starvation
// storm of test/e2e/poolStarvation.test.ts. Each is one round that checks its own outcome (the
// refusal, the close code, the one reversal that wins) and throws when the service answered
// otherwise; bench/abuse.ts repeats a round while /healthz is probed beside it.
import WebSocket from 'ws';
import { Client } from 'pg';
import type { RunningStack } from '../cli/stack';
import { openClient, remoteClient, until } from '../test/support/websockets';
import { assetId, postFunding, registerAsset } from '../subgraphs/ledger';
import type { createScratchDatabase } from './service';

export const ESCALATIONS =
  'subscription ($policyId: ID) { escalationUpdated(policyId: $policyId) { pollRef state policyId } }';
const CATALOG = 'subscription { catalogChanged { kind id } }';
const USDT0 = {
  chain: 'eip155:196',
  token: '0x779ded0c9e1022225f8e0630b35a9b54be713736',
  symbol: 'USDT0',
  decimals: 6,
};

export interface SocketTarget {
  readonly stack: RunningStack;
  readonly wsUrl: string;
  readonly database: Awaited<ReturnType<typeof createScratchDatabase>>;
  readonly adminToken: string;
  readonly ownerToken: string;
  readonly policyId: string;
  readonly maxSocketsPerSession: number;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function check(holds: boolean, what: string): void {
  if (!holds) throw new Error(`abuse bench: ${what}`);
}

/** Item 9: 2,000 subscriptions on one socket (from a thread of their own); refused, then cut (4429). */
export async function subscriptionFlood(target: SocketTarget): Promise<void> {
  const attacker = remoteClient({
    wsUrl: target.wsUrl,
    connectionParams: bearer(target.ownerToken),
    query: ESCALATIONS,
    variables: { policyId: target.policyId },
    count: 2000,
    settleAtData: 1,
  });
  try {
    const outcomes = await attacker.settled;
    const codes = outcomes.flatMap((outcome) => outcome.codes);
    check(codes.includes('SUBSCRIPTION_LIMIT_REACHED'), 'no subscription was refused');
    check(codes.includes('close:4429'), 'the flooding socket was not cut with 4429');
  } finally {
    await attacker.dispose();
  }
}

/** Item 9: ten sockets more than a session may hold, at once; the extra ones close with 4429. */
export async function socketFlood(target: SocketTarget): Promise<void> {
  const sockets = Array.from({ length: target.maxSocketsPerSession + 10 }, () =>
    openClient(target.wsUrl, bearer(target.ownerToken)),
  );
  try {
    const admitted = await Promise.all(
      sockets.map((socket) =>
        Promise.race([socket.connected.then(() => 'open'), socket.closed.then(String)]),
      ),
    );
    check(
      admitted.filter((outcome) => outcome === 'open').length <= target.maxSocketsPerSession,
      'a session held more sockets than its limit',
    );
    check(
      admitted.filter((outcome) => outcome === '4429').length >= 10,
      'the extra sockets were not closed with 4429',
    );
  } finally {
    await Promise.all(sockets.map((socket) => socket.dispose()));
  }
}

/** Item 10: authorizations that are not strings; each socket closes with 4403. */
export async function badCredentials(target: SocketTarget): Promise<void> {
  const shapes = [42, { token: target.ownerToken }, [`Bearer ${target.ownerToken}`], null, true];
  const sockets = shapes.map((authorization) => openClient(target.wsUrl, { authorization }));
  try {
    const codes = await Promise.all(sockets.map((socket) => socket.closed));
    check(
      codes.every((code) => code === 4403),
      `a bad credential closed with ${codes.join(',')}`,
    );
  } finally {
    await Promise.all(sockets.map((socket) => socket.dispose()));
  }
}

/** A raw graphql-ws client subscribed to catalogChanged that stops reading; resolves its close code. */
async function stalledReader(
  target: SocketTarget,
): Promise<{ closed: Promise<number>; socket: WebSocket }> {
  const socket = new WebSocket(target.wsUrl, 'graphql-transport-ws');
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  let acknowledged = false;
  socket.on('message', (frame) => {
    if (String(frame).includes('connection_ack')) acknowledged = true;
  });
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
  await until(() => acknowledged, 'the stalled reader was acknowledged');
  socket.send(JSON.stringify({ id: 'flood', type: 'subscribe', payload: { query: CATALOG } }));
  return { closed, socket };
}

/** Item 9: 1,500 notices of ~7 KB to a client that stops reading (closed 4008) and one that reads all. */
export async function slowReader(target: SocketTarget): Promise<void> {
  const fanout = target.stack.gateway.fanout;
  const before = fanout.listenerCount('catalogChanged');
  const reader = remoteClient({
    wsUrl: target.wsUrl,
    connectionParams: {},
    query: CATALOG,
    count: 1,
    settleAtData: 1500,
  });
  const slow = await stalledReader(target);
  try {
    await until(() => fanout.listenerCount('catalogChanged') === before + 2, 'both are live');
    slow.socket.pause();
    for (let first = 1; first <= 1500; first += 100) {
      await target.database.adminPool.query(
        `SELECT pg_notify('catalog_changed', json_build_object('kind', 'provider', 'id', 'flood-' || i || '-' || repeat('x', 7000),
           'maturity', 'sandbox', 'changedAt', '2026-11-22T10:00:00.000Z')::text) FROM generate_series($1::int, $1::int + 99) AS i`,
        [first],
      );
    }
    const [got] = await reader.settled;
    check(got.data === 1500 && got.codes.length === 0, 'the reading client missed events');
    slow.socket.resume();
    check((await slow.closed) === 4008, 'the client that stopped reading was not closed with 4008');
  } finally {
    slow.socket.terminate();
    await reader.dispose();
  }
  // The next round counts its own listeners: wait until the server has let these two go.
  await until(() => fanout.listenerCount('catalogChanged') === before, 'both were let go');
}

/** Waits until `count` backends of the database wait for a lock (the pool busy to its last connection). */
async function waitForLockWaiters(client: Client, database: string, count: number): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    await client.query('SELECT pg_stat_clear_snapshot()');
    const waiting = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'",
      [database],
    );
    if (waiting.rows[0]!.n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`only some of ${count} connections reached the lock`);
}

/** Registers the asset the storm's funding groups are booked in (once, before the first storm). */
export async function prepareStorms(target: SocketTarget): Promise<void> {
  await registerAsset(target.database.pool, USDT0);
}

let storms = 0;

/**
 * The storm of poolStarvation.test.ts: 4x the pool size of operator reversals of one group while a
 * writer outside the pool holds ledger.groups (the whole pool waits on the lock, the rest queue),
 * held HOLD_MS, then released: one reversal wins, the others are refused LEDGER_ALREADY_REVERSED.
 */
export async function poolStorm(target: SocketTarget, holdMs = 200): Promise<void> {
  const { database, stack, adminToken } = target;
  const poolSize = database.pool.options.max ?? 10;
  storms += 1;
  const groupId = await postFunding(database.pool, {
    asset: assetId(USDT0.chain, USDT0.token),
    amountAtomic: 1_000n,
    policyId: '1',
    intentRef: `0x${storms.toString(16).padStart(64, '0')}`,
    idempotencyKey: `abuse-bench-storm-${storms}`,
  });
  const holder = new Client({ connectionString: database.adminUrl });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE ledger.groups IN EXCLUSIVE MODE');
    const storm = Promise.all(
      Array.from({ length: 4 * poolSize }, async (_, index) => {
        const response = await fetch(`${stack.gateway.url}/ledger/reverse_group`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
          body: JSON.stringify({
            groupId,
            reason: 'abuse bench',
            idempotencyKey: `s${storms}-${index}`,
          }),
        });
        return { status: response.status, body: (await response.json()) as { code?: string } };
      }),
    );
    await waitForLockWaiters(holder, database.name, poolSize);
    await new Promise((resolve) => setTimeout(resolve, holdMs));
    await holder.query('COMMIT');
    const answers = await storm;
    const refused = answers.filter((answer) => answer.body.code === 'LEDGER_ALREADY_REVERSED');
    check(
      answers.filter((answer) => answer.status === 200).length === 1 &&
        refused.length === answers.length - 1,
      'the storm did not end with one reversal and the rest refused',
    );
  } finally {
    await holder.end();
  }
}
