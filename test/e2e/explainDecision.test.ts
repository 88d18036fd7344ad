// Explain a block through GraphQL: real preflights fill a day, then explainDecision answers, for a
// budget block, exactly the budget that approves it (what was on the books plus the amount) and
// that no per-call cap or escalation threshold would; for a category block, that allowing the
// category approves it; another owner is told POLICY_NOT_FOUND, as by policyWhatIf.
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
  owner: owner.address,
  dailyBudget: '4.00',
  perCallCap: '2.00',
  escalateAbove: '2.00',
  duplicates: { windowMinutes: 0, keys: ['itemHash'] },
});
const hashes: Record<string, string> = {};

async function preflight(
  amount: string,
  category: string,
): Promise<{ decision: string; intentHash: string }> {
  const answer = await postJson(stack.url, '/preflight_payment', {
    policyId: policy.policyId,
    intent: freshWireIntent(policy, clockMs, { amount, category }),
  });
  expect(answer.status).toBe(200);
  clockMs += 60_000;
  return answer.body;
}

const EXPLAIN = `query ($h: String!) {
  explainDecision(intentHash: $h) {
    intentHash decision currentDecision rebuiltInputs
    amounts { setting current approving approvingDisplay }
    category { category approves addToAllow removeFromDeny } } }`;

beforeAll(async () => {
  stack = await startTestStack({ now: () => new Date(clockMs) });
  const created = await postJson(
    stack.url,
    '/create_spend_policy',
    { policy: document },
    stack.adminToken,
  );
  policy = { policyId: created.body.policyId, policyHash: created.body.policyHash };
  expect((await preflight('1500000', 'market-data')).decision).toBe('APPROVED');
  expect((await preflight('1500000', 'market-data')).decision).toBe('APPROVED');
  const budget = await preflight('1500000', 'market-data');
  expect(budget.decision).toBe('BLOCKED_BUDGET');
  hashes.budget = budget.intentHash;
  const category = await preflight('500000', 'gambling');
  expect(category.decision).toBe('BLOCKED_CATEGORY');
  hashes.category = category.intentHash;
  ownerToken = await signIn(stack.url, owner);
  strangerToken = await signIn(stack.url, stranger);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

test('a budget block: the smallest approving budget is the day’s 3.00 plus the 1.50 asked; no cap or threshold helps', async () => {
  const answer = await graphql(stack.url, EXPLAIN, { h: hashes.budget }, ownerToken);
  expect(answer.body.errors).toBeUndefined();
  const explained = answer.body.data.explainDecision;
  expect(explained).toMatchObject({
    intentHash: hashes.budget,
    decision: 'BLOCKED_BUDGET',
    currentDecision: 'BLOCKED_BUDGET',
    rebuiltInputs: false,
  });
  expect(explained.amounts).toEqual([
    { setting: 'dailyBudget', current: '4000000', approving: '4500000', approvingDisplay: '4.50' },
    { setting: 'perCallCap', current: '2000000', approving: null, approvingDisplay: null },
    { setting: 'escalateAbove', current: '2000000', approving: null, approvingDisplay: null },
  ]);
  expect(explained.category).toEqual({
    category: 'market-data',
    approves: false,
    addToAllow: false,
    removeFromDeny: false,
  });
});

test('a category block: allowing the category approves it; no amount does', async () => {
  const answer = await graphql(stack.url, EXPLAIN, { h: hashes.category }, stack.adminToken);
  expect(answer.body.errors).toBeUndefined();
  const explained = answer.body.data.explainDecision;
  expect(explained.decision).toBe('BLOCKED_CATEGORY');
  expect(explained.category).toEqual({
    category: 'gambling',
    approves: true,
    addToAllow: true,
    removeFromDeny: false,
  });
  expect(explained.amounts.map((fix: any) => fix.approving)).toEqual([null, null, null]);
});

test('another owner, and an unknown hash, are told POLICY_NOT_FOUND', async () => {
  const stranger = await graphql(stack.url, EXPLAIN, { h: hashes.budget }, strangerToken);
  expect(stranger.body.data).toBeNull();
  expect((stranger.body.errors as any[])[0].extensions.code).toBe('POLICY_NOT_FOUND');
  const unknown = await graphql(stack.url, EXPLAIN, { h: `0x${'ab'.repeat(32)}` }, ownerToken);
  expect((unknown.body.errors as any[])[0].extensions.code).toBe('POLICY_NOT_FOUND');
});
