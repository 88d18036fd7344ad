// What an operator and an owner see of a paid preflight and a whole purchase (issue #31): the
// gateway's /metrics counts them in the business series (decisions, paid calls and their amounts
// in atomic units, ledger groups, intent transitions), scraped before and after through HTTP; and
// the owner's webhook endpoint, a real HTTP receiver on 127.0.0.1, gets each
// `consumer_intent.state_changed` and each `receipt.anchored` exactly once, signed with the
// endpoint's secret. Real anvil chains, the devnet merchant and RDAP registry, the official x402
// client, worker rounds stepped by hand.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  EVENT_ID_HEADER,
  EVENT_SIGNATURE_HEADER,
  verifyEventSignature,
} from '../../channels/ownerEvents';
import { startWebhookReceiver, type WebhookReceiver } from '../../devnet/peers/webhookReceiver';
import { type ExamplePolicy, preflightExample } from '../../sdk/examples/preflight';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { purchase, untilIntent } from '../support/purchases';
import { graphql } from '../support/stack';

let world: ConsumerWorld;
let receiver: WebhookReceiver;

const CREATE = `mutation ($input: WebhookEndpointInput!) {
  createWebhookEndpoint(input: $input) { endpoint { id } secret }
}`;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  world = await startConsumerWorld({
    rdap: true,
    anchoring: { batchSize: 64, batchSeconds: 0 },
    stack: {
      escalationWorker: {
        adapters: {},
        dashboardBaseUrl: 'http://127.0.0.1/dashboard',
        intervalMs: 0,
      },
    },
  });
}, 120_000);

afterAll(async () => {
  await world?.stop();
  await receiver?.stop();
});

/** One sample per series and label set of a Prometheus text exposition. */
async function scrape(): Promise<Map<string, number>> {
  const response = await fetch(`${world.stack.url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  const samples = new Map<string, number>();
  for (const line of (await response.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

/** The samples whose value changed between two scrapes, by series and labels. */
function changes(before: Map<string, number>, after: Map<string, number>, prefix: string) {
  const changed: Record<string, number> = {};
  for (const [key, value] of after) {
    if (!key.startsWith(prefix)) continue;
    const delta = value - (before.get(key) ?? 0);
    if (delta !== 0) changed[key] = delta;
  }
  return changed;
}

async function consumerWithPolicy(): Promise<{
  who: TestConsumer;
  policy: ExamplePolicy;
  key: `0x${string}`;
}> {
  const key = generatePrivateKey();
  const who = await newConsumer(world.stack, world.devnet, {
    mintAtomic: 10_000_000n,
    account: privateKeyToAccount(key),
    policy: { categories: { allow: ['market-data', 'domains'], deny: [] } },
  });
  const funding = world.devnet.info.chains.funding;
  return {
    who,
    key,
    policy: { ...who.policy, network: funding.caip2, token: funding.token.address.toLowerCase() },
  };
}

test('/metrics after a paid preflight and a purchase counts them exactly in the business series', async () => {
  const { who, policy, key } = await consumerWithPolicy();
  const before = await scrape();

  const { decision } = await preflightExample({
    baseUrl: world.stack.url,
    agentKey: key,
    policy,
  });
  expect(decision).toMatchObject({ decision: 'APPROVED' });
  const intentId = await purchase(world, who, 'taken.test');
  const done = await untilIntent(world, intentId, (row) => row.state === 'COMPLETED');
  expect(done.state).toBe('COMPLETED');
  const funded = await world.stack.db.pool.query<{ amount: string; route: string }>(
    `SELECT amount::text, route FROM ledger.service_payments WHERE purpose = 'FUNDING' AND intent_ref = $1`,
    [intentId],
  );
  const [funding] = funded.rows;
  const transitions = await world.stack.db.pool.query<{ to_state: string; n: string }>(
    `SELECT to_state, count(*)::text AS n FROM intent.consumer_intent_events
      WHERE intent_id = $1 GROUP BY 1`,
    [intentId],
  );
  const after = await scrape();

  const asset = policy.token;
  expect(changes(before, after, 'spend_paid_')).toEqual({
    'spend_paid_calls_total{route="POST /preflight_payment",purpose="FEE"}': 1,
    [`spend_paid_atomic_total{route="POST /preflight_payment",purpose="FEE",asset="${asset}"}`]: 50_000,
    [`spend_paid_calls_total{route="${funding!.route}",purpose="FUNDING"}`]: 1,
    [`spend_paid_atomic_total{route="${funding!.route}",purpose="FUNDING",asset="${asset}"}`]:
      Number(funding!.amount),
  });
  const decisions = changes(before, after, 'spend_decisions_total');
  expect(Object.values(decisions).reduce((sum, n) => sum + n, 0)).toBe(2);
  expect(Object.keys(decisions).every((key) => key.includes('outcome="APPROVED"'))).toBe(true);
  expect(changes(before, after, 'spend_consumer_intent_transitions_total')).toEqual(
    Object.fromEntries(
      transitions.rows.map((row) => [
        `spend_consumer_intent_transitions_total{state="${row.to_state}"}`,
        Number(row.n),
      ]),
    ),
  );
  const groups = changes(before, after, 'spend_ledger_groups_total');
  expect(groups['spend_ledger_groups_total{kind="SERVICE_FEE"}']).toBe(1);
  expect(groups['spend_ledger_groups_total{kind="FUNDING"}']).toBe(1);
  expect(changes(before, after, 'spend_settlement_seconds_count{outcome="success"}')).toEqual({
    'spend_settlement_seconds_count{outcome="success"}': 2,
  });
  expect(after.get('spend_pool_waiters')).toBe(0);
  expect(after.has('spend_anchoring_lag_seconds')).toBe(true);
  expect(after.has('spend_escalations_pending{age="over_1h"}')).toBe(true);
}, 120_000);

/** Runs escalation-worker rounds until a round attempts no webhook. */
async function drainWebhooks(): Promise<void> {
  for (let round = 0; round < 10; round += 1) {
    const result = await world.stack.stack.worker!.runOnce();
    if (result.webhooksAttempted === 0 && result.ownerEventsRelayed === 0) return;
  }
  throw new Error('webhook deliveries did not drain in 10 rounds');
}

function signedBodies(path: string, secret: string) {
  return receiver.requests
    .filter((request) => request.path === path)
    .map((request) => {
      const body = JSON.parse(request.rawBody) as { id: string; type: string; data: any };
      expect(request.headers[EVENT_ID_HEADER]).toBe(body.id);
      const check = { header: request.headers[EVENT_SIGNATURE_HEADER], rawBody: request.rawBody };
      expect(verifyEventSignature({ ...check, secret, now: new Date() })).toBe(true);
      expect(verifyEventSignature({ ...check, secret: 'f'.repeat(64), now: new Date() })).toBe(
        false,
      );
      return body;
    });
}

test('the owner’s endpoint gets each consumer_intent.state_changed of a purchase through to COMPLETED and each receipt.anchored of the anchoring run, once, signed', async () => {
  const { who } = await consumerWithPolicy();
  const created = await graphql(
    world.stack.url,
    CREATE,
    {
      input: {
        url: `${receiver.url}/hooks/purchase`,
        events: ['consumer_intent.state_changed', 'receipt.anchored'],
      },
    },
    who.owner,
  );
  expect(created.body.errors).toBeUndefined();
  const secret = created.body.data.createWebhookEndpoint.secret as string;

  const intentId = await purchase(world, who, 'taken.test');
  await untilIntent(world, intentId, (row) => row.state === 'COMPLETED');
  await drainWebhooks();
  const changes = await world.stack.db.pool.query<{ from: string | null; to: string }>(
    `SELECT from_state AS from, to_state AS to FROM intent.consumer_intent_events
      WHERE intent_id = $1 ORDER BY event_id`,
    [intentId],
  );
  expect(changes.rows.at(-1)!.to).toBe('COMPLETED');
  const stateChanged = signedBodies('/hooks/purchase', secret);
  expect(stateChanged.every((body) => body.type === 'consumer_intent.state_changed')).toBe(true);
  expect(new Set(stateChanged.map((body) => body.id)).size).toBe(stateChanged.length);
  expect(
    stateChanged
      .map((body) => ({ from: body.data.from, to: body.data.to }))
      .sort((a, b) => `${a.from}>${a.to}`.localeCompare(`${b.from}>${b.to}`)),
  ).toEqual(
    [...changes.rows].sort((a, b) => `${a.from}>${a.to}`.localeCompare(`${b.from}>${b.to}`)),
  );
  for (const body of stateChanged)
    expect(body.data).toMatchObject({ intentId, policyId: who.policy.policyId });

  const round = await world.stack.stack.anchoring!.runOnce();
  expect(round).toMatchObject({ ran: true, failed: 0, sending: 0 });
  await drainWebhooks();
  await drainWebhooks();
  const owned = await world.stack.db.pool.query<{ receipt_id: string }>(
    `SELECT l.receipt_id FROM intent.anchor_leaves l
       JOIN intent.anchor_batches b ON b.batch_id = l.batch_id AND b.state = 'ANCHORED'
       LEFT JOIN intent.decision_receipts dr ON l.kind = 'decision' AND dr.receipt_id = l.receipt_id
       LEFT JOIN intent.decisions d ON d.decision_id = dr.decision_id
       LEFT JOIN intent.consumer_receipts cr ON l.kind = 'consumer' AND cr.receipt_id = l.receipt_id
       LEFT JOIN intent.consumer_intents c ON c.intent_id = cr.intent_id
      WHERE coalesce(d.policy_id, c.policy_id::text) = $1 ORDER BY 1`,
    [who.policy.policyId],
  );
  expect(owned.rows.length).toBeGreaterThanOrEqual(2);
  const anchored = signedBodies('/hooks/purchase', secret).filter(
    (body) => body.type === 'receipt.anchored',
  );
  expect(anchored.map((body) => body.data.receiptId as string).sort()).toEqual(
    owned.rows.map((row) => row.receipt_id),
  );
  for (const body of anchored)
    expect(body.data).toMatchObject({ state: 'ANCHORED', policyId: who.policy.policyId });
  // Nothing more arrives for the same changes on later rounds.
  const total = receiver.requests.filter((request) => request.path === '/hooks/purchase').length;
  await drainWebhooks();
  expect(receiver.requests.filter((request) => request.path === '/hooks/purchase')).toHaveLength(
    total,
  );
}, 120_000);
