// The consumer-intent outbox relay against a real database: each state change (written with its
// outbox row by the store's compare-and-set) becomes one `consumer_intent.state_changed` owner
// event with a delivery per matching endpoint, exactly once however often the relay runs, and
// nothing is recorded for an owner without an endpoint that wants it.
import { newConsumerIntentId } from '../../../../core/canon/ids';
import { createTestDatabase, type TestDatabase } from '../../../../platform/db/testDb';
import { createWebhookEndpoint } from '../../../policy/webhooks/writes';
import { intentTestKit } from '../../test-support';
import { insertConsumerIntent } from '../store';
import { transitionConsumerIntent } from '../transition';
import { relayConsumerIntentEvents } from './ownerEvents';

let db: TestDatabase;
const t0 = new Date('2026-11-24T10:00:00Z');
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function intentOf(policyId: string) {
  const { row } = await insertConsumerIntent(db.pool, {
    intentId: newConsumerIntentId(),
    policyId,
    wallet: '0x' + 'ab'.repeat(20),
    capability: 'domains.check',
    provider: 'spendctl-domains',
    category: 'domains',
    params: { domain: 'example.test' },
    idempotencyKey: null,
    now: t0,
  });
  return row;
}

test('every consumer intent state change becomes one signed-event delivery per matching endpoint, once', async () => {
  const kit = intentTestKit(db, () => t0.getTime());
  const watched = await kit.newPolicy();
  const unwatched = await kit.newPolicy();
  const owner = await db.pool.query<{ owner: string }>(
    'SELECT owner FROM policy.policies WHERE policy_id = $1::numeric',
    [watched.policyId],
  );
  const { endpoint } = await createWebhookEndpoint(kit.ctx, owner.rows[0]!.owner, {
    url: 'https://hooks.example.com/spend',
    events: ['consumer_intent.state_changed'],
    policyIds: [],
  });
  const intent = await intentOf(watched.policyId);
  await intentOf(unwatched.policyId);
  await transitionConsumerIntent(db.pool, intent.intentId, 'CREATED', 'QUOTED', {
    now: new Date(t0.getTime() + 1000),
  });

  expect(await relayConsumerIntentEvents(db.pool, t0)).toBe(3);
  expect(await relayConsumerIntentEvents(db.pool, t0)).toBe(0);

  const events = await db.pool.query<{ type: string; data: Record<string, unknown> }>(
    `SELECT ev.type, ev.data FROM policy.owner_events ev
       JOIN policy.webhook_deliveries d ON d.event_id = ev.event_id
      WHERE d.endpoint_id = $1 AND d.state = 'PENDING' ORDER BY ev.occurred_at`,
    [endpoint.endpointId],
  );
  expect(events.rows).toEqual([
    {
      type: 'consumer_intent.state_changed',
      data: expect.objectContaining({
        intentId: intent.intentId,
        from: null,
        to: 'CREATED',
        stateVersion: 1,
      }),
    },
    {
      type: 'consumer_intent.state_changed',
      data: expect.objectContaining({
        intentId: intent.intentId,
        from: 'CREATED',
        to: 'QUOTED',
        stateVersion: 2,
      }),
    },
  ]);
  const unpublished = await db.pool.query(
    'SELECT 1 FROM intent.consumer_intent_events WHERE published_at IS NULL',
  );
  expect(unpublished.rowCount).toBe(0);
});
