// The policy's budgetWindow through the REST routes and GraphQL (issue #14 item 5): under UTC_DAY a
// reservation counts toward the UTC day it was approved, whenever it settles, so 1.00 at 23:59:59
// and 1.00 at 00:00:01 both fit a 1.00 daily budget; under ROLLING_24H the second is blocked, and
// a settlement stops counting exactly 24 hours after it settled. Unknown values are refused.
import { freshWireIntent, policyDocument } from '../../core/test-support/spend-fixtures';
import { consumeReservation } from '../../subgraphs/intent';
import { fundingPosting, registerFixtureAsset } from '../../subgraphs/intent/test-support';
import { graphql, postJson, startTestStack, type TestStack } from '../support/stack';

const OWNER = '0x1111111111111111111111111111111111111111';
const BEFORE_MIDNIGHT = Date.UTC(2026, 10, 22, 23, 59, 59);
const AFTER_MIDNIGHT = Date.UTC(2026, 10, 23, 0, 0, 1);
const SETTLED = Date.UTC(2026, 10, 23, 0, 0, 5);
let clockMs = BEFORE_MIDNIGHT;
let stack: TestStack;

interface Policy {
  policyId: string;
  policyHash: string;
}

beforeAll(async () => {
  stack = await startTestStack({ now: () => new Date(clockMs) });
  await registerFixtureAsset(stack.db.pool);
});

afterAll(async () => {
  await stack?.stop();
});

async function createPolicy(budgetWindow?: string): Promise<{ status: number; body: any }> {
  const limits = {
    dailyBudget: '1.00',
    perCallCap: '1.00',
    hardCap: '1.00',
    escalateAbove: '1.00',
  };
  return postJson(
    stack.url,
    '/create_spend_policy',
    {
      policy: policyDocument({
        owner: OWNER,
        ...limits,
        ...(budgetWindow === undefined ? {} : { budgetWindow }),
      }),
    },
    stack.adminToken,
  );
}

async function preflight(policy: Policy): Promise<any> {
  const answer = await postJson(stack.url, '/preflight_payment', {
    policyId: policy.policyId,
    intent: freshWireIntent(policy, clockMs, { amount: '1000000' }),
  });
  expect(answer.status).toBe(200);
  return answer.body;
}

const budgetEntry = (answer: any) => answer.ruleTrace[12];

async function settle(answer: any, policy: Policy): Promise<void> {
  const id = answer.reservation.reservationId as string;
  await consumeReservation(
    stack.db.pool,
    id,
    [fundingPosting(policy.policyId, 1_000_000n, `funding:${id}`)],
    () => new Date(clockMs),
  );
}

async function ledger(policy: Policy): Promise<any> {
  return (await postJson(stack.url, '/get_ledger', { policyId: policy.policyId }, stack.adminToken))
    .body;
}

test('an unknown budgetWindow is 400 POLICY_RULES_INVALID naming the field', async () => {
  for (const wrong of ['ROLLING_12H', 'utc_day']) {
    const refused = await createPolicy(wrong);
    expect([refused.status, refused.body.code]).toEqual([400, 'POLICY_RULES_INVALID']);
    expect(refused.body.details).toEqual([
      { field: 'budgetWindow', reason: 'must be one of UTC_DAY, ROLLING_24H' },
    ]);
  }
});

test('across midnight: UTC_DAY approves 1.00 at 23:59:59 and 1.00 at 00:00:01 (each counts toward the day it was approved); ROLLING_24H blocks the second', async () => {
  clockMs = BEFORE_MIDNIGHT;
  const created = {
    day: await createPolicy(),
    explicitDay: await createPolicy('UTC_DAY'),
    rolling: await createPolicy('ROLLING_24H'),
  };
  expect(created.explicitDay.body.policyHash).toBe(created.day.body.policyHash); // the default, written out or not
  expect(created.rolling.body.rules.budgetWindow).toBe('ROLLING_24H');
  expect('budgetWindow' in created.day.body.rules).toBe(false);
  const day: Policy = created.day.body;
  const rolling: Policy = created.rolling.body;

  const dayFirst = await preflight(day);
  const rollingFirst = await preflight(rolling);
  expect([dayFirst.decision, budgetEntry(dayFirst).note]).toEqual([
    'APPROVED',
    'UTC_DAY:2026-11-22',
  ]);
  expect([rollingFirst.decision, budgetEntry(rollingFirst).note]).toEqual([
    'APPROVED',
    'ROLLING_24H',
  ]);

  clockMs = AFTER_MIDNIGHT;
  const daySecond = await preflight(day);
  const rollingSecond = await preflight(rolling);
  expect([daySecond.decision, daySecond.reservation.day, budgetEntry(daySecond)]).toEqual([
    'APPROVED',
    '2026-11-23',
    {
      rule: 'budget.daily',
      result: 'PASS',
      observed: '1000000',
      limit: '1000000',
      note: 'UTC_DAY:2026-11-23',
    },
  ]);
  expect([rollingSecond.decision, budgetEntry(rollingSecond)]).toEqual([
    'BLOCKED_BUDGET',
    {
      rule: 'budget.daily',
      result: 'BLOCK',
      observed: '2000000',
      limit: '1000000',
      note: 'BLOCKED_BUDGET:ROLLING_24H',
    },
  ]);

  // Both of the day policy's reservations settle after midnight: the first still counts toward
  // 22 November, the day it was approved; 23 November sees only the second.
  clockMs = SETTLED;
  await settle(dayFirst, day);
  await settle(daySecond, day);
  expect(await ledger(day)).toMatchObject({
    day: '2026-11-23',
    budgetWindow: 'UTC_DAY',
    settledTodayAtomic: '1000000',
    reservedTodayAtomic: '0',
    remainingBudgetAtomic: '0',
  });
  const totals = await stack.db.pool.query(
    'SELECT day::text, consumed::text FROM intent.policy_day_totals WHERE policy_id = $1 ORDER BY day',
    [day.policyId],
  );
  expect(totals.rows).toEqual([
    { day: '2026-11-22', consumed: '1000000' },
    { day: '2026-11-23', consumed: '1000000' },
  ]);

  // The rolling policy's 1.00 settles at 00:00:05 and counts until exactly 24 hours later.
  await settle(rollingFirst, rolling);
  expect(await ledger(rolling)).toMatchObject({
    budgetWindow: 'ROLLING_24H',
    settledTodayAtomic: '1000000',
    reservedTodayAtomic: '0',
    remainingBudgetAtomic: '0',
  });
  clockMs = SETTLED + 86_400_000 - 1;
  expect((await preflight(rolling)).decision).toBe('BLOCKED_BUDGET');
  clockMs = SETTLED + 86_400_000;
  expect((await preflight(rolling)).decision).toBe('APPROVED');
});

test('GraphQL shows the window in limits, also when the rules leave the default out', async () => {
  const rolling: Policy = (await createPolicy('ROLLING_24H')).body;
  const day: Policy = (await createPolicy()).body;
  const query = 'query ($id: ID!) { policy(id: $id) { limits { dailyBudget budgetWindow } } }';
  const read = async (policy: Policy) =>
    (await graphql(stack.url, query, { id: policy.policyId }, stack.adminToken)).body.data.policy
      .limits;
  expect(await read(rolling)).toEqual({ dailyBudget: '1.00', budgetWindow: 'ROLLING_24H' });
  expect(await read(day)).toEqual({ dailyBudget: '1.00', budgetWindow: 'UTC_DAY' });
});
