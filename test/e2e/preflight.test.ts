// create_spend_intent and preflight_payment end to end through the REST layer on a real database:
// every decision outcome of the fourteen rules produced by real stored state, the budget under 50
// concurrent preflights, reservations that stop counting at their deadline, and the input errors.
// The same budget under concurrency over HTTP subgraphs and on the decision thread
// (DECISION_THREAD=true) at the end.
import {
  NOW_MS,
  NOW_SECONDS,
  OTHER_ADDRESS,
  RECIPIENT,
  TOKEN,
  freshWireIntent,
  policyDocument,
} from '../../core/test-support/spend-fixtures';
import { RULE_IDS } from '../../core/engine';
import { formatIsoSeconds } from '../../core/validation/timestamp';
import { startTestStack, type TestStack, postJson } from '../support/stack';

const OWNER = '0x1111111111111111111111111111111111111111';
let clockMs = NOW_MS;
const now = (): Date => new Date(clockMs);
let stack: TestStack;

function post(path: string, body: unknown, token?: string): Promise<{ status: number; body: any }> {
  return postJson(stack.url, path, body, token);
}

interface Policy {
  policyId: string;
  policyHash: string;
}

async function createPolicy(overrides: Record<string, unknown> = {}): Promise<Policy> {
  const created = await post(
    '/create_spend_policy',
    { policy: policyDocument({ owner: OWNER, ...overrides }) },
    stack.adminToken,
  );
  expect(created.status).toBe(201);
  return { policyId: created.body.policyId, policyHash: created.body.policyHash };
}

/** Caps may not exceed the daily budget, so a small budget brings them down with it. */
function smallBudget(amount: string): Record<string, unknown> {
  return { dailyBudget: amount, perCallCap: amount, hardCap: amount, escalateAbove: amount };
}

/** A fresh intent (own nonce and item, so never a duplicate unless asked), deadline one hour after the clock. */
function intentFor(
  policy: Policy,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return freshWireIntent(policy, clockMs, overrides);
}

async function preflight(policy: Policy, intent: Record<string, unknown>): Promise<any> {
  const result = await post('/preflight_payment', { policyId: policy.policyId, intent });
  expect(result.status).toBe(200);
  return result.body;
}

beforeAll(async () => {
  stack = await startTestStack({ now });
});

afterAll(async () => {
  await stack?.stop();
});

beforeEach(() => {
  clockMs = NOW_MS;
});

describe('create_spend_intent', () => {
  it('binds and stores an intent, idempotently, and preflight accepts its hash', async () => {
    const policy = await createPolicy();
    const intent = intentFor(policy);
    const created = await post('/create_spend_intent', { policyId: policy.policyId, intent });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      intentHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      canonicalIntent: expect.objectContaining({
        policyId: policy.policyId,
        amount: '50000',
        recipient: RECIPIENT,
      }),
      policyId: policy.policyId,
      policyVersion: 1,
      onchain: null,
    });
    const again = await post('/create_spend_intent', { policyId: policy.policyId, intent });
    expect(again.body).toEqual(created.body);
    const decided = await post('/preflight_payment', {
      policyId: policy.policyId,
      intentHash: created.body.intentHash,
    });
    expect(decided.status).toBe(200);
    expect(decided.body.decision).toBe('APPROVED');
    expect(decided.body.intentHash).toBe(created.body.intentHash);
  });

  it('answers malformed intents with INTENT_MALFORMED and one reason per field', async () => {
    const policy = await createPolicy();
    const bad = intentFor(policy, { amount: '-1', recipient: 'nobody', surprise: true });
    for (const path of ['/create_spend_intent', '/preflight_payment']) {
      const result = await post(path, { policyId: policy.policyId, intent: bad });
      expect(result.status).toBe(400);
      expect(result.body.code).toBe('INTENT_MALFORMED');
      const fields = (result.body.details as Array<{ field: string }>)
        .map((detail) => detail.field)
        .sort();
      expect(fields).toEqual(expect.arrayContaining(['amount', 'recipient', 'surprise']));
      // Validation comes before anything else, so a missing policyId does not hide it.
      const noPolicy = await post(path, { intent: bad });
      expect([noPolicy.status, noPolicy.body.code]).toEqual([400, 'INTENT_MALFORMED']);
    }
    const notObject = await post('/preflight_payment', {
      policyId: policy.policyId,
      intent: 'hello',
    });
    expect([notObject.status, notObject.body.code]).toEqual([400, 'INTENT_MALFORMED']);
  });

  it('needs a policyId (POLICY_ID_REQUIRED) and knows only the intent hashes it stored (INTENT_NOT_FOUND)', async () => {
    const policy = await createPolicy();
    for (const path of ['/create_spend_intent', '/preflight_payment']) {
      const result = await post(path, { intent: intentFor(policy) });
      expect([result.status, result.body.code]).toEqual([400, 'POLICY_ID_REQUIRED']);
    }
    const unknown = await post('/preflight_payment', {
      policyId: policy.policyId,
      intentHash: `0x${'ab'.repeat(32)}`,
    });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'INTENT_NOT_FOUND']);
  });
});

describe('preflight_payment: one test per decision outcome', () => {
  it('APPROVED: the full response with 14 trace entries, a reservation and a receipt', async () => {
    const policy = await createPolicy();
    const body = await preflight(policy, intentFor(policy));
    expect(body).toEqual({
      decision: 'APPROVED',
      intentHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      policyId: policy.policyId,
      policyHash: policy.policyHash,
      policyVersion: 1,
      evaluatedAt: new Date(NOW_MS).toISOString(),
      engine: {
        version: expect.any(String),
        ruleManifestHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        ruleCount: 14,
      },
      ruleTrace: expect.any(Array),
      reservation: {
        reservationId: expect.stringMatching(/^rsv_[0-9a-f]{24}$/),
        state: 'ACTIVE',
        amountAtomic: '50000',
        asset: `eip155:196/erc20:${TOKEN}`,
        day: '2026-11-22',
        expiresAt: new Date(NOW_MS + 3_600_000).toISOString(),
      },
      escalation: null,
      receiptId: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect(body.ruleTrace.map((entry: { rule: string }) => entry.rule)).toEqual([...RULE_IDS]);
    expect(body.ruleTrace[6].note).toBe('VENDOR_SCORE_UNAVAILABLE');
    const stored = await stack.db.pool.query(
      'SELECT decision, jsonb_array_length(rule_trace) AS n FROM intent.decisions WHERE intent_hash = $1',
      [body.intentHash],
    );
    expect(stored.rows).toEqual([{ decision: 'APPROVED', n: 14 }]);
  });

  it('BLOCKED_POLICY_INACTIVE: an unknown policyId is a decision, not an error', async () => {
    const policy = await createPolicy();
    const unknown = { policyId: '12345', policyHash: policy.policyHash };
    const body = await preflight(unknown, intentFor(unknown));
    expect([body.decision, body.policyHash, body.policyVersion, body.reservation]).toEqual([
      'BLOCKED_POLICY_INACTIVE',
      null,
      null,
      null,
    ]);
    expect(body.ruleTrace[0].note).toBe('BLOCKED_POLICY_INACTIVE:NOT_FOUND');
    expect(body.ruleTrace).toHaveLength(14);
  });

  it('BLOCKED_POLICY_INACTIVE: a policy paused with /pause_policy, approved again after /resume_policy', async () => {
    const policy = await createPolicy();
    expect(
      (await post('/pause_policy', { policyId: policy.policyId }, stack.adminToken)).status,
    ).toBe(200);
    const paused = await preflight(policy, intentFor(policy));
    expect([paused.decision, paused.ruleTrace[0].note]).toEqual([
      'BLOCKED_POLICY_INACTIVE',
      'BLOCKED_POLICY_INACTIVE:PAUSED',
    ]);
    await post('/resume_policy', { policyId: policy.policyId }, stack.adminToken);
    expect((await preflight(policy, intentFor(policy))).decision).toBe('APPROVED');
  });

  it('BLOCKED_POLICY_INACTIVE: an expired policy', async () => {
    const policy = await createPolicy({ expiresAt: formatIsoSeconds(NOW_SECONDS + 7200) });
    clockMs = NOW_MS + 3 * 3_600_000;
    const body = await preflight(policy, intentFor(policy));
    expect([body.decision, body.ruleTrace[0].note]).toEqual([
      'BLOCKED_POLICY_INACTIVE',
      'BLOCKED_POLICY_INACTIVE:EXPIRED',
    ]);
  });

  it('BLOCKED_POLICY_MISMATCH: an intent committed to the hash that /update_policy replaced', async () => {
    const policy = await createPolicy();
    const updated = await post(
      '/update_policy',
      { policyId: policy.policyId, policy: policyDocument({ owner: OWNER, dailyBudget: '40.00' }) },
      stack.adminToken,
    );
    expect(updated.status).toBe(200);
    const stale = await preflight(policy, intentFor(policy));
    expect([stale.decision, stale.ruleTrace[0].note, stale.policyVersion]).toEqual([
      'BLOCKED_POLICY_MISMATCH',
      'BLOCKED_POLICY_MISMATCH:POLICY_HASH',
      2,
    ]);
    const fresh = { policyId: policy.policyId, policyHash: updated.body.policyHash };
    expect((await preflight(fresh, intentFor(fresh))).decision).toBe('APPROVED');
  });

  it('BLOCKED_DEADLINE: too far ahead, and passed for an intent stored earlier', async () => {
    const policy = await createPolicy();
    const far = await preflight(
      policy,
      intentFor(policy, { deadline: formatIsoSeconds(NOW_SECONDS + 2 * 86_400) }),
    );
    expect([far.decision, far.ruleTrace[1].note]).toEqual([
      'BLOCKED_DEADLINE',
      'BLOCKED_DEADLINE:TOO_FAR',
    ]);
    const created = await post('/create_spend_intent', {
      policyId: policy.policyId,
      intent: intentFor(policy),
    });
    clockMs = NOW_MS + 2 * 3_600_000;
    const passed = await post('/preflight_payment', {
      policyId: policy.policyId,
      intentHash: created.body.intentHash,
    });
    expect([passed.body.decision, passed.body.ruleTrace[1].note]).toEqual([
      'BLOCKED_DEADLINE',
      'BLOCKED_DEADLINE:PASSED',
    ]);
  });

  it('BLOCKED_ASSET: another token', async () => {
    const policy = await createPolicy();
    expect((await preflight(policy, intentFor(policy, { token: OTHER_ADDRESS }))).decision).toBe(
      'BLOCKED_ASSET',
    );
  });

  it('BLOCKED_CATEGORY: a category not on the allow list', async () => {
    const policy = await createPolicy();
    expect((await preflight(policy, intentFor(policy, { category: 'games' }))).decision).toBe(
      'BLOCKED_CATEGORY',
    );
  });

  it('BLOCKED_RECIPIENT: a denied recipient', async () => {
    const policy = await createPolicy({ recipients: { allow: [], deny: [RECIPIENT] } });
    expect((await preflight(policy, intentFor(policy))).decision).toBe('BLOCKED_RECIPIENT');
  });

  it('BLOCKED_AGENT: a denied agent', async () => {
    const policy = await createPolicy({ agents: { allow: [], deny: ['research-bot-1'] } });
    expect((await preflight(policy, intentFor(policy))).decision).toBe('BLOCKED_AGENT');
  });

  it('BLOCKED_VENDOR_RISK and ESCALATED_VENDOR_RISK: no vendor score, as the policy says', async () => {
    const blocking = await createPolicy({
      vendorRisk: { minScore: 50, onBelow: 'ESCALATE', onUnavailable: 'BLOCK' },
    });
    const blocked = await preflight(blocking, intentFor(blocking));
    expect([blocked.decision, blocked.ruleTrace[6].note]).toEqual([
      'BLOCKED_VENDOR_RISK',
      'BLOCKED_VENDOR_RISK:SCORE_UNAVAILABLE',
    ]);
    const escalating = await createPolicy({
      vendorRisk: { minScore: 50, onBelow: 'ESCALATE', onUnavailable: 'ESCALATE' },
    });
    const escalated = await preflight(escalating, intentFor(escalating));
    expect([escalated.decision, escalated.reservation]).toEqual(['ESCALATED_VENDOR_RISK', null]);
    expect(escalated.escalation.pollRef).toMatch(/^esc_[0-9a-f]{24}$/);
  });

  it('BLOCKED_DUPLICATE: the same key tuple as an earlier approved intent, until the window ends', async () => {
    const policy = await createPolicy({
      duplicates: { windowMinutes: 30, keys: ['capability', 'recipient', 'amount', 'itemHash'] },
    });
    const first = intentFor(policy);
    const approved = await preflight(policy, first);
    expect(approved.decision).toBe('APPROVED');
    const again = await preflight(policy, { ...first, nonce: '999999' });
    expect([again.decision, again.ruleTrace[7].observed]).toEqual([
      'BLOCKED_DUPLICATE',
      approved.intentHash,
    ]);
    clockMs = NOW_MS + 31 * 60_000;
    expect(
      (
        await preflight(policy, {
          ...first,
          nonce: '999998',
          deadline: formatIsoSeconds(NOW_SECONDS + 7200),
        })
      ).decision,
    ).toBe('APPROVED');
  });

  it('BLOCKED_COOLDOWN: a second call to the same provider inside the cooldown', async () => {
    const policy = await createPolicy({ cooldowns: { sameServiceMinutes: 10 } });
    expect((await preflight(policy, intentFor(policy))).decision).toBe('APPROVED');
    clockMs = NOW_MS + 5 * 60_000;
    const cooling = await preflight(policy, intentFor(policy));
    expect([cooling.decision, cooling.ruleTrace[8].observed, cooling.ruleTrace[8].limit]).toEqual([
      'BLOCKED_COOLDOWN',
      '300',
      '600',
    ]);
    expect(
      (await preflight(policy, intentFor(policy, { provider: 'other.vendor.example' }))).decision,
    ).toBe('APPROVED');
    clockMs = NOW_MS + 10 * 60_000;
    expect((await preflight(policy, intentFor(policy))).decision).toBe('APPROVED');
  });

  it('BLOCKED_RATE: the hour’s calls used up by earlier approvals', async () => {
    const policy = await createPolicy({ rateLimit: { callsPerHour: 2 } });
    expect((await preflight(policy, intentFor(policy))).decision).toBe('APPROVED');
    expect((await preflight(policy, intentFor(policy))).decision).toBe('APPROVED');
    const third = await preflight(policy, intentFor(policy));
    expect([third.decision, third.ruleTrace[9].observed]).toEqual(['BLOCKED_RATE', '3']);
    clockMs = NOW_MS + 3_600_000;
    expect((await preflight(policy, intentFor(policy))).decision).toBe('APPROVED');
  });

  it('BLOCKED_HARD_CAP: one atomic unit above the hard cap', async () => {
    const policy = await createPolicy();
    expect((await preflight(policy, intentFor(policy, { amount: '10000001' }))).decision).toBe(
      'BLOCKED_HARD_CAP',
    );
  });

  it('BLOCKED_PER_CALL_CAP and ESCALATED_PER_CALL_CAP, as the policy says', async () => {
    const blocking = await createPolicy();
    expect((await preflight(blocking, intentFor(blocking, { amount: '3000000' }))).decision).toBe(
      'BLOCKED_PER_CALL_CAP',
    );
    const escalating = await createPolicy({ onPerCallCapExceeded: 'ESCALATE' });
    expect(
      (await preflight(escalating, intentFor(escalating, { amount: '3000000' }))).decision,
    ).toBe('ESCALATED_PER_CALL_CAP');
  });

  it('BLOCKED_BUDGET: the day’s budget used by earlier approvals; a new UTC day starts afresh', async () => {
    const policy = await createPolicy(smallBudget('0.10'));
    expect((await preflight(policy, intentFor(policy))).decision).toBe('APPROVED');
    expect((await preflight(policy, intentFor(policy))).decision).toBe('APPROVED');
    const over = await preflight(policy, intentFor(policy));
    expect([over.decision, over.ruleTrace[12].observed, over.ruleTrace[12].limit]).toEqual([
      'BLOCKED_BUDGET',
      '150000',
      '100000',
    ]);
    clockMs = Date.UTC(2026, 10, 23, 0, 0, 1);
    expect((await preflight(policy, intentFor(policy))).decision).toBe('APPROVED');
  });

  it('ESCALATED_THRESHOLD: above escalateAbove, no reservation, an escalation to poll', async () => {
    const policy = await createPolicy();
    const body = await preflight(policy, intentFor(policy, { amount: '1500000' }));
    expect([body.decision, body.reservation]).toEqual(['ESCALATED_THRESHOLD', null]);
    expect(body.escalation).toEqual({
      pollRef: expect.stringMatching(/^esc_[0-9a-f]{24}$/),
      expiresAt: new Date(clockMs + 30 * 60_000).toISOString(),
      pollUrl: `/escalation_status/${body.escalation.pollRef}`,
    });
  });
});

describe('preflight_payment: the budget under concurrency', () => {
  it('50 concurrent preflights approve exactly floor(budget / amount) and block the rest', async () => {
    const policy = await createPolicy(smallBudget('1.00'));
    const intents = Array.from({ length: 50 }, () => intentFor(policy, { amount: '30000' }));
    const bodies = await Promise.all(intents.map((intent) => preflight(policy, intent)));
    const count = (decision: string) => bodies.filter((body) => body.decision === decision).length;
    expect(count('APPROVED')).toBe(33);
    expect(count('BLOCKED_BUDGET')).toBe(17);
    const reserved = await stack.db.pool.query(
      `SELECT sum(amount)::text AS total, count(*)::int AS n FROM intent.reservations WHERE policy_id = $1 AND state = 'ACTIVE'`,
      [policy.policyId],
    );
    expect(reserved.rows[0]).toEqual({ total: '990000', n: 33 });
  });

  it('a reservation past its deadline stops counting at once', async () => {
    const policy = await createPolicy(smallBudget('0.10'));
    const shortLived = intentFor(policy, {
      amount: '100000',
      deadline: formatIsoSeconds(NOW_SECONDS + 600),
    });
    expect((await preflight(policy, shortLived)).decision).toBe('APPROVED');
    expect((await preflight(policy, intentFor(policy))).decision).toBe('BLOCKED_BUDGET');
    clockMs = NOW_MS + 600_000;
    expect((await preflight(policy, intentFor(policy))).decision).toBe('APPROVED');
  });
});

/** Runs the enclosing describe block's tests against a stack of their own, started with these options. */
function onOwnStack(options: Parameters<typeof startTestStack>[0]): void {
  let own: TestStack;
  let outer: TestStack;
  beforeAll(async () => {
    own = await startTestStack({ now, ...options });
    outer = stack;
    stack = own;
  });
  afterAll(async () => {
    stack = outer;
    await own?.stop();
  });
}

describe('preflight_payment over HTTP subgraphs', () => {
  onOwnStack({ transport: 'http' });

  it('holds the budget under 50 concurrent preflights as well', async () => {
    const policy = await createPolicy(smallBudget('0.50'));
    const intents = Array.from({ length: 50 }, () => intentFor(policy, { amount: '70000' }));
    const bodies = await Promise.all(intents.map((intent) => preflight(policy, intent)));
    expect(bodies.filter((body) => body.decision === 'APPROVED')).toHaveLength(7);
    expect(bodies.filter((body) => body.decision === 'BLOCKED_BUDGET')).toHaveLength(43);
  });
});

describe('preflight_payment on the decision thread (DECISION_THREAD=true)', () => {
  onOwnStack({ decisionThread: true });

  it('holds the budget under 50 concurrent preflights, with the test clock of the caller', async () => {
    const policy = await createPolicy(smallBudget('0.50'));
    const intents = Array.from({ length: 50 }, () =>
      intentFor(policy, { amount: '70000', deadline: formatIsoSeconds(NOW_SECONDS + 600) }),
    );
    const bodies = await Promise.all(intents.map((intent) => preflight(policy, intent)));
    expect(bodies.filter((body) => body.decision === 'APPROVED')).toHaveLength(7);
    expect(bodies.filter((body) => body.decision === 'BLOCKED_BUDGET')).toHaveLength(43);
    expect(new Set(bodies.map((body) => body.evaluatedAt))).toEqual(
      new Set([new Date(NOW_MS).toISOString()]),
    );
    // The reservations expire with their deadline on the caller's clock: the budget is free again.
    clockMs = NOW_MS + 600_000;
    expect((await preflight(policy, intentFor(policy, { amount: '70000' }))).decision).toBe(
      'APPROVED',
    );
  });

  it('answers input errors with their codes from the thread', async () => {
    const policy = await createPolicy();
    const malformed = await post('/preflight_payment', {
      policyId: policy.policyId,
      intent: { ...intentFor(policy), amount: '-1' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('INTENT_MALFORMED');
    const unknown = await post('/preflight_payment', {
      policyId: policy.policyId,
      intentHash: `0x${'cd'.repeat(32)}`,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('INTENT_NOT_FOUND');
  });
});
