// Escalations end to end through the gateway, decided in the dashboard: preflight over the
// threshold opens one (idempotent per intentHash), the owner's websocket sees PENDING then the
// decision, the poll route follows, the approved intent preflights APPROVED exactly once, a changed
// amount escalates afresh; deny and expiry (test clock) never become approvals; an EIP-712
// signature must be the owner's; nobody else's socket ever sees the events.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { spendIntentMessage, spendIntentTypedData } from '../../core/canon/intent-hash';
import { NOW_MS } from '../../core/test-support/spend-fixtures';
import { validateSpendIntent } from '../../core/validation/intent';
import {
  createEscalatingPolicy,
  escalatingIntent,
  pollStatus,
  preflight,
  subscribeToEscalations,
  type TestPolicy,
  waitForEscalationSubscribers,
} from '../support/escalations';
import { signIn } from '../support/siwe';
import { graphql, startTestStack, type TestStack } from '../support/stack';

const owner = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());
let clockMs = NOW_MS;
let stack: TestStack;
let policy: TestPolicy;
let ownerToken: string;
let strangerToken: string;

const DECIDE = `mutation ($pollRef: ID!, $decision: EscalationDecision!, $signature: String) {
  decideEscalation(pollRef: $pollRef, decision: $decision, signature: $signature) { pollRef state outcome reason resolvedVia ownerSigned }
}`;
const ONE = `query ($pollRef: ID!) { escalation(pollRef: $pollRef) {
  pollRef state decision decidingRule ruleReason amountAtomic intent approvalUsed events { kind channel }
} }`;

function decide(token: string, pollRef: string, decision: 'APPROVE' | 'DENY', signature?: string) {
  return graphql(stack.url, DECIDE, { pollRef, decision, signature: signature ?? null }, token);
}

beforeAll(async () => {
  stack = await startTestStack({
    now: () => new Date(clockMs),
    escalationWorker: {
      adapters: {},
      dashboardBaseUrl: 'http://127.0.0.1/dashboard',
      intervalMs: 0,
    },
  });
  policy = await createEscalatingPolicy(stack, owner.address.toLowerCase());
  ownerToken = await signIn(stack.url, owner);
  strangerToken = await signIn(stack.url, stranger);
});

afterAll(async () => {
  await stack?.stop();
});

beforeEach(() => {
  clockMs = NOW_MS;
});

test('approval in the dashboard: PENDING then APPROVED on the owner’s socket and the poll route; the same intent then preflights APPROVED once', async () => {
  const socket = subscribeToEscalations(stack, ownerToken);
  try {
    await waitForEscalationSubscribers(stack, 1);
    const intent = escalatingIntent(policy, clockMs);
    const escalated = await preflight(stack, policy, intent);
    expect(escalated.decision).toBe('ESCALATED_THRESHOLD');
    expect(escalated.reservation).toBeNull();
    const { pollRef } = escalated.escalation;
    expect(escalated.escalation).toEqual({
      pollRef: expect.stringMatching(/^esc_[0-9a-f]{24}$/),
      expiresAt: new Date(NOW_MS + 30 * 60_000).toISOString(),
      pollUrl: `/escalation_status/${pollRef}`,
    });
    // Idempotent while open: the same intent finds the same escalation.
    const again = await preflight(stack, policy, intent);
    expect(again.escalation.pollRef).toBe(pollRef);

    await socket.waitFor((message) => message.pollRef === pollRef && message.state === 'PENDING');
    const pending = await pollStatus(stack, pollRef);
    expect(pending).toEqual({
      status: 200,
      body: {
        pollRef,
        state: 'PENDING',
        outcome: null,
        reason: null,
        intentHash: escalated.intentHash,
        policyId: policy.policyId,
        amount: '1500000',
        createdAt: new Date(NOW_MS).toISOString(),
        expiresAt: escalated.escalation.expiresAt,
        resolvedAt: null,
      },
    });

    clockMs += 60_000;
    const approved = await decide(ownerToken, pollRef, 'APPROVE');
    expect(approved.body.errors).toBeUndefined();
    expect(approved.body.data.decideEscalation).toEqual({
      pollRef,
      state: 'APPROVED',
      outcome: 'APPROVED',
      reason: 'OWNER_APPROVED',
      resolvedVia: 'dashboard',
      ownerSigned: false,
    });
    const pushed = await socket.waitFor(
      (message) => message.pollRef === pollRef && message.state === 'APPROVED',
    );
    expect(pushed).toMatchObject({ outcome: 'APPROVED', resolvedVia: 'dashboard' });
    const polled = await pollStatus(stack, pollRef);
    expect(polled.body).toMatchObject({
      state: 'APPROVED',
      outcome: 'APPROVED',
      reason: 'OWNER_APPROVED',
      resolvedAt: new Date(clockMs).toISOString(),
    });
    expect(Object.keys(polled.body).sort()).toEqual([
      'amount',
      'createdAt',
      'expiresAt',
      'intentHash',
      'outcome',
      'policyId',
      'pollRef',
      'reason',
      'resolvedAt',
      'state',
    ]);

    const bound = await preflight(stack, policy, intent);
    expect(bound.decision).toBe('APPROVED');
    expect(bound.escalation).toBeNull();
    expect(bound.reservation).toMatchObject({ state: 'ACTIVE', amountAtomic: '1500000' });
    expect(bound.ruleTrace[13]).toMatchObject({
      rule: 'escalate.aboveThreshold',
      result: 'PASS',
      note: `OWNER_APPROVED:${pollRef}`,
    });
    const record = await graphql(stack.url, ONE, { pollRef }, ownerToken);
    expect(record.body.data.escalation).toMatchObject({
      approvalUsed: true,
      decidingRule: 'escalate.aboveThreshold',
      amountAtomic: '1500000',
    });
    expect(record.body.data.escalation.events.map((event: { kind: string }) => event.kind)).toEqual(
      ['CREATED', 'APPROVED', 'APPROVAL_USED'],
    );

    // An approval is used once: the same intent again, while its reservation is active, is answered
    // with that one approval (same reservation and receipt; docs/engine.md "A repeated preflight"),
    // never a second approval or reservation.
    const twice = await preflight(stack, policy, intent);
    expect(twice).toEqual(bound);
    const afterRepeat = await graphql(stack.url, ONE, { pollRef }, ownerToken);
    expect(
      afterRepeat.body.data.escalation.events.map((event: { kind: string }) => event.kind),
    ).toEqual(['CREATED', 'APPROVED', 'APPROVAL_USED']);
    const reservations = await stack.db.pool.query(
      'SELECT count(*)::int AS n FROM intent.reservations WHERE intent_hash = $1',
      [bound.intentHash],
    );
    expect(reservations.rows[0].n).toBe(1);

    const changed = await preflight(stack, policy, { ...intent, amount: '1600000' });
    expect(changed.decision).toBe('ESCALATED_THRESHOLD');
    expect(changed.escalation.pollRef).not.toBe(pollRef);
  } finally {
    await socket.close();
  }
});

test('deny in the dashboard: DENIED, never an approval; the intent escalates afresh', async () => {
  const intent = escalatingIntent(policy, clockMs);
  const { escalation } = await preflight(stack, policy, intent);
  const denied = await decide(ownerToken, escalation.pollRef, 'DENY');
  expect(denied.body.data.decideEscalation).toMatchObject({
    state: 'DENIED',
    outcome: 'DENIED',
    reason: 'OWNER_DENIED',
  });
  expect((await pollStatus(stack, escalation.pollRef)).body).toMatchObject({
    state: 'DENIED',
    outcome: 'DENIED',
  });
  const late = await decide(ownerToken, escalation.pollRef, 'APPROVE');
  expect(late.body.errors?.[0]?.extensions?.code).toBe('ESCALATION_NOT_PENDING');
  const retried = await preflight(stack, policy, intent);
  expect(retried.decision).toBe('ESCALATED_THRESHOLD');
  expect(retried.escalation.pollRef).not.toBe(escalation.pollRef);
});

test('expiry: the worker’s sweep expires it (EXPIRED reports DENIED), a later approval changes nothing, reads expire lazily too', async () => {
  // The owner's session lives 30 minutes on the same clock, so its socket ends with it (4403) and
  // is fed nothing after that; the admin token does not expire and follows every escalation.
  const ownerSocket = subscribeToEscalations(stack, ownerToken);
  const socket = subscribeToEscalations(stack, stack.adminToken);
  try {
    await waitForEscalationSubscribers(stack, 2);
    const intent = escalatingIntent(policy, clockMs);
    const { escalation } = await preflight(stack, policy, intent);
    await ownerSocket.waitFor(
      (message) => message.pollRef === escalation.pollRef && message.state === 'PENDING',
    );
    clockMs += 30 * 60_000;
    const round = await stack.stack.worker!.runOnce();
    expect(round.expired).toContain(escalation.pollRef);
    await socket.waitFor(
      (message) => message.pollRef === escalation.pollRef && message.state === 'EXPIRED',
    );
    await expect(ownerSocket.closed).resolves.toBe(4403);
    expect(ownerSocket.messages.filter((message) => message.state === 'EXPIRED')).toEqual([]);
    expect((await pollStatus(stack, escalation.pollRef)).body).toMatchObject({
      state: 'EXPIRED',
      outcome: 'DENIED',
      reason: 'ESCALATION_EXPIRED_DEFAULT_DENY',
      resolvedAt: escalation.expiresAt,
    });
    // Sessions live 30 minutes on the same clock: sign in again.
    const late = await decide(await signIn(stack.url, owner), escalation.pollRef, 'APPROVE');
    expect(late.body.errors?.[0]?.extensions?.code).toBe('ESCALATION_NOT_PENDING');
    expect((await preflight(stack, policy, intent)).decision).toBe('ESCALATED_THRESHOLD');

    // No sweep at all: the poll route itself expires an overdue escalation.
    const other = await preflight(stack, policy, escalatingIntent(policy, clockMs));
    clockMs += 31 * 60_000;
    expect((await pollStatus(stack, other.escalation.pollRef)).body).toMatchObject({
      state: 'EXPIRED',
      outcome: 'DENIED',
    });
    await socket.waitFor(
      (message) => message.pollRef === other.escalation.pollRef && message.state === 'EXPIRED',
    );
    expect((await stack.stack.worker!.runOnce()).expired).not.toContain(other.escalation.pollRef);
  } finally {
    await ownerSocket.close();
    await socket.close();
  }
});

test('a dashboard approval may carry the owner’s EIP-712 signature over the intent; anyone else’s is refused', async () => {
  const { escalation } = await preflight(stack, policy, escalatingIntent(policy, clockMs));
  const record = await graphql(stack.url, ONE, { pollRef: escalation.pollRef }, ownerToken);
  // Re-parsed in this realm: fetch's objects come from Node's own, which the validator's plain-object check refuses.
  const validated = validateSpendIntent(
    JSON.parse(JSON.stringify(record.body.data.escalation.intent)),
    clockMs,
  );
  if (!validated.ok)
    throw new Error(`the escalated intent does not validate: ${JSON.stringify(validated.errors)}`);
  const typedData = spendIntentTypedData(spendIntentMessage(validated.intent));

  const forged = await decide(
    ownerToken,
    escalation.pollRef,
    'APPROVE',
    await stranger.signTypedData(typedData),
  );
  expect(forged.body.errors?.[0]?.extensions?.code).toBe('ESCALATION_SIGNATURE_INVALID');
  expect((await pollStatus(stack, escalation.pollRef)).body.state).toBe('PENDING');

  const signed = await decide(
    ownerToken,
    escalation.pollRef,
    'APPROVE',
    await owner.signTypedData(typedData),
  );
  expect(signed.body.data.decideEscalation).toMatchObject({
    state: 'APPROVED',
    resolvedVia: 'dashboard+eip712',
    ownerSigned: true,
  });
  const twice = await decide(ownerToken, escalation.pollRef, 'APPROVE');
  expect(twice.body.errors?.[0]?.extensions?.code).toBe('ESCALATION_NOT_PENDING');
});

test('only the owner decides and sees: another owner, an admin and an anonymous socket get nothing', async () => {
  const strangerPolicy = await createEscalatingPolicy(stack, stranger.address.toLowerCase());
  const strangerSocket = subscribeToEscalations(stack, strangerToken);
  const anonymous = subscribeToEscalations(stack, null);
  try {
    await waitForEscalationSubscribers(stack, 1);
    const { escalation } = await preflight(stack, policy, escalatingIntent(policy, clockMs));
    const byStranger = await decide(strangerToken, escalation.pollRef, 'APPROVE');
    expect(byStranger.body.errors?.[0]?.extensions?.code).toBe('ESCALATION_NOT_FOUND');
    const byAdmin = await decide(stack.adminToken, escalation.pollRef, 'APPROVE');
    expect(byAdmin.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(
      (await graphql(stack.url, ONE, { pollRef: escalation.pollRef }, strangerToken)).body.data
        .escalation,
    ).toBeNull();
    await decide(ownerToken, escalation.pollRef, 'DENY');

    // The stranger's own escalation commits after the owner's events: once it arrives, the owner's were filtered out.
    const own = await preflight(stack, strangerPolicy, escalatingIntent(strangerPolicy, clockMs));
    await strangerSocket.waitFor((message) => message.pollRef === own.escalation.pollRef);
    expect(strangerSocket.messages.map((message) => message.policyId)).toEqual([
      strangerPolicy.policyId,
    ]);
    expect(anonymous.messages).toEqual([]);
    expect(JSON.stringify(anonymous.errors)).toContain('Sign in as the owner');
  } finally {
    await strangerSocket.close();
    await anonymous.close();
  }
});

test('a subscription to one pollRef starts with its current state', async () => {
  const { escalation } = await preflight(stack, policy, escalatingIntent(policy, clockMs));
  await decide(ownerToken, escalation.pollRef, 'APPROVE');
  const socket = subscribeToEscalations(stack, ownerToken, { pollRef: escalation.pollRef });
  try {
    const first = await socket.waitFor(() => true);
    expect(first).toMatchObject({ pollRef: escalation.pollRef, state: 'APPROVED' });
  } finally {
    await socket.close();
  }
});

test('the poll route answers ESCALATION_NOT_FOUND for unknown and malformed pollRefs', async () => {
  for (const pollRef of [`esc_${'0'.repeat(24)}`, 'esc_nope']) {
    const answer = await pollStatus(stack, pollRef);
    expect([answer.status, answer.body.code]).toEqual([404, 'ESCALATION_NOT_FOUND']);
  }
});
