// Policy what-if through GraphQL and REST: a busy day of real preflights, then drafts replayed over
// it. A lower daily budget turns the day's later approvals into BLOCKED_BUDGET and lowers spend by
// exactly their amounts; adding a category unblocks exactly that category's intents; another
// owner's policy is not found; a range over 92 days is RANGE_TOO_LONG.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { NOW_MS, freshWireIntent, policyDocument } from '../../core/test-support/spend-fixtures';
import { signIn } from '../support/siwe';
import { graphql, startTestStack, type TestStack, postJson } from '../support/stack';

const owner = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());
let clockMs = NOW_MS;
let stack: TestStack;
let policy: { policyId: string; policyHash: string };
let ownerToken: string;
let strangerToken: string;
const document = policyDocument({
  dailyBudget: '25.00',
  escalateAbove: '2.00',
  duplicates: { windowMinutes: 0, keys: ['itemHash'] },
});

function post(path: string, body: unknown, token?: string): Promise<{ status: number; body: any }> {
  return postJson(stack.url, path, body, token);
}

function intent(amount: string, category: string): Record<string, unknown> {
  return freshWireIntent(policy, clockMs, { amount, category });
}

const WHAT_IF = `query ($p: ID!, $d: PolicyInput!, $from: DateTimeISO, $to: DateTimeISO, $first: Int, $after: String) {
  policyWhatIf(policyId: $p, draft: $d, from: $from, to: $to, first: $first, after: $after) {
    summary { before { approved escalated blocked spend } after { approved escalated blocked spend }
              byDay { day spendBefore spendAfter } }
    changed { totalCount nodes { intentHash decidedAt before after decidingRule trace { rule result observed limit note } }
              pageInfo { endCursor hasNextPage } }
    rebuiltInputs } }`;

const amounts: string[] = [];
const categories: string[] = [];

beforeAll(async () => {
  stack = await startTestStack({ now: () => new Date(clockMs) });
  const created = await post(
    '/create_spend_policy',
    { policy: { ...document, owner: owner.address } },
    stack.adminToken,
  );
  policy = { policyId: created.body.policyId, policyHash: created.body.policyHash };
  // A busy day: twelve purchases of 1.50, one category the policy does not allow among them.
  for (let i = 0; i < 12; i += 1) {
    const category = i % 4 === 3 ? 'gambling' : 'market-data';
    const answer = await post('/preflight_payment', {
      policyId: policy.policyId,
      intent: intent('1500000', category),
    });
    expect(answer.status).toBe(200);
    amounts.push('1500000');
    categories.push(category);
    clockMs += 60_000;
  }
  ownerToken = await signIn(stack.url, owner);
  strangerToken = await signIn(stack.url, stranger);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const range = () => ({
  from: new Date(NOW_MS - 3_600_000).toISOString(),
  to: new Date(clockMs).toISOString(),
});

test('GraphQL: a lower daily budget turns the later approvals of the day into BLOCKED_BUDGET and lowers spend by their amounts', async () => {
  const draft = { ...document, owner: owner.address, dailyBudget: '6.00' };
  const answer = await graphql(
    stack.url,
    WHAT_IF,
    { p: policy.policyId, d: draft, ...range(), first: 2 },
    ownerToken,
  );
  expect(answer.body.errors).toBeUndefined();
  const result = answer.body.data.policyWhatIf;
  // Nine market-data approvals of 1.50 (13.50); a 6.00 budget keeps the first four.
  expect(result.summary.before).toEqual({
    approved: 9,
    escalated: 0,
    blocked: 3,
    spend: '13500000',
  });
  expect(result.summary.after).toEqual({ approved: 4, escalated: 0, blocked: 8, spend: '6000000' });
  expect(result.summary.byDay).toEqual([
    {
      day: new Date(NOW_MS).toISOString().slice(0, 10),
      spendBefore: '13500000',
      spendAfter: '6000000',
    },
  ]);
  expect(result.changed.totalCount).toBe(5);
  expect(result.rebuiltInputs).toEqual([]);
  const nodes = [...result.changed.nodes];
  let page = result.changed.pageInfo;
  while (page.hasNextPage) {
    const next = await graphql(
      stack.url,
      WHAT_IF,
      { p: policy.policyId, d: draft, ...range(), first: 2, after: page.endCursor },
      ownerToken,
    );
    nodes.push(...next.body.data.policyWhatIf.changed.nodes);
    page = next.body.data.policyWhatIf.changed.pageInfo;
  }
  expect(nodes).toHaveLength(5);
  for (const node of nodes) {
    expect(node.before).toBe('APPROVED');
    expect(node.after).toBe('BLOCKED_BUDGET');
    expect(node.decidingRule).toBe('budget.daily');
    expect(node.trace[12]).toMatchObject({
      rule: 'budget.daily',
      result: 'BLOCK',
      limit: '6000000',
    });
  }
  // The changed ones are the day's last five approvals, in decision order.
  const times = nodes.map((node: any) => Date.parse(node.decidedAt));
  expect(times).toEqual([...times].sort((a, b) => a - b));
});

test('REST: adding a category unblocks exactly the intents of that category', async () => {
  const draft = {
    ...document,
    owner: owner.address,
    categories: { allow: ['market-data', 'security', 'research', 'gambling'], deny: [] },
  };
  const answer = await post(
    '/policy_what_if',
    { policyId: policy.policyId, draft, ...range() },
    ownerToken,
  );
  expect(answer.status).toBe(200);
  expect(answer.body.summary.before.blocked).toBe(3);
  expect(answer.body.summary.after).toEqual({
    approved: 12,
    escalated: 0,
    blocked: 0,
    spend: '18000000',
  });
  expect(answer.body.changed.nodes.map((node: any) => [node.before, node.after])).toEqual([
    ['BLOCKED_CATEGORY', 'APPROVED'],
    ['BLOCKED_CATEGORY', 'APPROVED'],
    ['BLOCKED_CATEGORY', 'APPROVED'],
  ]);
  expect(categories.filter((category) => category === 'gambling')).toHaveLength(3);
});

test('another owner’s policy is not found, by GraphQL and by REST', async () => {
  const draft = { ...document, owner: owner.address };
  const viaGraphql = await graphql(
    stack.url,
    WHAT_IF,
    { p: policy.policyId, d: draft, ...range() },
    strangerToken,
  );
  expect(viaGraphql.body.data).toBeNull();
  expect((viaGraphql.body.errors as any[])[0].extensions.code).toBe('POLICY_NOT_FOUND');
  const viaRest = await post(
    '/policy_what_if',
    { policyId: policy.policyId, draft },
    strangerToken,
  );
  expect(viaRest.status).toBe(404);
  expect(viaRest.body.code).toBe('POLICY_NOT_FOUND');
});

test('a range over 92 days is refused with RANGE_TOO_LONG', async () => {
  const draft = { ...document, owner: owner.address };
  const answer = await post(
    '/policy_what_if',
    {
      policyId: policy.policyId,
      draft,
      from: new Date(NOW_MS - 93 * 86_400_000).toISOString(),
      to: new Date(NOW_MS).toISOString(),
    },
    ownerToken,
  );
  expect(answer.status).toBe(400);
  expect(answer.body.code).toBe('RANGE_TOO_LONG');
  const viaGraphql = await graphql(
    stack.url,
    WHAT_IF,
    {
      p: policy.policyId,
      d: draft,
      from: new Date(NOW_MS - 93 * 86_400_000).toISOString(),
      to: new Date(NOW_MS).toISOString(),
    },
    ownerToken,
  );
  expect((viaGraphql.body.errors as any[])[0].extensions.code).toBe('RANGE_TOO_LONG');
});
