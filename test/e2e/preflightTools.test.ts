// The read-side agent tools end to end: detect_duplicate, get_ledger (who may read it),
// receipt_status and log_receipt, and redact_payment_metadata.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { NOW_MS, freshWireIntent, policyDocument } from '../../core/test-support/spend-fixtures';
import { hashJson } from '../../core/canon/jcs';
import { signIn } from '../support/siwe';
import { startTestStack, type TestStack } from '../support/stack';

const owner = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());
let clockMs = NOW_MS;
let stack: TestStack;

async function call(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  token?: string,
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${stack.url}${path}`, {
    method,
    headers: {
      'content-type': 'application/json',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

function intentFor(
  policy: { policyId: string; policyHash: string },
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return freshWireIntent(policy, clockMs, overrides, { description: 'candles', params: {} });
}

let policy: { policyId: string; policyHash: string };

beforeAll(async () => {
  stack = await startTestStack({ now: () => new Date(clockMs) });
  const created = await call(
    'POST',
    '/create_spend_policy',
    {
      policy: policyDocument({
        owner: owner.address,
        duplicates: { windowMinutes: 30, keys: ['capability', 'recipient', 'amount', 'itemHash'] },
      }),
    },
    stack.adminToken,
  );
  expect(created.status).toBe(201);
  policy = { policyId: created.body.policyId, policyHash: created.body.policyHash };
});

afterAll(async () => {
  await stack?.stop();
});

test('detect_duplicate sees an approved intent with the same key tuple until the window ends', async () => {
  const intent = intentFor(policy);
  const before = await call('POST', '/detect_duplicate', { policyId: policy.policyId, intent });
  expect(before).toEqual({
    status: 200,
    body: { duplicate: false, priorIntentHash: null, windowRemainingSec: null, matchedOn: [] },
  });
  const approved = await call('POST', '/preflight_payment', { policyId: policy.policyId, intent });
  expect(approved.body.decision).toBe('APPROVED');
  clockMs += 10 * 60_000;
  const after = await call('POST', '/detect_duplicate', {
    policyId: policy.policyId,
    intent: { ...intent, nonce: '424242' },
  });
  expect(after.body).toEqual({
    duplicate: true,
    priorIntentHash: approved.body.intentHash,
    windowRemainingSec: 1200,
    matchedOn: ['amount', 'capability', 'itemHash', 'recipient'],
  });
  const malformed = await call('POST', '/detect_duplicate', {
    policyId: policy.policyId,
    intent: { ...intent, amount: 'x' },
  });
  expect([malformed.status, malformed.body.code]).toEqual([400, 'INTENT_MALFORMED']);
});

test('get_ledger: the window slice for admin, owner and the policy’s consumer session only', async () => {
  const ledger = await call('POST', '/get_ledger', { policyId: policy.policyId }, stack.adminToken);
  expect(ledger.status).toBe(200);
  expect(ledger.body).toMatchObject({
    policyId: policy.policyId,
    dailyBudgetAtomic: '25000000',
    settledTodayAtomic: '0',
    reservedTodayAtomic: '50000',
    effectiveUsageAtomic: '50000',
    remainingBudgetAtomic: '24950000',
    callsLastHour: 1,
    recentIntents: [
      expect.objectContaining({ amountAtomic: '50000', provider: 'api.vendor.example' }),
    ],
  });
  const ownerSession = await signIn(stack.url, owner);
  expect(
    (await call('POST', '/get_ledger', { policyId: policy.policyId }, ownerSession)).status,
  ).toBe(200);
  const consumerSession = await signIn(stack.url, owner, policy.policyId);
  expect(
    (await call('POST', '/get_ledger', { policyId: policy.policyId }, consumerSession)).status,
  ).toBe(200);
  const strangerSession = await signIn(stack.url, stranger);
  const refused = await call('POST', '/get_ledger', { policyId: policy.policyId }, strangerSession);
  expect([refused.status, refused.body.code]).toEqual([403, 'FORBIDDEN']);
  const anonymous = await call('POST', '/get_ledger', { policyId: policy.policyId });
  expect([anonymous.status, anonymous.body.code]).toEqual([401, 'AUTH_REQUIRED']);
});

test('receipt_status and log_receipt: PENDING for an issued receipt, NOT_FOUND, RECEIPT_ID_INVALID', async () => {
  const decided = await call('POST', '/preflight_payment', {
    policyId: policy.policyId,
    intent: intentFor(policy),
  });
  const { receiptId } = decided.body;
  expect(await call('GET', `/receipt_status/${receiptId}`)).toEqual({
    status: 200,
    body: { state: 'PENDING', receiptId },
  });
  expect(await call('POST', '/log_receipt', { receiptId })).toEqual({
    status: 200,
    body: { state: 'PENDING', receiptId },
  });
  const unknown = `0x${'cd'.repeat(32)}`;
  expect(await call('GET', `/receipt_status/${unknown}`)).toEqual({
    status: 200,
    body: { state: 'NOT_FOUND', receiptId: unknown },
  });
  for (const result of [
    await call('GET', '/receipt_status/0x1234'),
    await call('POST', '/log_receipt', { receiptId: 'nope' }),
  ]) {
    expect([result.status, result.body.code]).toEqual([400, 'RECEIPT_ID_INVALID']);
  }
});

test('redact_payment_metadata strips personal data and secrets and hashes the result', async () => {
  const result = await call('POST', '/redact_payment_metadata', {
    metadata: { buyer: 'alice@example.com', card: '4111 1111 1111 1111', sku: 'A-1' },
  });
  expect(result.status).toBe(200);
  expect(result.body).toEqual({
    redacted: { buyer: '[REDACTED:EMAIL]', card: '[REDACTED:CARD]', sku: 'A-1' },
    metadataHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
  });
});

test('redact_payment_metadata keeps a "__proto__" key as a key: redacted inside, hashed, never the copy’s prototype', async () => {
  const text =
    '{"metadata":{"order":{"__proto__":{"buyer":"alice@example.com","isAdmin":true},"sku":"A-1"}}}';
  const response = await fetch(`${stack.url}/redact_payment_metadata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: text,
  });
  expect(response.status).toBe(200);
  const answer = await response.text();
  expect(answer).toContain('"__proto__":{"buyer":"[REDACTED:EMAIL]","isAdmin":true}');
  const body = JSON.parse(answer);
  expect(Object.keys(body.redacted.order)).toEqual(['__proto__', 'sku']);
  expect(body.metadataHash).toBe(hashJson(body.redacted));
});
