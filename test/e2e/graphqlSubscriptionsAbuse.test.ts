// Subscriptions attacked through real websockets (issue 15, items 9 and 10): thousands of
// subscriptions on one socket, more sockets than a session may hold, reads that fail or queue up,
// a client that stops reading, a socket that outlives its session, a credential that is not a
// string, a rotated session secret. Each asserts the refusal or the close, and that /healthz,
// probed beside the attack, answers 200 every time. How fast it answers during these attacks is
// measured by `npm run bench:abuse` (bench/abuse.ts), never asserted here.
import WebSocket from 'ws';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  createEscalatingPolicy,
  escalatingIntent,
  preflight,
  type TestPolicy,
} from '../support/escalations';
import { signIn } from '../support/siwe';
import { graphql, startTestStack, type TestStack } from '../support/stack';
import { probeHealth } from '../support/healthProbe';
import { openClient, record, remoteClient, until } from '../support/websockets';

const LIMITS = {
  maxSocketsPerSession: 3,
  maxSubscriptionsPerSocket: 20,
  maxBufferedBytes: 256 * 1024,
  readConcurrency: 2,
  readQueueLength: 16,
};
const ESCALATIONS =
  'subscription ($policyId: ID) { escalationUpdated(policyId: $policyId) { pollRef state policyId } }';
const ONE_ESCALATION =
  'subscription ($pollRef: ID) { escalationUpdated(pollRef: $pollRef) { pollRef state policyId } }';
const CATALOG = 'subscription { catalogChanged { kind id } }';

const owner = privateKeyToAccount(generatePrivateKey());
const other = privateKeyToAccount(generatePrivateKey());
let offsetMs = 0;
let stack: TestStack;
let policy: TestPolicy;
let otherPolicy: TestPolicy;
let ownerToken: string;
let otherToken: string;

const nowMs = (): number => Date.now() + offsetMs;
const bearer = (token: string): Record<string, unknown> => ({ authorization: `Bearer ${token}` });
const codesOf = (errors: Array<{ extensions?: Record<string, unknown> }>): unknown[] =>
  errors.map((error) => error.extensions?.code);

/** Runs `attack` while /healthz is probed beside it; every probe must answer 200. */
async function whileProbingHealth(attack: () => Promise<void>): Promise<void> {
  const probe = probeHealth(stack.url);
  try {
    await attack();
  } finally {
    const health = await probe.stop();
    expect(health.failures).toBe(0);
    expect(health.probes).toBeGreaterThan(0);
  }
}

/** The unix second a session bearer expires at (its `exp` claim). */
function expiryOf(token: string): number {
  return (
    JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as { exp: number }
  ).exp;
}

beforeAll(async () => {
  stack = await startTestStack({ now: () => new Date(nowMs()), subscriptions: LIMITS });
  policy = await createEscalatingPolicy(stack, owner.address.toLowerCase());
  otherPolicy = await createEscalatingPolicy(stack, other.address.toLowerCase());
  ownerToken = await signIn(stack.url, owner);
  otherToken = await signIn(stack.url, other);
  await preflight(stack, policy, escalatingIntent(policy, nowMs()));
  await preflight(stack, policy, escalatingIntent(policy, nowMs()));
  await preflight(stack, otherPolicy, escalatingIntent(otherPolicy, nowMs()));
});

afterAll(async () => {
  await stack?.stop();
});

beforeEach(() => {
  offsetMs = 0;
});

describe('one owner cannot starve everyone (item 9)', () => {
  it('a socket runs at most 20 subscriptions: the 21st is refused with SUBSCRIPTION_LIMIT_REACHED, a completed one frees its place', async () => {
    const socket = openClient(stack.wsUrl, bearer(ownerToken));
    try {
      await whileProbingHealth(async () => {
        const running = [];
        for (let index = 0; index < 20; index += 1) {
          const subscription = record(socket.client, ESCALATIONS, { policyId: policy.policyId });
          await until(
            () => subscription.data.length === 2,
            `subscription ${index + 1} got its snapshot`,
          );
          running.push(subscription);
        }
        const refused = record(socket.client, ESCALATIONS, { policyId: policy.policyId });
        await until(() => refused.answered(), 'the 21st subscription was answered');
        expect({ data: refused.data, codes: codesOf(refused.errors) }).toEqual({
          data: [],
          codes: ['SUBSCRIPTION_LIMIT_REACHED'],
        });
        running[0].unsubscribe();
        let admitted: ReturnType<typeof record> | null = null;
        // The server frees the place when it has seen the complete message: ask again until it has.
        await until(() => {
          if (admitted?.data.length === 2) return true;
          if (admitted === null || admitted.errors.length > 0)
            admitted = record(socket.client, ESCALATIONS, { policyId: policy.policyId });
          return false;
        }, 'a subscription took the freed place');
      });
    } finally {
      await socket.dispose();
    }
  });

  it('2,000 subscriptions on one socket: 20 run, 21 are refused, then the socket is cut (4429); nothing silent, the pool stays free', async () => {
    const attacker = remoteClient({
      wsUrl: stack.wsUrl,
      connectionParams: bearer(ownerToken),
      query: ESCALATIONS,
      variables: { policyId: policy.policyId },
      count: 2000,
      settleAtData: 2,
    });
    const bystander = openClient(stack.wsUrl, bearer(otherToken));
    try {
      await whileProbingHealth(async () => {
        const neighbour = record(bystander.client, ESCALATIONS);
        // Settles only once every one of the 2,000 got its snapshot or an error: none is left waiting.
        const outcomes = await attacker.settled;
        const refused = outcomes.filter((outcome) =>
          outcome.codes.includes('SUBSCRIPTION_LIMIT_REACHED'),
        );
        const cut = outcomes.filter((outcome) => outcome.codes.includes('close:4429'));
        // 20 ran; 21 refusals in a row (more than the cap) were answered, then the socket was cut and
        // the rest were never read: they ended with the close, as did the running ones still waiting.
        expect(refused).toHaveLength(21);
        expect(cut.length).toBeGreaterThanOrEqual(1959);
        expect(new Set(outcomes.flatMap((outcome) => outcome.codes))).toEqual(
          new Set([
            'SUBSCRIPTION_LIMIT_REACHED',
            'close:4429',
            ...outcomes.flatMap((outcome) =>
              outcome.codes.filter((code) => code === 'SERVICE_UNAVAILABLE'),
            ),
          ]),
        );
        await until(() => neighbour.data.length === 1, 'the other owner got its snapshot');
        expect((await fetch(`${stack.url}/readyz`)).status).toBe(200);
        const theirs = await graphql(
          stack.url,
          '{ escalations(state: PENDING, first: 5) { nodes { policyId } } }',
          {},
          otherToken,
        );
        expect(theirs.body.data.escalations.nodes).toEqual([{ policyId: otherPolicy.policyId }]);
      });
    } finally {
      await attacker.dispose();
      await bystander.dispose();
    }
  });

  it('a session holds at most 3 sockets: the next closes with 4429, signing in again buys none, closing one frees its place', async () => {
    await whileProbingHealth(async () => {
      const held = [1, 2, 3].map(() => openClient(stack.wsUrl, bearer(ownerToken)));
      const extra: Array<ReturnType<typeof openClient>> = [];
      try {
        await Promise.all(held.map((socket) => socket.connected));
        const fourth = openClient(stack.wsUrl, bearer(ownerToken));
        extra.push(fourth);
        await expect(fourth.closed).resolves.toBe(4429);
        const signedInAgain = openClient(stack.wsUrl, bearer(await signIn(stack.url, owner)));
        extra.push(signedInAgain);
        await expect(signedInAgain.closed).resolves.toBe(4429);
        const someoneElse = openClient(stack.wsUrl, bearer(otherToken));
        extra.push(someoneElse);
        await someoneElse.connected;

        await held[0].dispose();
        // The server counts the socket out when it sees the close, which may come just after the client does.
        let admitted = false;
        for (let attempt = 0; attempt < 50 && !admitted; attempt += 1) {
          const retry = openClient(stack.wsUrl, bearer(ownerToken));
          extra.push(retry);
          admitted = await Promise.race([
            retry.connected.then(() => true),
            retry.closed.then(() => false),
          ]);
          if (!admitted) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(admitted).toBe(true);
      } finally {
        await Promise.all([...held, ...extra].map((socket) => socket.dispose()));
      }
    });
  });

  it('reads wait in a bounded queue: with the table locked, 2 run, 16 wait, the next are refused at once; the same read asked again while it waits is that read, and takes no place; the pool serves everyone else', async () => {
    // 20 escalations of a policy of its own, so that each subscription (by pollRef) is a read of its own.
    const crowded = await createEscalatingPolicy(stack, owner.address.toLowerCase());
    const pollRefs: string[] = [];
    for (let index = 0; index < 20; index += 1) {
      const answer = await preflight(stack, crowded, escalatingIntent(crowded, nowMs()));
      pollRefs.push(answer.escalation.pollRef as string);
    }
    const listening = (): number => stack.stack.gateway.fanout.listenerCount('escalationUpdated');
    const locker = await stack.db.adminPool.connect();
    const first = openClient(stack.wsUrl, bearer(ownerToken));
    const second = openClient(stack.wsUrl, bearer(ownerToken));
    const one = (socket: typeof first, pollRef: string) =>
      record(socket.client, ONE_ESCALATION, { pollRef });
    try {
      await whileProbingHealth(async () => {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE policy.escalations IN ACCESS EXCLUSIVE MODE');
        await first.connected;
        await second.connected;
        const before = listening();
        // One socket's messages are read one per turn, in order: 2 reads run, 14 wait; 2 more
        // asking for the 10th escalation join its waiting read; 2 more wait, and the queue is full.
        const distinct = pollRefs.slice(0, 16).map((pollRef) => one(first, pollRef));
        const again = [1, 2].map(() => one(first, pollRefs[9]));
        const last = pollRefs.slice(16, 18).map((pollRef) => one(first, pollRef));
        await until(() => listening() === before + 20, 'the first socket subscribed 20 times');
        const refused = pollRefs.slice(18).map((pollRef) => one(second, pollRef));
        const everyone = [...distinct, ...again, ...last, ...refused];
        await until(
          () => everyone.filter((subscription) => subscription.errors.length > 0).length === 2,
          'two reads were refused',
        );
        expect(refused.flatMap((subscription) => codesOf(subscription.errors))).toEqual([
          'SERVICE_UNAVAILABLE',
          'SERVICE_UNAVAILABLE',
        ]);
        expect((await fetch(`${stack.url}/readyz`)).status).toBe(200);
        const catalog = await graphql(
          stack.url,
          '{ provider(id: "spendctl-domains") { maturity } }',
        );
        expect(catalog.body.data.provider.maturity).toBe('VERIFIED');
        await locker.query('COMMIT');
        const answered = [...distinct, ...again, ...last];
        await until(
          () => answered.every((subscription) => subscription.data.length === 1),
          'the queued reads were answered',
        );
        const refOf = (subscription: (typeof answered)[number]) =>
          subscription.data[0].escalationUpdated.pollRef;
        expect([...distinct, ...last].map(refOf)).toEqual(pollRefs.slice(0, 18));
        expect(again.map(refOf)).toEqual([pollRefs[9], pollRefs[9]]);
        expect(answered.flatMap((subscription) => subscription.errors)).toEqual([]);
      });
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      locker.release();
      await first.dispose();
      await second.dispose();
    }
  });

  it('a snapshot or a change that cannot be read is an error message, never silence', async () => {
    const revoke = () =>
      stack.db.adminPool.query('REVOKE SELECT ON policy.escalations FROM spend_control_service');
    const grant = () =>
      stack.db.adminPool.query('GRANT SELECT ON policy.escalations TO spend_control_service');
    const socket = openClient(stack.wsUrl, bearer(ownerToken));
    try {
      await whileProbingHealth(async () => {
        await revoke();
        const snapshot = record(socket.client, ESCALATIONS, { policyId: policy.policyId });
        await until(() => snapshot.answered(), 'the failed snapshot was answered');
        expect({ data: snapshot.data, codes: codesOf(snapshot.errors) }).toEqual({
          data: [],
          codes: ['INTERNAL_ERROR'],
        });
        await grant();

        const live = record(socket.client, ESCALATIONS, { policyId: policy.policyId });
        await until(() => live.data.length === 2, 'the snapshot arrived');
        await revoke();
        const pollRef = live.data[0].escalationUpdated.pollRef as string;
        await stack.db.adminPool.query(
          "SELECT pg_notify('escalation_updated', json_build_object('pollRef', $1::text, 'policyId', $2::text, 'owner', $3::text, 'state', 'PENDING')::text)",
          [pollRef, policy.policyId, owner.address.toLowerCase()],
        );
        await until(() => live.errors.length > 0, 'the failed change read was answered');
        expect({ data: live.data.length, codes: codesOf(live.errors) }).toEqual({
          data: 2,
          codes: ['INTERNAL_ERROR'],
        });
      });
    } finally {
      await grant();
      await socket.dispose();
    }
  });

  it('a client that stops reading is closed with 4008 once 256 KiB wait unsent; a client that reads gets every event', async () => {
    const slow = new WebSocket(stack.wsUrl, 'graphql-transport-ws');
    const frames: string[] = [];
    let closeCode: number | null = null;
    slow.on('message', (frame) => frames.push(String(frame)));
    slow.on('close', (code) => (closeCode = code));
    const reader = remoteClient({
      wsUrl: stack.wsUrl,
      connectionParams: {},
      query: CATALOG,
      count: 1,
      settleAtData: 1500,
    });
    try {
      await whileProbingHealth(async () => {
        await new Promise((resolve) => slow.once('open', resolve));
        slow.send(JSON.stringify({ type: 'connection_init', payload: {} }));
        await until(
          () => frames.some((frame) => frame.includes('connection_ack')),
          'the slow client was acknowledged',
        );
        slow.send(JSON.stringify({ id: 'flood', type: 'subscribe', payload: { query: CATALOG } }));
        await until(
          () => stack.stack.gateway.fanout.listenerCount('catalogChanged') === 2,
          'both subscriptions are live',
        );
        slow.pause();
        // 1,500 notices of ~7 KB (far more than the kernel's socket buffers and the 256 KiB bound), committed
        // 100 at a time as a busy service would: a stream, not one 10 MB block.
        for (let first = 1; first <= 1500; first += 100) {
          await stack.db.adminPool.query(
            `SELECT pg_notify('catalog_changed', json_build_object('kind', 'provider', 'id', 'flood-' || i || '-' || repeat('x', 7000),
               'maturity', 'sandbox', 'changedAt', '2026-11-22T10:00:00.000Z')::text) FROM generate_series($1::int, $1::int + 99) AS i`,
            [first],
          );
        }
        expect(await reader.settled).toEqual([{ data: 1500, codes: [] }]);
        slow.resume();
        await until(() => closeCode !== null, 'the slow client saw its socket close');
      });
      expect(closeCode).toBe(4008);
      expect(frames.filter((frame) => frame.includes('"next"')).length).toBeLessThan(1500);
    } finally {
      slow.terminate();
      await reader.dispose();
    }
  });
});

describe('a subscription ends with its session (item 10)', () => {
  it('closes the socket (4403) when the session expires, by a timer at the token’s expiry', async () => {
    const token = await signIn(stack.url, owner);
    offsetMs = expiryOf(token) * 1000 - Date.now() - 1_500;
    const socket = openClient(stack.wsUrl, bearer(token));
    try {
      await whileProbingHealth(async () => {
        await socket.connected;
        // Nothing happens on the socket after this: only the timer at the session's end can close it.
        record(socket.client, ESCALATIONS, { policyId: policy.policyId });
        await expect(socket.closed).resolves.toBe(4403);
      });
    } finally {
      await socket.dispose();
    }
  });

  it('sends nothing after the session’s end: a clock past it closes the socket (4403) at the next escalation', async () => {
    const socket = openClient(stack.wsUrl, bearer(await signIn(stack.url, owner)));
    try {
      await whileProbingHealth(async () => {
        const subscription = record(socket.client, ESCALATIONS, { policyId: policy.policyId });
        await until(
          () => stack.stack.gateway.fanout.listenerCount('escalationUpdated') === 1,
          'the subscription is live',
        );
        const early = await preflight(stack, policy, escalatingIntent(policy, nowMs()));
        await until(
          () =>
            subscription.data.some(
              (message) => message.escalationUpdated.pollRef === early.escalation.pollRef,
            ),
          'the socket was fed',
        );
        offsetMs = 31 * 60_000;
        const late = await preflight(stack, policy, escalatingIntent(policy, nowMs()));
        await expect(socket.closed).resolves.toBe(4403);
        expect(subscription.data.map((message) => message.escalationUpdated.pollRef)).not.toContain(
          late.escalation.pollRef,
        );
      });
    } finally {
      await socket.dispose();
    }
  });

  it('treats an authorization that is not a string as a bad credential (4403), not as the anonymous actor', async () => {
    await whileProbingHealth(async () => {
      for (const authorization of [
        42,
        { token: ownerToken },
        [`Bearer ${ownerToken}`],
        null,
        true,
      ]) {
        const socket = openClient(stack.wsUrl, { authorization });
        await expect(socket.closed).resolves.toBe(4403);
      }
      const anonymous = openClient(stack.wsUrl, {});
      await anonymous.connected;
      await anonymous.dispose();
    });
  });

  it('ends every session when SESSION_SECRET rotates (a restart with the new secret): the socket closes, its token is refused', async () => {
    const socket = openClient(stack.wsUrl, bearer(ownerToken));
    await socket.connected;
    await stack.stop();
    await expect(socket.closed).resolves.toBe(1001);
    stack = await startTestStack({ subscriptions: LIMITS });
    const rotated = openClient(stack.wsUrl, bearer(ownerToken));
    await whileProbingHealth(async () => {
      await expect(rotated.closed).resolves.toBe(4403);
      const fresh = openClient(stack.wsUrl, bearer(await signIn(stack.url, owner)));
      await fresh.connected;
      await fresh.dispose();
    });
  });
});
