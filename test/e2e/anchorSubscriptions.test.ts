// Anchor state live over real websockets (issue #19 item 4): anchorUpdated(receiptId), public,
// starts with the current anchor object and follows it to ANCHORED (a preflight's decision receipt,
// a purchase's final consumer receipt), fed by the intent subgraph's NOTIFY on commit and the
// stack's anchoring worker; anchorsUpdated(policyId) is the owner's, starting from a snapshot of
// the policy's unsettled receipts: another owner subscribed to their own policy sees nothing of it, and is refused the first owner's policy, as are anonymous and
// consumer sockets. The socket and subscription limits hold for both.
import { newConsumer, type TestConsumer } from '../support/consumers';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { openClient, record, type RecordedClient, until } from '../support/websockets';
import { createIntent, fundAndExecute, intentRow, untilState } from '../support/purchases';

const LIMITS = {
  maxSocketsPerSession: 2,
  maxSubscriptionsPerSocket: 3,
  maxBufferedBytes: 256 * 1024,
  readConcurrency: 2,
  readQueueLength: 64,
};
const ONE = 'subscription ($r: ID!) { anchorUpdated(receiptId: $r) }';
const POLICY = 'subscription ($p: ID!) { anchorsUpdated(policyId: $p) }';

let world: ConsumerWorld;
let buyer: TestConsumer;
let stranger: TestConsumer;
let domains = 0;
const sockets: RecordedClient[] = [];

beforeAll(async () => {
  world = await startConsumerWorld({
    rdap: true,
    anchoring: { batchSize: 100, batchSeconds: 0 },
    stack: { subscriptions: LIMITS },
  });
  buyer = await newConsumer(world.stack, world.devnet, { mintAtomic: 10_000_000n });
  stranger = await newConsumer(world.stack, world.devnet);
}, 120_000);

afterEach(async () => {
  for (const socket of sockets.splice(0)) await socket.dispose();
});

afterAll(async () => {
  await world?.stop();
});

function socket(token: string | null): RecordedClient {
  const opened = openClient(
    world.stack.wsUrl,
    token === null ? {} : { authorization: `Bearer ${token}` },
  );
  sockets.push(opened);
  return opened;
}

const anchorsOf = (subscription: ReturnType<typeof record>, field: string): any[] =>
  subscription.data.map((data) => data[field]);
const codesOf = (subscription: ReturnType<typeof record>): unknown[] =>
  subscription.errors.map((error) => error.extensions?.code);

async function listening(topic: string, count: number): Promise<void> {
  await until(
    () => world.stack.stack.gateway.fanout.listenerCount(topic) >= count,
    `${count} listener(s) on ${topic}`,
  );
}

async function receiptStatus(receiptId: string): Promise<any> {
  const response = await fetch(`${world.stack.url}/receipt_status/${receiptId}`);
  expect(response.status).toBe(200);
  return response.json();
}

/** A purchase created by `consumer` (its preflight writes a decision receipt): the intent and that receipt. */
async function created(consumer: TestConsumer): Promise<{ intentId: string; receiptId: string }> {
  domains += 1;
  const body = await createIntent(world, consumer, `live-anchor-${domains}.test`);
  const intentId = body.intent.intentId as string;
  const row = await intentRow(world, intentId);
  return { intentId, receiptId: row.decision!.receiptId as string };
}

/** A whole purchase by the buyer, until COMPLETED: its consumer receipt is final then. */
async function purchased(): Promise<string> {
  const { intentId } = await created(buyer);
  await fundAndExecute(world, buyer, intentId);
  await untilState(world, intentId, 'COMPLETED');
  return intentId;
}

async function anchorRound(): Promise<void> {
  const round = await world.stack.stack.anchoring!.runOnce();
  expect(round).toMatchObject({ ran: true, failed: 0 });
}

test('anchorUpdated of a fresh preflight’s receipt: PENDING first, ANCHORED after the round, then complete; anyone may follow it', async () => {
  await anchorRound(); // earlier receipts out of the way
  const { receiptId } = await created(buyer);
  const anonymous = socket(null);
  const following = record(anonymous.client, ONE, { r: receiptId });
  // Uppercase hex names the same receipt, as GET /receipt_status accepts it.
  const upper = record(socket(stranger.owner).client, ONE, {
    r: `0x${receiptId.slice(2).toUpperCase()}`,
  });
  await until(() => following.data.length > 0 && upper.data.length > 0, 'the current state');
  expect(anchorsOf(following, 'anchorUpdated')).toEqual([{ state: 'PENDING', receiptId }]);
  await listening(`anchorUpdated:${receiptId}`, 2);

  await anchorRound();
  await until(() => following.completed() && upper.completed(), 'ANCHORED and complete');
  const anchored = await receiptStatus(receiptId);
  expect(anchored).toMatchObject({ state: 'ANCHORED', receiptId });
  expect(anchorsOf(following, 'anchorUpdated')).toEqual([
    { state: 'PENDING', receiptId },
    anchored,
  ]);
  expect(anchorsOf(upper, 'anchorUpdated')).toEqual([{ state: 'PENDING', receiptId }, anchored]);
  expect([...following.errors, ...upper.errors]).toEqual([]);
  // Complete: nothing of the receipt is listened to any more.
  await until(
    () => world.stack.stack.gateway.fanout.listenerCount(`anchorUpdated:${receiptId}`) === 0,
    'the listeners freed',
  );

  // Subscribing after the fact: the current state (ANCHORED) at once, then complete.
  const late = record(socket(null).client, ONE, { r: receiptId });
  await until(() => late.completed(), 'the late subscription completes');
  expect(anchorsOf(late, 'anchorUpdated')).toEqual([anchored]);
});

test('anchorUpdated of a purchase’s consumer receipt once final: PENDING, then ANCHORED as the receipt shows it', async () => {
  const intentId = await purchased();
  const receipt: any = await (
    await fetch(`${world.stack.url}/consumer/receipt/${intentId}`)
  ).json();
  const receiptId = receipt.anchor.receiptId as string;
  expect(receipt.anchor).toEqual({ state: 'PENDING', receiptId });
  const following = record(socket(null).client, ONE, { r: receiptId });
  await until(() => following.data.length > 0, 'the current state');
  await listening(`anchorUpdated:${receiptId}`, 1);

  await anchorRound();
  await until(() => following.completed(), 'ANCHORED and complete');
  const after: any = await (await fetch(`${world.stack.url}/consumer/receipt/${intentId}`)).json();
  expect(after.anchor).toMatchObject({ state: 'ANCHORED', receiptId });
  expect(anchorsOf(following, 'anchorUpdated')).toEqual([
    { state: 'PENDING', receiptId },
    after.anchor,
  ]);
});

test('anchorUpdated: an unknown receipt is NOT_FOUND, a malformed id is refused', async () => {
  const anonymous = socket(null);
  const unknown = `0x${'ab'.repeat(32)}`;
  const missing = record(anonymous.client, ONE, { r: unknown });
  const malformed = record(anonymous.client, ONE, { r: '0x1234' });
  await until(() => missing.data.length > 0 && malformed.answered(), 'both answered');
  expect(anchorsOf(missing, 'anchorUpdated')).toEqual([{ state: 'NOT_FOUND', receiptId: unknown }]);
  expect(malformed.data).toEqual([]);
  expect(codesOf(malformed)).toEqual(['RECEIPT_ID_INVALID']);
});

test('anchorsUpdated: the owner starts from a snapshot of its unsettled receipts, then sees them anchored; another owner sees nothing of them and is refused that policy', async () => {
  const policyA = buyer.policy.policyId;
  const policyB = stranger.policy.policyId;
  await anchorRound(); // earlier receipts settled: the snapshot holds only what follows
  const first = await created(buyer);
  const second = await created(buyer);

  const owner = record(socket(buyer.owner).client, POLICY, { p: policyA });
  const admin = record(socket(world.stack.adminToken).client, POLICY, { p: policyA });
  const strangerSocket = socket(stranger.owner);
  const own = record(strangerSocket.client, POLICY, { p: policyB });
  const theirs = record(strangerSocket.client, POLICY, { p: policyA });
  const anonymous = record(socket(null).client, POLICY, { p: policyA });
  const consumer = record(socket(buyer.session).client, POLICY, { p: policyA });
  const unknown = record(socket(buyer.owner).client, POLICY, { p: '123456789' });
  await until(
    () => [theirs, anonymous, consumer, unknown].every((refusal) => refusal.answered()),
    'the refusals',
  );
  expect(codesOf(theirs)).toEqual(['POLICY_NOT_FOUND']);
  expect(codesOf(anonymous)).toEqual(['AUTH_REQUIRED']);
  expect(codesOf(consumer)).toEqual(['FORBIDDEN']);
  expect(codesOf(unknown)).toEqual(['POLICY_NOT_FOUND']);
  for (const refused of [theirs, anonymous, consumer, unknown]) expect(refused.data).toEqual([]);

  // The first message is the current state: the policy's receipts not settled yet, oldest first.
  await until(
    () => owner.data.length > 0 && admin.data.length > 0 && own.data.length > 0,
    'the snapshots',
  );
  const [ownerSnapshot] = anchorsOf(owner, 'anchorsUpdated');
  expect(ownerSnapshot).toEqual({
    snapshot: {
      policyId: policyA,
      asOf: expect.any(String),
      pendingTotal: 2,
      pending: [
        { state: 'PENDING', receiptId: first.receiptId },
        { state: 'PENDING', receiptId: second.receiptId },
      ],
    },
  });
  expect(anchorsOf(admin, 'anchorsUpdated')[0]).toEqual({
    snapshot: { ...ownerSnapshot.snapshot, asOf: expect.any(String) },
  });
  expect(anchorsOf(own, 'anchorsUpdated')[0]).toEqual({
    snapshot: { policyId: policyB, asOf: expect.any(String), pendingTotal: 0, pending: [] },
  });
  await listening(`anchorsUpdated:${policyA}`, 2);
  await listening(`anchorsUpdated:${policyB}`, 1);

  const queued = (subscription: ReturnType<typeof record>, receiptId: string, state: string) =>
    anchorsOf(subscription, 'anchorsUpdated').some(
      (anchor) => anchor.receiptId === receiptId && anchor.state === state,
    );
  // Decision receipts are announced when their batch settles (no NOTIFY on the preflight path).
  await anchorRound();
  await until(
    () => queued(owner, first.receiptId, 'ANCHORED') && queued(owner, second.receiptId, 'ANCHORED'),
    'the owner sees both anchored',
  );
  await until(() => queued(admin, second.receiptId, 'ANCHORED'), 'the admin sees them too');
  const ownerAnchors = anchorsOf(owner, 'anchorsUpdated');
  expect(
    ownerAnchors.find(
      (anchor) => anchor.state === 'ANCHORED' && anchor.receiptId === first.receiptId,
    ),
  ).toEqual(await receiptStatus(first.receiptId));

  // The stranger's own receipt commits after the owner's anchored: once it arrives, the owner's were filtered out.
  const mine = await created(stranger);
  await anchorRound();
  await until(() => queued(own, mine.receiptId, 'ANCHORED'), 'the stranger sees its own');
  expect(
    anchorsOf(own, 'anchorsUpdated')
      .slice(1)
      .map((anchor) => [anchor.receiptId, anchor.state]),
  ).toEqual([[mine.receiptId, 'ANCHORED']]);
  expect(JSON.stringify(own.data)).not.toContain(first.receiptId);
  expect(JSON.stringify(owner.data)).not.toContain(mine.receiptId);
  expect([...owner.errors, ...own.errors, ...admin.errors]).toEqual([]);

  // Subscribing once all is settled: an empty snapshot (on the admin's second socket: the owner holds two).
  const late = record(socket(world.stack.adminToken).client, POLICY, { p: policyA });
  await until(() => late.data.length > 0, 'the late snapshot');
  expect(anchorsOf(late, 'anchorsUpdated')).toEqual([
    { snapshot: { policyId: policyA, asOf: expect.any(String), pendingTotal: 0, pending: [] } },
  ]);
});

test('the limits hold: sockets per session, subscriptions per socket (anonymous sockets too)', async () => {
  const receiptId = (await created(buyer)).receiptId;
  const held = [socket(buyer.owner), socket(buyer.owner)];
  await Promise.all(held.map((one) => one.connected));
  const third = socket(buyer.owner);
  expect(await third.closed).toBe(4429);

  for (const [one, query, variables] of [
    [held[0], POLICY, { p: buyer.policy.policyId }],
    [socket(null), ONE, { r: receiptId }],
  ] as const) {
    const running = Array.from({ length: LIMITS.maxSubscriptionsPerSocket }, () =>
      record(one.client, query, variables),
    );
    const over = record(one.client, query, variables);
    await until(() => over.answered(), 'the subscription over the cap is answered');
    expect(codesOf(over)).toEqual(['SUBSCRIPTION_LIMIT_REACHED']);
    expect(running.flatMap((subscription) => codesOf(subscription))).toEqual([]);
  }
});
