// Owner webhooks end to end (DECISIONS "Outbound events", "Webhook endpoints"): the owner creates
// an endpoint over GraphQL (the secret shown once), changes happen through the public routes, the
// worker's rounds POST each event to a real HTTP receiver on 127.0.0.1, signed `x-signature:
// t=<unix>,v1=<hmac>` over `<t>.<body>`; a receiver that fails is retried on the schedule, one
// that never answers 2xx ends FAILED for the owner to see and redeliver; nobody else sees or
// touches the owner's endpoints. The test clock moves the schedule, never a wall-clock wait.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  EVENT_ID_HEADER,
  EVENT_SIGNATURE_HEADER,
  verifyEventSignature,
} from '../../channels/ownerEvents';
import { NOW_MS } from '../../core/test-support/spend-fixtures';
import {
  startWebhookReceiver,
  type WebhookReceiver,
  type ReceivedRequest,
} from '../../devnet/peers/webhookReceiver';
import {
  createEscalatingPolicy,
  escalatingIntent,
  preflight,
  type TestPolicy,
} from '../support/escalations';
import { signIn } from '../support/siwe';
import { graphql, startTestStack, type TestStack } from '../support/stack';

let clockMs = NOW_MS;
const now = (): Date => new Date(clockMs);
let receiver: WebhookReceiver;
let stack: TestStack;

const CREATE = `mutation ($input: WebhookEndpointInput!) {
  createWebhookEndpoint(input: $input) { endpoint { id url events policyIds state } secret }
}`;
const DELIVERIES = `query ($endpointId: ID!, $first: Int, $after: String) {
  webhookDeliveries(endpointId: $endpointId, first: $first, after: $after) {
    nodes { id eventId type state attempts lastStatus lastError deliveredAt data }
    pageInfo { hasNextPage endCursor }
  }
}`;
const REDELIVER = `mutation ($id: ID!) { redeliverWebhook(deliveryId: $id) { id state attempts } }`;
const ROTATE = `mutation ($id: ID!) { rotateWebhookSecret(id: $id) { endpoint { id } secret } }`;
const DISABLE = `mutation ($id: ID!) { disableWebhookEndpoint(id: $id) { id state } }`;
const ENDPOINTS = '{ webhookEndpoints { id url state } }';
const DECIDE = `mutation ($pollRef: ID!) { decideEscalation(pollRef: $pollRef, decision: DENY) { state } }`;
const PAUSE = `mutation ($policyId: ID!) { pausePolicy(policyId: $policyId) { status } }`;
const ALL_EVENTS = [
  'escalation.created',
  'escalation.resolved',
  'consumer_intent.state_changed',
  'receipt.anchored',
  'policy.changed',
];

interface Owner {
  readonly account: ReturnType<typeof privateKeyToAccount>;
  token: string;
  readonly policy: TestPolicy;
}

async function newOwner(): Promise<Owner> {
  const account = privateKeyToAccount(generatePrivateKey());
  const token = await signIn(stack.url, account);
  const policy = await createEscalatingPolicy(stack, account.address.toLowerCase());
  return { account, token, policy };
}

async function createEndpoint(
  owner: Owner,
  path: string,
  events = ALL_EVENTS,
  policyIds?: string[],
) {
  const created = await graphql(
    stack.url,
    CREATE,
    { input: { url: `${receiver.url}${path}`, events, policyIds } },
    owner.token,
  );
  expect(created.body.errors).toBeUndefined();
  return created.body.data.createWebhookEndpoint as {
    endpoint: { id: string; url: string; events: string[]; state: string };
    secret: string;
  };
}

/** Runs worker rounds until a round attempts no webhook. */
async function drain(): Promise<void> {
  for (let round = 0; round < 10; round += 1) {
    const result = await stack.stack.worker!.runOnce();
    if (result.webhooksAttempted === 0) return;
  }
}

function bodyOf(request: ReceivedRequest): {
  id: string;
  type: string;
  occurredAt: string;
  data: any;
} {
  return JSON.parse(request.rawBody);
}

function requestsTo(path: string): ReceivedRequest[] {
  return receiver.requests.filter((request) => request.path === path);
}

function expectSigned(request: ReceivedRequest, secret: string): void {
  expect(request.method).toBe('POST');
  expect(request.headers['content-type']).toBe('application/json');
  expect(request.headers[EVENT_ID_HEADER]).toBe(bodyOf(request).id);
  expect(
    verifyEventSignature({
      secret,
      header: request.headers[EVENT_SIGNATURE_HEADER],
      rawBody: request.rawBody,
      now: now(),
    }),
  ).toBe(true);
  expect(
    verifyEventSignature({
      secret: 'f'.repeat(64),
      header: request.headers[EVENT_SIGNATURE_HEADER],
      rawBody: request.rawBody,
      now: now(),
    }),
  ).toBe(false);
}

async function deliveries(owner: Owner, endpointId: string) {
  const read = await graphql(stack.url, DELIVERIES, { endpointId, first: 50 }, owner.token);
  expect(read.body.errors).toBeUndefined();
  return read.body.data.webhookDeliveries.nodes as Array<{
    id: string;
    eventId: string;
    type: string;
    state: string;
    attempts: number;
    lastStatus: number | null;
    lastError: string | null;
    data: any;
  }>;
}

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  stack = await startTestStack({
    now,
    escalationWorker: {
      adapters: {},
      dashboardBaseUrl: 'http://127.0.0.1/dashboard',
      intervalMs: 0,
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
});

test('each change reaches the endpoint once as a signed {id, type, occurredAt, data} POST: policy.changed, escalation.created, escalation.resolved', async () => {
  const owner = await newOwner();
  const { endpoint, secret } = await createEndpoint(owner, '/hooks/every');
  expect(endpoint).toMatchObject({ state: 'ACTIVE', events: ALL_EVENTS });
  expect(secret).toMatch(/^[0-9a-f]{64}$/);

  const escalated = await preflight(stack, owner.policy, escalatingIntent(owner.policy, clockMs));
  const pollRef = escalated.escalation.pollRef as string;
  expect(
    (await graphql(stack.url, DECIDE, { pollRef }, owner.token)).body.data.decideEscalation.state,
  ).toBe('DENIED');
  const paused = await graphql(stack.url, PAUSE, { policyId: owner.policy.policyId }, owner.token);
  expect(paused.body.data.pausePolicy.status).toBe('PAUSED');
  await drain();
  await drain();

  const received = requestsTo('/hooks/every');
  expect(received.map((request) => bodyOf(request).type).sort()).toEqual(
    ['escalation.created', 'escalation.resolved', 'policy.changed'].sort(),
  );
  for (const request of received) expectSigned(request, secret);
  const byType = Object.fromEntries(
    received.map((request) => [bodyOf(request).type, bodyOf(request)]),
  );
  expect(byType['escalation.created'].data).toMatchObject({
    pollRef,
    policyId: owner.policy.policyId,
    state: 'PENDING',
    amount: '1500000',
  });
  expect(byType['escalation.resolved'].data).toMatchObject({ pollRef, state: 'DENIED' });
  expect(byType['policy.changed'].data).toMatchObject({
    policyId: owner.policy.policyId,
    change: 'PAUSED',
    status: 'PAUSED',
  });
  for (const body of Object.values(byType)) {
    expect(body.id).toMatch(/^evt_[0-9a-f]{24}$/);
    expect(Object.keys(body)).toEqual(['id', 'type', 'occurredAt', 'data']);
  }
  const listed = await deliveries(owner, endpoint.id);
  expect(
    listed.map((delivery) => [delivery.state, delivery.attempts, delivery.lastStatus]),
  ).toEqual([
    ['DELIVERED', 1, 200],
    ['DELIVERED', 1, 200],
    ['DELIVERED', 1, 200],
  ]);
});

test('an endpoint gets only the types and policies it lists', async () => {
  const owner = await newOwner();
  const second = await createEscalatingPolicy(stack, owner.account.address.toLowerCase());
  await createEndpoint(owner, '/hooks/narrow', ['escalation.created'], [second.policyId]);
  await preflight(stack, owner.policy, escalatingIntent(owner.policy, clockMs));
  const escalated = await preflight(stack, second, escalatingIntent(second, clockMs));
  await graphql(stack.url, PAUSE, { policyId: second.policyId }, owner.token);
  await drain();
  const received = requestsTo('/hooks/narrow').map(bodyOf);
  expect(received.map((body) => [body.type, body.data.pollRef])).toEqual([
    ['escalation.created', escalated.escalation.pollRef],
  ]);
});

test('a receiver that fails three times gets the event on the fourth try, at 1 s, 5 s and 30 s', async () => {
  const owner = await newOwner();
  const { endpoint, secret } = await createEndpoint(owner, '/hooks/flaky', ['policy.changed']);
  receiver.failNext(503, 3);
  await graphql(stack.url, PAUSE, { policyId: owner.policy.policyId }, owner.token);
  const start = clockMs;
  await drain();
  expect(requestsTo('/hooks/flaky')).toHaveLength(1);
  clockMs = start + 999;
  await drain();
  expect(requestsTo('/hooks/flaky')).toHaveLength(1);
  for (const waitMs of [1_000, 5_000, 30_000]) {
    clockMs += waitMs;
    await drain();
  }
  const received = requestsTo('/hooks/flaky');
  expect(received).toHaveLength(4);
  expect(new Set(received.map((request) => bodyOf(request).id)).size).toBe(1);
  expectSigned(received[3]!, secret);
  const [delivery] = await deliveries(owner, endpoint.id);
  expect(delivery).toMatchObject({ state: 'DELIVERED', attempts: 4, lastStatus: 200 });
  clockMs = NOW_MS;
});

test('a receiver that never answers 2xx ends FAILED after the schedule; the owner sees it and redelivers it', async () => {
  const owner = await newOwner();
  const { endpoint, secret } = await createEndpoint(owner, '/hooks/down', ['policy.changed']);
  receiver.failNext(500, 9);
  await graphql(stack.url, PAUSE, { policyId: owner.policy.policyId }, owner.token);
  await drain();
  for (const waitMs of [1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000]) {
    clockMs += waitMs;
    await drain();
  }
  expect(requestsTo('/hooks/down')).toHaveLength(9);
  clockMs += 86_400_000;
  await drain();
  expect(requestsTo('/hooks/down')).toHaveLength(9);

  owner.token = await signIn(stack.url, owner.account);
  const [failed] = await deliveries(owner, endpoint.id);
  expect(failed).toMatchObject({
    type: 'policy.changed',
    state: 'FAILED',
    attempts: 9,
    lastStatus: 500,
  });
  expect(failed!.lastError).toMatch(/HTTP 500/);

  const again = await graphql(stack.url, REDELIVER, { id: failed!.id }, owner.token);
  expect(again.body.data.redeliverWebhook).toEqual({
    id: failed!.id,
    state: 'PENDING',
    attempts: 0,
  });
  await drain();
  const received = requestsTo('/hooks/down');
  expect(received).toHaveLength(10);
  expect(bodyOf(received[9]!).id).toBe(failed!.eventId);
  expectSigned(received[9]!, secret);
  const [delivered] = await deliveries(owner, endpoint.id);
  expect(delivered).toMatchObject({ state: 'DELIVERED', attempts: 1, lastStatus: 200 });
  clockMs = NOW_MS;
});

test('a rotated secret signs what follows; a disabled endpoint gets nothing more', async () => {
  const owner = await newOwner();
  const { endpoint, secret } = await createEndpoint(owner, '/hooks/rotate', ['policy.changed']);
  const rotated = await graphql(stack.url, ROTATE, { id: endpoint.id }, owner.token);
  const newSecret = rotated.body.data.rotateWebhookSecret.secret as string;
  expect(newSecret).not.toBe(secret);
  await graphql(stack.url, PAUSE, { policyId: owner.policy.policyId }, owner.token);
  await drain();
  const [request] = requestsTo('/hooks/rotate');
  expectSigned(request!, newSecret);
  expect(
    verifyEventSignature({
      secret,
      header: request!.headers[EVENT_SIGNATURE_HEADER],
      rawBody: request!.rawBody,
      now: now(),
    }),
  ).toBe(false);

  const disabled = await graphql(stack.url, DISABLE, { id: endpoint.id }, owner.token);
  expect(disabled.body.data.disableWebhookEndpoint.state).toBe('DISABLED');
  await graphql(
    stack.url,
    'mutation ($policyId: ID!) { resumePolicy(policyId: $policyId) { status } }',
    { policyId: owner.policy.policyId },
    owner.token,
  );
  await drain();
  expect(requestsTo('/hooks/rotate')).toHaveLength(1);
});

test("another owner, a consumer or anonymous caller cannot see or touch an owner's endpoints and deliveries", async () => {
  const owner = await newOwner();
  const stranger = await newOwner();
  const { endpoint } = await createEndpoint(owner, '/hooks/private', ['policy.changed']);
  await graphql(stack.url, PAUSE, { policyId: owner.policy.policyId }, owner.token);
  await drain();
  const [delivery] = await deliveries(owner, endpoint.id);

  expect(
    (await graphql(stack.url, ENDPOINTS, {}, stranger.token)).body.data.webhookEndpoints,
  ).toEqual([]);
  const code = async (query: string, variables: Record<string, unknown>, token?: string) =>
    (await graphql(stack.url, query, variables, token)).body.errors?.[0]?.extensions?.code;
  expect(await code(DELIVERIES, { endpointId: endpoint.id }, stranger.token)).toBe(
    'WEBHOOK_ENDPOINT_NOT_FOUND',
  );
  expect(await code(ROTATE, { id: endpoint.id }, stranger.token)).toBe(
    'WEBHOOK_ENDPOINT_NOT_FOUND',
  );
  expect(await code(DISABLE, { id: endpoint.id }, stranger.token)).toBe(
    'WEBHOOK_ENDPOINT_NOT_FOUND',
  );
  expect(await code(REDELIVER, { id: delivery!.id }, stranger.token)).toBe(
    'WEBHOOK_DELIVERY_NOT_FOUND',
  );
  expect(await code(ENDPOINTS, {})).toBe('AUTH_REQUIRED');
  expect(await code(ENDPOINTS, {}, stack.adminToken)).toBe('FORBIDDEN');
  // A stranger's endpoint may not name the owner's policy.
  expect(
    await code(
      CREATE,
      {
        input: {
          url: `${receiver.url}/x`,
          events: ['policy.changed'],
          policyIds: [owner.policy.policyId],
        },
      },
      stranger.token,
    ),
  ).toBe('REQUEST_INVALID');
  expect((await graphql(stack.url, ENDPOINTS, {}, owner.token)).body.data.webhookEndpoints).toEqual(
    [{ id: endpoint.id, url: `${receiver.url}/hooks/private`, state: 'ACTIVE' }],
  );
});

test('endpoint input is checked: event types, URL shape', async () => {
  const owner = await newOwner();
  const refused = async (input: Record<string, unknown>) =>
    (await graphql(stack.url, CREATE, { input }, owner.token)).body.errors?.[0]?.extensions;
  expect(await refused({ url: `${receiver.url}/x`, events: ['payment.made'] })).toMatchObject({
    code: 'REQUEST_INVALID',
  });
  expect(await refused({ url: `${receiver.url}/x`, events: [] })).toMatchObject({
    code: 'REQUEST_INVALID',
  });
  expect(await refused({ url: 'ftp://127.0.0.1/x', events: ['policy.changed'] })).toMatchObject({
    code: 'REQUEST_INVALID',
  });
  expect(
    await refused({ url: 'http://user:pw@127.0.0.1/x', events: ['policy.changed'] }),
  ).toMatchObject({ code: 'REQUEST_INVALID' });
});
