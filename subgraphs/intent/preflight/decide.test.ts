// decide.ts as a unit, without a database: the engine's inputs read from a preflight_windows row,
// then what one decision writes and answers for each outcome, with fixed draws so every field can
// be stated exactly. The same decisions against a real database are in calls.test.ts.
import type { Decision, PolicySnapshot } from '../../../core/engine';
import { AppError } from '../../../core/errors';
import {
  emptyWindow,
  NOW_MS,
  policySnapshot,
  spendIntent,
} from '../../../core/test-support/spend-fixtures';
import type { SpendIntent } from '../../../core/validation/intent';
import {
  decidePreflight,
  readingOf,
  replayAnswer,
  type DecisionDraws,
  type PreflightToDecide,
  type PreflightWindowRow,
  type ReplayRow,
} from './decide';

const NOW = new Date(NOW_MS);
const POLL_REF = 'esc_0123456789abcdef01234567';
const RECEIPT_ID = 'rcp_000000000000000000000001';
const RESERVATION_ID = 'rsv_000000000000000000000001';

function draws(): DecisionDraws & { escalated: Decision[] } {
  const escalated: Decision[] = [];
  return {
    escalated,
    receiptId: () => RECEIPT_ID,
    reservationId: () => RESERVATION_ID,
    escalation: (_policy: PolicySnapshot, decision: Decision) => {
      escalated.push(decision);
      return {
        pollRef: POLL_REF,
        decidingRule: decision.decidingRule ?? 'unknown',
        reason: 'above the threshold',
        codeSha256: Buffer.from('aa', 'hex'),
        sealedCode: Buffer.from('bb', 'hex'),
      };
    },
  };
}

function request(intent: SpendIntent, policy: PolicySnapshot, given = true): PreflightToDecide {
  return { policyId: policy.policyId, intent, given, sealingKey: Buffer.alloc(32, 1) };
}

function windowRow(overrides: Partial<PreflightWindowRow> = {}): PreflightWindowRow {
  return {
    policy_found: true,
    version: 1,
    status: 'ACTIVE',
    policy_hash: null,
    rules: null,
    expires_at: null,
    settled: '0',
    reserved: '0',
    calls: '0',
    provider_last_at: null,
    recent: null,
    approval: null,
    valid_until: new Date(NOW_MS + 1000),
    replay: null,
    ...overrides,
  };
}

describe('readingOf', () => {
  const policy = policySnapshot();
  const intent = spendIntent(policy);

  it('reads the sums as atomic amounts, the recent approvals, the provider’s last call and the approval', () => {
    const reading = readingOf(
      windowRow({
        settled: '3000000',
        reserved: '1000000',
        calls: '7',
        provider_last_at: new Date(NOW_MS - 60_000),
        recent: [['0xab', 'cap', '0xrc', '50000', '0xit', 'prov', 'agent', 'https://e', 123]],
        approval: POLL_REF,
      }),
      intent,
      policy,
    );
    expect(reading.policy).toBe(policy);
    expect(reading.window).toEqual({
      settledTodayAtomic: 3_000_000n,
      reservedTodayAtomic: 1_000_000n,
      approvedCallsLastHour: 7,
      recentApproved: [
        {
          intentHash: '0xab',
          capability: 'cap',
          recipient: '0xrc',
          amountAtomic: 50_000n,
          itemHash: '0xit',
          provider: 'prov',
          agentId: 'agent',
          endpoint: 'https://e',
          approvedAtMs: 123,
        },
      ],
      lastApprovedAtMsByProvider: { [intent.provider]: NOW_MS - 60_000 },
      vendorScore: null,
    });
    expect(reading.approval).toEqual({ pollRef: POLL_REF, intentHash: intent.intentHash });
  });

  it('reads no approval, no recent calls and no last call when the row has none', () => {
    const reading = readingOf(windowRow(), intent, null);
    expect(reading).toEqual({
      policy: null,
      window: emptyWindow({ vendorScore: null }),
      approval: null,
    });
  });
});

describe('decidePreflight', () => {
  const policy = policySnapshot();
  const asset = `eip155:196/erc20:${policy.rules.asset.token}`;

  it('approves within the limits: draws a reservation, binds a given intent, answers with the reservation', () => {
    const intent = spendIntent(policy);
    const fixed = draws();
    const decided = decidePreflight(
      request(intent, policy),
      { policy, window: emptyWindow(), approval: null },
      NOW,
      fixed,
    );
    expect(decided.record).toMatchObject({
      intentHash: intent.intentHash,
      decision: 'APPROVED',
      outcome: 'APPROVED',
      receiptId: RECEIPT_ID,
      reservationId: RESERVATION_ID,
      storeIntent: true,
      asset,
      day: '2026-11-22',
      now: NOW.toISOString(),
      useApproval: null,
      escalationPollRef: null,
      codeSha256: null,
    });
    expect(decided.record.canonical).not.toBeNull();
    expect(fixed.escalated).toEqual([]);
    expect(decided.respond({ escalation_poll_ref: null, escalation_expires_at: null })).toEqual({
      decision: 'APPROVED',
      intentHash: intent.intentHash,
      policyId: policy.policyId,
      policyHash: policy.policyHash,
      policyVersion: 1,
      evaluatedAt: NOW.toISOString(),
      engine: expect.objectContaining({ ruleCount: 14 }),
      ruleTrace: expect.any(Array),
      reservation: {
        reservationId: RESERVATION_ID,
        state: 'ACTIVE',
        amountAtomic: intent.amountAtomic.toString(),
        asset,
        day: '2026-11-22',
        expiresAt: new Date(intent.deadlineUnixSeconds * 1000).toISOString(),
      },
      escalation: null,
      receiptId: RECEIPT_ID,
    });
  });

  it('does not bind an intent looked up by hash (it is stored already)', () => {
    const intent = spendIntent(policy);
    const decided = decidePreflight(
      request(intent, policy, false),
      { policy, window: emptyWindow(), approval: null },
      NOW,
      draws(),
    );
    expect(decided.record).toMatchObject({ storeIntent: false, canonical: null });
  });

  it('escalates above the threshold: opens an escalation from the draws, no reservation, answers its poll', () => {
    const intent = spendIntent(policy, { amount: '1500000' });
    const fixed = draws();
    const decided = decidePreflight(
      request(intent, policy),
      { policy, window: emptyWindow(), approval: null },
      NOW,
      fixed,
    );
    expect(decided.record).toMatchObject({
      decision: 'ESCALATED_THRESHOLD',
      reservationId: null,
      escalationPollRef: POLL_REF,
      escalationRule: 'escalate.aboveThreshold',
      escalationReason: 'above the threshold',
      codeSha256: 'aa',
      sealedCode: 'bb',
    });
    expect(fixed.escalated.map((decision) => decision.decision)).toEqual(['ESCALATED_THRESHOLD']);
    const expiresAt = new Date(NOW_MS + 30 * 60_000);
    const answer = decided.respond({
      escalation_poll_ref: POLL_REF,
      escalation_expires_at: expiresAt,
    });
    expect(answer).toMatchObject({
      decision: 'ESCALATED_THRESHOLD',
      reservation: null,
      escalation: {
        pollRef: POLL_REF,
        expiresAt: expiresAt.toISOString(),
        pollUrl: `/escalation_status/${POLL_REF}`,
      },
    });
  });

  it('refuses to escalate without a sealing key for the reply code', () => {
    const intent = spendIntent(policy, { amount: '1500000' });
    expect(() =>
      decidePreflight(
        { ...request(intent, policy), sealingKey: undefined },
        { policy, window: emptyWindow(), approval: null },
        NOW,
        draws(),
      ),
    ).toThrow(AppError);
  });

  it('uses the owner’s approval of this intent when it cleared the escalation', () => {
    const intent = spendIntent(policy, { amount: '1500000' });
    const decided = decidePreflight(
      request(intent, policy),
      {
        policy,
        window: emptyWindow(),
        approval: { pollRef: POLL_REF, intentHash: intent.intentHash },
      },
      NOW,
      draws(),
    );
    expect(decided.record).toMatchObject({
      decision: 'APPROVED',
      useApproval: POLL_REF,
      reservationId: RESERVATION_ID,
    });
  });

  it('blocks without a policy: nothing bound, no asset, no reservation', () => {
    const intent = spendIntent(policy);
    const decided = decidePreflight(
      request(intent, policy),
      { policy: null, window: emptyWindow(), approval: null },
      NOW,
      draws(),
    );
    expect(decided.record).toMatchObject({
      decision: 'BLOCKED_POLICY_INACTIVE',
      outcome: 'BLOCKED',
      policyVersion: null,
      policyHash: null,
      storeIntent: false,
      canonical: null,
      asset: null,
      reservationId: null,
    });
  });

  it('decides the same way from the same reading, instant and draws', () => {
    const intent = spendIntent(policy);
    const reading = { policy, window: emptyWindow(), approval: null };
    const once = decidePreflight(request(intent, policy), reading, NOW, draws());
    const again = decidePreflight(request(intent, policy), reading, NOW, draws());
    expect(again.record).toEqual(once.record);
  });
});

describe('replayAnswer', () => {
  it('answers a repeat with the earlier approval as it was first answered', () => {
    const policy = policySnapshot();
    const intent = spendIntent(policy);
    const replay: ReplayRow = {
      decision: 'APPROVED',
      policyHash: policy.policyHash,
      policyVersion: 1,
      evaluatedAtMs: NOW_MS - 5000,
      engine: { version: 'x' },
      ruleTrace: [],
      receiptId: RECEIPT_ID,
      reservationId: RESERVATION_ID,
      amount: '50000',
      asset: 'eip155:196/erc20:0x',
      day: '2026-11-22',
      expiresAtMs: NOW_MS + 3_600_000,
    };
    expect(replayAnswer(request(intent, policy), replay)).toEqual({
      decision: 'APPROVED',
      intentHash: intent.intentHash,
      policyId: policy.policyId,
      policyHash: policy.policyHash,
      policyVersion: 1,
      evaluatedAt: new Date(NOW_MS - 5000).toISOString(),
      engine: { version: 'x' },
      ruleTrace: [],
      reservation: {
        reservationId: RESERVATION_ID,
        state: 'ACTIVE',
        amountAtomic: '50000',
        asset: 'eip155:196/erc20:0x',
        day: '2026-11-22',
        expiresAt: new Date(NOW_MS + 3_600_000).toISOString(),
      },
      escalation: null,
      receiptId: RECEIPT_ID,
    });
  });
});
