// escalationUpdated routed by owner (issue 32 item 1): each change is read once and published on
// its owner's topic only, so the authorisation is the socket's, decided when it subscribed and
// again when its session ends. Real stack, real SIWE sessions, real websockets, real preflights
// that escalate and commit; the NOTIFY that a forger sends by hand is a real pg_notify.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  createEscalatingPolicy,
  escalatingIntent,
  type EscalationSubscriber,
  preflight,
  subscribeToEscalations,
  type TestPolicy,
  waitForEscalationSubscribers,
} from '../support/escalations';
import { signIn } from '../support/siwe';
import { graphql, startTestStack, type TestStack } from '../support/stack';
import { until } from '../support/websockets';

const alice = privateKeyToAccount(generatePrivateKey());
const bob = privateKeyToAccount(generatePrivateKey());
let offsetMs = 0;
let stack: TestStack;
let alicePolicy: TestPolicy;
let bobPolicy: TestPolicy;

const nowMs = (): number => Date.now() + offsetMs;
const pollRefsOf = (subscriber: EscalationSubscriber): string[] =>
  subscriber.messages.map((message) => message.pollRef);

async function escalate(policy: TestPolicy): Promise<string> {
  const answer = await preflight(stack, policy, escalatingIntent(policy, nowMs()));
  return answer.escalation.pollRef as string;
}

/** Waits until exactly `count` escalation subscriptions are live (the last test's have gone). */
async function subscribers(count: number): Promise<void> {
  await until(
    () => stack.stack.gateway.fanout.listenerCount('escalationUpdated') === count,
    `${count} escalation subscriptions are live`,
  );
}

async function received(subscriber: EscalationSubscriber, pollRef: string): Promise<void> {
  await subscriber.waitFor((message) => message.pollRef === pollRef);
}

beforeAll(async () => {
  stack = await startTestStack({ now: () => new Date(nowMs()) });
  alicePolicy = await createEscalatingPolicy(stack, alice.address.toLowerCase());
  bobPolicy = await createEscalatingPolicy(stack, bob.address.toLowerCase());
});

afterAll(async () => {
  await stack?.stop();
});

beforeEach(async () => {
  offsetMs = 0;
  await subscribers(0);
});

it('two owners with two sockets each: every socket receives each of its own owner’s escalations once, never the other’s; an admin socket receives both', async () => {
  const aliceToken = await signIn(stack.url, alice);
  const bobToken = await signIn(stack.url, bob);
  const aliceSockets = [1, 2].map(() => subscribeToEscalations(stack, aliceToken));
  const bobSockets = [1, 2].map(() => subscribeToEscalations(stack, bobToken));
  const admin = subscribeToEscalations(stack, stack.adminToken);
  const everyone = [...aliceSockets, ...bobSockets, admin];
  try {
    await waitForEscalationSubscribers(stack, 5);
    const aliceRefs = [await escalate(alicePolicy), await escalate(alicePolicy)];
    const bobRefs = [await escalate(bobPolicy), await escalate(bobPolicy)];
    for (const socket of aliceSockets) for (const ref of aliceRefs) await received(socket, ref);
    for (const socket of bobSockets) for (const ref of bobRefs) await received(socket, ref);
    for (const ref of [...aliceRefs, ...bobRefs]) await received(admin, ref);
    // One more of Bob's, received by Bob's sockets: every earlier change has been routed by then.
    const lastOfBob = await escalate(bobPolicy);
    for (const socket of bobSockets) await received(socket, lastOfBob);

    for (const socket of aliceSockets) expect(pollRefsOf(socket)).toEqual(aliceRefs);
    for (const socket of bobSockets) expect(pollRefsOf(socket)).toEqual([...bobRefs, lastOfBob]);
    for (const socket of aliceSockets)
      expect(socket.messages.every((message) => message.policyId === alicePolicy.policyId)).toBe(
        true,
      );
    for (const socket of everyone) expect(socket.errors).toEqual([]);
  } finally {
    for (const socket of everyone) await socket.close();
  }
});

const EVERY_FIELD =
  'pollRef state outcome reason intentHash policyId decision amountAtomic recipient createdAt expiresAt resolvedAt resolvedVia';
const ESCALATION = `query ($pollRef: ID!) { escalation(pollRef: $pollRef) { ${EVERY_FIELD} } }`;
const DECIDE = `mutation ($pollRef: ID!) { decideEscalation(pollRef: $pollRef, decision: APPROVE) { state } }`;

it('each event is the state its change committed, carried by its NOTIFY, field for field what Query.escalation shows of it', async () => {
  const token = await signIn(stack.url, alice);
  // The trigger's own payloads, heard on a LISTEN connection of the test's.
  const listener = await stack.db.adminPool.connect();
  const carried: Array<Record<string, unknown>> = [];
  listener.on('notification', (message) => {
    carried.push(JSON.parse(message.payload ?? 'null').update);
  });
  await listener.query('LISTEN escalation_updated');
  const socket = subscribeToEscalations(stack, token, { fields: EVERY_FIELD });
  const admin = subscribeToEscalations(stack, stack.adminToken, { fields: EVERY_FIELD });
  try {
    await waitForEscalationSubscribers(stack, 2);
    const pollRef = await escalate(alicePolicy);
    const read = async () =>
      (await graphql(stack.url, ESCALATION, { pollRef }, token)).body.data.escalation;
    const pending = await read();
    expect(pending.state).toBe('PENDING');
    expect(await socket.waitFor((m) => m.pollRef === pollRef)).toEqual(pending);

    offsetMs += 60_000;
    const decided = await graphql(stack.url, DECIDE, { pollRef }, token);
    expect(decided.body.data.decideEscalation.state).toBe('APPROVED');
    const approved = await read();
    expect(approved).toMatchObject({ state: 'APPROVED', resolvedVia: 'dashboard' });
    expect(await socket.waitFor((m) => m.pollRef === pollRef && m.state === 'APPROVED')).toEqual(
      approved,
    );
    await admin.waitFor((m) => m.pollRef === pollRef && m.state === 'APPROVED');
    expect(admin.messages.filter((m) => m.pollRef === pollRef)).toEqual([pending, approved]);
    expect(socket.messages.filter((m) => m.pollRef === pollRef)).toEqual([pending, approved]);
    expect([...socket.errors, ...admin.errors]).toEqual([]);
    // The states went out in the notifications (so no read was needed), outcome and reason aside.
    const without = ({ outcome: _o, reason: _r, ...rest }: Record<string, unknown>) => rest;
    expect(carried.filter((update) => update?.pollRef === pollRef)).toEqual([
      without(pending),
      without(approved),
    ]);
  } finally {
    await listener.query('UNLISTEN escalation_updated');
    listener.release();
    await socket.close();
    await admin.close();
  }
});

it('a NOTIFY that names the wrong owner reaches nobody: the change is read as that owner, who cannot see it', async () => {
  const aliceToken = await signIn(stack.url, alice);
  const aliceSocket = subscribeToEscalations(stack, aliceToken);
  try {
    await waitForEscalationSubscribers(stack, 1);
    const bobsRef = await escalate(bobPolicy);
    await stack.db.adminPool.query(
      "SELECT pg_notify('escalation_updated', json_build_object('pollRef', $1::text, 'policyId', $2::text, 'owner', $3::text, 'state', 'PENDING')::text)",
      [bobsRef, bobPolicy.policyId, alice.address.toLowerCase()],
    );
    // Notifications are routed in order: once Alice's next change arrives, the forged one is done.
    const alicesRef = await escalate(alicePolicy);
    await received(aliceSocket, alicesRef);
    expect(pollRefsOf(aliceSocket)).not.toContain(bobsRef);
    expect(aliceSocket.errors).toEqual([]);
  } finally {
    await aliceSocket.close();
  }
});

it('a socket whose session ended receives nothing more (closed 4403) while its owner’s live socket still does', async () => {
  const endingToken = await signIn(stack.url, alice);
  offsetMs = 20 * 60_000;
  const liveToken = await signIn(stack.url, alice);
  const ending = subscribeToEscalations(stack, endingToken);
  const live = subscribeToEscalations(stack, liveToken);
  try {
    await waitForEscalationSubscribers(stack, 2);
    const before = await escalate(alicePolicy);
    await received(ending, before);
    await received(live, before);

    // Past the first session's end (30 minutes), within the second's.
    offsetMs = 31 * 60_000;
    const after = await escalate(alicePolicy);
    await received(live, after);
    await expect(ending.closed).resolves.toBe(4403);
    expect(pollRefsOf(ending)).not.toContain(after);
    await subscribers(1);
    const later = await escalate(alicePolicy);
    await received(live, later);
    expect(pollRefsOf(ending)).not.toContain(later);
    expect(live.errors).toEqual([]);
  } finally {
    await ending.close();
    await live.close();
  }
});
