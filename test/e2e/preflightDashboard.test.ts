// The dashboard's GraphQL over preflight data: decisions by policy, decision code and time with
// cursor paging, one decision's trace, Policy.intents across subgraphs; admin sees all, an owner
// only their own policies.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { NOW_MS, freshWireIntent, policyDocument } from '../../core/test-support/spend-fixtures';
import { signIn } from '../support/siwe';
import { graphql, startTestStack, type TestStack, postJson } from '../support/stack';

const owner = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());
let clockMs = NOW_MS;
let stack: TestStack;
let policy: { policyId: string; policyHash: string };

function post(path: string, body: unknown, token?: string): Promise<{ status: number; body: any }> {
  return postJson(stack.url, path, body, token);
}

function intent(amount: string): Record<string, unknown> {
  return freshWireIntent(policy, clockMs, { amount });
}

const DECISIONS = `query ($p: ID!, $d: String, $from: DateTimeISO, $first: Int, $after: String) {
  spendDecisions(policyId: $p, decision: $d, from: $from, first: $first, after: $after) {
    nodes { id intentHash decision outcome evaluatedAt receiptId reservationState ruleTrace { rule result note } }
    pageInfo { endCursor hasNextPage } } }`;

beforeAll(async () => {
  stack = await startTestStack({ now: () => new Date(clockMs) });
  const created = await post(
    '/create_spend_policy',
    { policy: policyDocument({ owner: owner.address }) },
    stack.adminToken,
  );
  policy = { policyId: created.body.policyId, policyHash: created.body.policyHash };
  for (const amount of ['50000', '60000', '3000000']) {
    await post('/create_spend_intent', { policyId: policy.policyId, intent: intent(amount) });
    clockMs += 60_000;
  }
  for (const amount of ['70000', '3000000']) {
    await post('/preflight_payment', { policyId: policy.policyId, intent: intent(amount) });
    clockMs += 60_000;
  }
});

afterAll(async () => {
  await stack?.stop();
});

test('decisions page newest first with cursors, filter by code and time, and carry their trace', async () => {
  const page1 = await graphql(
    stack.url,
    DECISIONS,
    { p: policy.policyId, first: 1 },
    stack.adminToken,
  );
  expect(page1.body.errors).toBeUndefined();
  const first = page1.body.data.spendDecisions;
  expect(first.nodes.map((node: any) => node.decision)).toEqual(['BLOCKED_PER_CALL_CAP']);
  expect(first.pageInfo.hasNextPage).toBe(true);
  const page2 = await graphql(
    stack.url,
    DECISIONS,
    { p: policy.policyId, first: 5, after: first.pageInfo.endCursor },
    stack.adminToken,
  );
  const second = page2.body.data.spendDecisions;
  expect(second.nodes.map((node: any) => [node.decision, node.reservationState])).toEqual([
    ['APPROVED', 'ACTIVE'],
  ]);
  expect(second.pageInfo).toEqual({ endCursor: expect.any(String), hasNextPage: false });
  expect(second.nodes[0].ruleTrace).toHaveLength(14);

  const approved = await graphql(
    stack.url,
    DECISIONS,
    { p: policy.policyId, d: 'APPROVED' },
    stack.adminToken,
  );
  expect(approved.body.data.spendDecisions.nodes).toHaveLength(1);
  const late = await graphql(
    stack.url,
    DECISIONS,
    { p: policy.policyId, from: new Date(NOW_MS + 4 * 60_000).toISOString() },
    stack.adminToken,
  );
  expect(late.body.data.spendDecisions.nodes.map((node: any) => node.decision)).toEqual([
    'BLOCKED_PER_CALL_CAP',
  ]);

  const one = await graphql(
    stack.url,
    'query ($id: ID!) { spendDecision(id: $id) { decision decidingRule engineVersion ruleTrace { rule result observed limit note } } }',
    { id: first.nodes[0].id },
    stack.adminToken,
  );
  expect(one.body.data.spendDecision).toMatchObject({
    decision: 'BLOCKED_PER_CALL_CAP',
    decidingRule: 'perCall.cap',
  });
  expect(one.body.data.spendDecision.ruleTrace[11]).toEqual({
    rule: 'perCall.cap',
    result: 'BLOCK',
    observed: '3000000',
    limit: '2000000',
    note: 'BLOCKED_PER_CALL_CAP',
  });
});

test('Policy.intents joins the policy subgraph’s entity; owners see only their own policies', async () => {
  const query =
    'query ($id: ID!) { policy(id: $id) { id version intents(first: 2) { nodes { amountAtomic } pageInfo { hasNextPage } } } }';
  const admin = await graphql(stack.url, query, { id: policy.policyId }, stack.adminToken);
  expect(admin.body.errors).toBeUndefined();
  expect(admin.body.data.policy.intents).toEqual({
    nodes: [{ amountAtomic: '3000000' }, { amountAtomic: '70000' }],
    pageInfo: { hasNextPage: true },
  });

  const ownerSession = await signIn(stack.url, owner);
  const own = await graphql(stack.url, DECISIONS, { p: policy.policyId }, ownerSession);
  expect(own.body.data.spendDecisions.nodes).toHaveLength(2);
  const intents = await graphql(
    stack.url,
    'query ($p: ID!) { spendIntents(policyId: $p) { nodes { intentHash } } }',
    { p: policy.policyId },
    ownerSession,
  );
  // Three created with create_spend_intent, two bound by preflighting them directly.
  expect(intents.body.data.spendIntents.nodes).toHaveLength(5);

  const strangerSession = await signIn(stack.url, stranger);
  const refused = await graphql(stack.url, DECISIONS, { p: policy.policyId }, strangerSession);
  expect(refused.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  const anonymous = await graphql(stack.url, DECISIONS, { p: policy.policyId });
  expect(anonymous.body.errors?.[0]?.extensions?.code).toBe('AUTH_REQUIRED');
  const hidden = await graphql(
    stack.url,
    'query ($id: ID!) { spendDecision(id: $id) { decision } }',
    { id: '1' },
    strangerSession,
  );
  expect(hidden.body.data.spendDecision).toBeNull();
});
