// Idempotency-Key on REST POSTs, through the gateway as callers send it: the same key and body
// answer the stored status and body without running the route again, another body is 409
// IDEMPOTENCY_KEY_REUSED, a key still running is 409 IDEMPOTENCY_KEY_IN_FLIGHT with Retry-After,
// keys belong to their principal and last 24 hours. The consumer create takes the header as its
// body's idempotencyKey; a paid fund retried with its key is answered without a second payment.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { policyDocument } from '../../core/test-support/spend-fixtures';
import { readTokenBalance } from '../../platform/chain/tokens';
import { newConsumer } from '../support/consumers';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { fundingFetch } from '../support/purchases';

let world: ConsumerWorld;
let keys = 0;

beforeAll(async () => {
  world = await startConsumerWorld();
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

function freshKey(): string {
  keys += 1;
  return `key-${keys}-${Date.now().toString(36)}`;
}

async function post(
  path: string,
  body: unknown,
  options: { key?: string; token?: string } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${world.stack.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(options.key === undefined ? {} : { 'idempotency-key': options.key }),
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

function newPolicy(owner = privateKeyToAccount(generatePrivateKey()).address.toLowerCase()) {
  return { policy: policyDocument({ owner }) };
}

async function policiesOf(owner: string): Promise<number> {
  const result = await world.stack.db.pool.query<{ n: string }>(
    'SELECT count(DISTINCT policy_id) AS n FROM policy.policies WHERE owner = $1',
    [owner],
  );
  return Number(result.rows[0]!.n);
}

test('the same key and body answer the stored 201 and body (Idempotent-Replayed) and create nothing more', async () => {
  const key = freshKey();
  const body = newPolicy();
  const first = await post('/create_spend_policy', body, { key, token: world.stack.adminToken });
  const again = await post('/create_spend_policy', body, { key, token: world.stack.adminToken });

  expect(first.status).toBe(201);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  expect(again).toMatchObject({ status: 201, body: first.body });
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(again.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await policiesOf(body.policy.owner as string)).toBe(1);
});

test('the same key with another body is 409 IDEMPOTENCY_KEY_REUSED; without a key the same body creates again', async () => {
  const key = freshKey();
  const body = newPolicy();
  const admin = world.stack.adminToken;
  expect((await post('/create_spend_policy', body, { key, token: admin })).status).toBe(201);

  const other = await post('/create_spend_policy', newPolicy(), { key, token: admin });
  expect(other).toMatchObject({
    status: 409,
    body: { code: 'IDEMPOTENCY_KEY_REUSED', retryable: false },
  });

  expect((await post('/create_spend_policy', body, { token: admin })).status).toBe(201);
  expect(await policiesOf(body.policy.owner as string)).toBe(2);
});

test('a key still running is 409 IDEMPOTENCY_KEY_IN_FLIGHT with Retry-After; once its lease lapsed a retry takes it over', async () => {
  const key = freshKey();
  const body = newPolicy();
  const admin = world.stack.adminToken;
  const first = await post('/create_spend_policy', body, { key, token: admin });
  // As another replica holding the key would leave it: claimed, no answer yet.
  await world.stack.db.pool.query(
    `UPDATE gateway.idempotency_keys SET state = 'IN_FLIGHT', status = NULL, headers = NULL, body = NULL,
            lease_until = clock_timestamp() + interval '1 minute'
      WHERE principal = 'admin' AND idempotency_key = $1`,
    [key],
  );
  const running = await post('/create_spend_policy', body, { key, token: admin });
  expect(running).toMatchObject({
    status: 409,
    body: { code: 'IDEMPOTENCY_KEY_IN_FLIGHT', retryable: true, details: { retryAfterSeconds: 1 } },
  });
  expect(running.headers.get('retry-after')).toBe('1');

  await world.stack.db.pool.query(
    `UPDATE gateway.idempotency_keys SET lease_until = clock_timestamp() - interval '1 second'
      WHERE principal = 'admin' AND idempotency_key = $1`,
    [key],
  );
  const takenOver = await post('/create_spend_policy', body, { key, token: admin });
  expect(takenOver.status).toBe(201);
  expect(takenOver.body.policyId).not.toBe(first.body.policyId);
  const replay = await post('/create_spend_policy', body, { key, token: admin });
  expect(replay).toMatchObject({ status: 201, body: takenOver.body });
});

test('concurrent requests with one key run the route once: every other answer is the stored one or IN_FLIGHT', async () => {
  const key = freshKey();
  const body = newPolicy();
  const answers = await Promise.all(
    Array.from({ length: 6 }, () =>
      post('/create_spend_policy', body, { key, token: world.stack.adminToken }),
    ),
  );
  const created = answers.filter((answer) => answer.status === 201);
  expect(created.length).toBeGreaterThanOrEqual(1);
  for (const answer of created) expect(answer.body).toEqual(created[0]!.body);
  for (const answer of answers.filter((a) => a.status !== 201))
    expect(answer).toMatchObject({ status: 409, body: { code: 'IDEMPOTENCY_KEY_IN_FLIGHT' } });
  expect(await policiesOf(body.policy.owner as string)).toBe(1);
});

test('keys are kept 24 hours, belong to their principal, and an expired key is swept and starts afresh', async () => {
  const buyer = await newConsumer(world.stack, world.devnet);
  const other = await newConsumer(world.stack, world.devnet);
  const key = freshKey();
  const ask = { capability: 'domains.check', params: { domain: `keep-${keys}.test` } };
  const mine = await post('/consumer/intents', ask, { key, token: buyer.session });
  const theirs = await post('/consumer/intents', ask, { key, token: other.session });
  expect([mine.status, theirs.status]).toEqual([201, 201]);
  expect(theirs.body.intent.intentId).not.toBe(mine.body.intent.intentId);

  const kept = await world.stack.db.pool.query<{ principal: string; hours: string }>(
    `SELECT principal, extract(epoch FROM expires_at - created_at) / 3600 AS hours
       FROM gateway.idempotency_keys WHERE idempotency_key = $1 ORDER BY principal`,
    [key],
  );
  expect(kept.rows.map((row) => Number(row.hours))).toEqual([24, 24]);
  expect(kept.rows.map((row) => row.principal).sort()).toEqual(
    [
      `consumer:${buyer.account.address.toLowerCase()}:${buyer.policy.policyId}`,
      `consumer:${other.account.address.toLowerCase()}:${other.policy.policyId}`,
    ].sort(),
  );

  await world.stack.db.pool.query(
    `UPDATE gateway.idempotency_keys SET created_at = created_at - interval '25 hours',
            expires_at = expires_at - interval '25 hours' WHERE idempotency_key = $1`,
    [key],
  );
  const swept = await world.stack.db.pool.query<{ n: number }>(
    'SELECT gateway.sweep_idempotency_keys() AS n',
  );
  expect(swept.rows[0]!.n).toBeGreaterThanOrEqual(2);
  // The gateway's record is gone; a route without a record of its own runs the key afresh.
  const adminKey = freshKey();
  const admin = world.stack.adminToken;
  await post('/create_spend_policy', newPolicy(), { key: adminKey, token: admin });
  await world.stack.db.pool.query(
    `UPDATE gateway.idempotency_keys SET created_at = created_at - interval '25 hours',
            expires_at = expires_at - interval '25 hours' WHERE idempotency_key = $1`,
    [adminKey],
  );
  const afresh = await post('/create_spend_policy', newPolicy(), { key: adminKey, token: admin });
  expect(afresh.status).toBe(201);
  expect(afresh.headers.get('idempotent-replayed')).toBeNull();
});

test('the consumer create: the header stands for the body’s idempotencyKey, and the two must agree', async () => {
  const buyer = await newConsumer(world.stack, world.devnet);
  const key = freshKey();
  const ask = { capability: 'domains.check', params: { domain: `alias-${keys}.test` } };
  const byHeader = await post('/consumer/intents', ask, { key, token: buyer.session });
  expect(byHeader.status).toBe(201);
  // The route's own record holds the header's key: the body field alone finds the same intent.
  const byBody = await post(
    '/consumer/intents',
    { ...ask, idempotencyKey: key },
    { token: buyer.session },
  );
  expect(byBody.status).toBe(200);
  expect(byBody.body.intent.intentId).toBe(byHeader.body.intent.intentId);
  const both = await post(
    '/consumer/intents',
    { ...ask, idempotencyKey: key },
    { key, token: buyer.session },
  );
  // With the header too it is the header's request: its stored answer comes back.
  expect(both.headers.get('idempotent-replayed')).toBe('true');
  expect(both).toMatchObject({
    status: 201,
    body: { intent: { intentId: byHeader.body.intent.intentId } },
  });
  const differ = await post(
    '/consumer/intents',
    { ...ask, idempotencyKey: 'another-key' },
    { key, token: buyer.session },
  );
  expect(differ).toMatchObject({ status: 400, body: { code: 'IDEMPOTENCY_KEY_INVALID' } });
});

test('a paid fund retried with its key is answered from the record: the 402 is not stored, the payment is taken once', async () => {
  const buyer = await newConsumer(world.stack, world.devnet, { mintAtomic: 5_000_000n });
  const created = await post(
    '/consumer/intents',
    { capability: 'domains.check', params: { domain: `fund-${keys}.test` } },
    { key: freshKey(), token: buyer.session },
  );
  const intentId = created.body.intent.intentId as string;
  const key = freshKey();
  const path = `${world.stack.url}/consumer/intents/${intentId}/fund`;
  const init = {
    method: 'POST',
    headers: { authorization: `Bearer ${buyer.session}`, 'idempotency-key': key },
  };
  const balance = () =>
    readTokenBalance(world.fundingChain, world.rails.funding.token, buyer.account.address);
  const before = await balance();

  const paid = await fundingFetch(world, buyer.account)(path, init);
  const paidBody = await paid.json();
  const retried = await fetch(path, init);

  expect(paid.status).toBe(200);
  expect(retried.status).toBe(200);
  expect(retried.headers.get('idempotent-replayed')).toBe('true');
  expect(retried.headers.get('payment-response')).toBe(paid.headers.get('payment-response'));
  expect(await retried.json()).toEqual(paidBody);
  expect(before - (await balance())).toBe(BigInt(created.body.fundingRequest.amount));
});

test('refusals of the header: a malformed key is 400 IDEMPOTENCY_KEY_INVALID, an anonymous paid call 400 IDEMPOTENCY_KEY_UNSUPPORTED', async () => {
  const malformed = await post('/create_spend_policy', newPolicy(), {
    key: 'has space',
    token: world.stack.adminToken,
  });
  expect(malformed).toMatchObject({ status: 400, body: { code: 'IDEMPOTENCY_KEY_INVALID' } });
  const tooLong = await post('/create_spend_policy', newPolicy(), {
    key: 'k'.repeat(256),
    token: world.stack.adminToken,
  });
  expect(tooLong.body.code).toBe('IDEMPOTENCY_KEY_INVALID');
  const preflight = await post(
    '/preflight_payment',
    { policyId: '1', intentHash: `0x${'1'.repeat(64)}` },
    { key: freshKey() },
  );
  expect(preflight).toMatchObject({ status: 400, body: { code: 'IDEMPOTENCY_KEY_UNSUPPORTED' } });
});
