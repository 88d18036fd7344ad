// The consumer intent store against a real database: the lifecycle table the migration seeded is
// the code's table row for row; a state change is a compare-and-set with one outbox row; the
// trigger refuses what the table does not list even when the UPDATE is written by hand.
import { newConsumerIntentId } from '../../../core/canon/ids';
import { lifecycleEdges } from '../../../core/consumer/lifecycle';
import { createTestDatabase, type TestDatabase } from '../../../platform/db/testDb';
import { getConsumerIntent, insertConsumerIntent } from './store';
import { transitionConsumerIntent } from './transition';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const WALLET = '0x' + 'ab'.repeat(20);
const t0 = new Date('2026-11-24T10:00:00Z');

async function newIntent(idempotencyKey: string | null = null) {
  return insertConsumerIntent(db.pool, {
    intentId: newConsumerIntentId(),
    policyId: '12345',
    wallet: WALLET.toUpperCase().replace('0X', '0x'),
    capability: 'domains.check',
    provider: 'spendctl-domains',
    category: 'domains',
    params: { domain: 'example.test' },
    idempotencyKey,
    now: t0,
  });
}

test('the database lifecycle table is the code table, row for row', async () => {
  const rows = await db.pool.query<{ from_state: string; to_state: string }>(
    'SELECT from_state, to_state FROM intent.consumer_intent_transitions',
  );
  const inDb = rows.rows.map((r) => `${r.from_state}>${r.to_state}`).sort();
  const inCode = lifecycleEdges()
    .map(([from, to]) => `${from}>${to}`)
    .sort();
  expect(inDb).toEqual(inCode);
});

test('a transition is a compare-and-set with one outbox row; losing it returns null', async () => {
  const { row } = await newIntent();
  expect(row.state).toBe('CREATED');
  expect(row.wallet).toBe(WALLET);
  const quoted = await transitionConsumerIntent(db.pool, row.intentId, 'CREATED', 'QUOTED', {
    now: new Date(t0.getTime() + 1000),
    changes: { fundingAmount: 50250n, quote: { quoteId: 'cq_' + '0'.repeat(18) } },
  });
  expect(quoted?.state).toBe('QUOTED');
  expect(quoted?.stateVersion).toBe(2);
  expect(quoted?.fundingAmount).toBe(50250n);
  // A second writer that also saw CREATED loses.
  const lost = await transitionConsumerIntent(db.pool, row.intentId, 'CREATED', 'CANCELLED', {
    now: t0,
  });
  expect(lost).toBeNull();
  const events = await db.pool.query(
    `SELECT type, from_state, to_state, state_version FROM intent.consumer_intent_events
      WHERE intent_id = $1 ORDER BY event_id`,
    [row.intentId],
  );
  expect(events.rows).toEqual([
    {
      type: 'consumer_intent.state_changed',
      from_state: null,
      to_state: 'CREATED',
      state_version: 1,
    },
    {
      type: 'consumer_intent.state_changed',
      from_state: 'CREATED',
      to_state: 'QUOTED',
      state_version: 2,
    },
  ]);
});

test('a move outside the table is 409 ILLEGAL_STATE_TRANSITION in code and in the database', async () => {
  const { row } = await newIntent();
  await expect(
    transitionConsumerIntent(db.pool, row.intentId, 'CREATED', 'FUNDED', { now: t0 }),
  ).rejects.toMatchObject({ code: 'ILLEGAL_STATE_TRANSITION' });
  // A hand-written UPDATE meets the trigger.
  await expect(
    db.pool.query(
      `UPDATE intent.consumer_intents SET state = 'FUNDED', state_version = state_version + 1
        WHERE intent_id = $1`,
      [row.intentId],
    ),
  ).rejects.toMatchObject({ code: 'IN004' });
  await expect(
    db.pool.query(`UPDATE intent.consumer_intents SET params = '{}' WHERE intent_id = $1`, [
      row.intentId,
    ]),
  ).rejects.toMatchObject({ code: 'IN004' });
  expect((await getConsumerIntent(db.pool, row.intentId))?.state).toBe('CREATED');
});

test('the same idempotency key on one policy gives the same intent', async () => {
  const first = await newIntent('key-1');
  const second = await newIntent('key-1');
  expect(first.created).toBe(true);
  expect(second.created).toBe(false);
  expect(second.row.intentId).toBe(first.row.intentId);
});

test('a stored leg that breaks its schema fails the read loudly: 500 CONSUMER_INTENT_LEG_INVALID naming the leg', async () => {
  const { row } = await newIntent();
  await db.pool.query('UPDATE intent.consumer_intents SET settlement = $2 WHERE intent_id = $1', [
    row.intentId,
    { txHash: '0x12', blockNumber: 13, groupId: 'lg_1' },
  ]);
  const read = getConsumerIntent(db.pool, row.intentId);
  await expect(read).rejects.toMatchObject({
    code: 'CONSUMER_INTENT_LEG_INVALID',
    status: 500,
    details: { intentId: row.intentId, leg: 'settlement', fields: ['txHash', 'blockNumber'] },
  });
});

test('a read gives the legs typed, every stored field kept', async () => {
  const { row } = await newIntent();
  const quote = { quoteId: 'cq_1', fee: '0', feeBps: 0, merchant: { payTo: WALLET }, extra: 'x' };
  const quoted = await transitionConsumerIntent(db.pool, row.intentId, 'CREATED', 'QUOTED', {
    now: t0,
    changes: { quote },
  });
  expect(quoted?.quote).toEqual(quote);
  expect((await getConsumerIntent(db.pool, row.intentId))?.quote).toEqual(quote);
  expect(quoted?.quote?.merchant?.payTo).toBe(WALLET);
});
