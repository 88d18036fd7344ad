// evaluate as a whole: precedence between rules, owner approvals, missing and stale policies, and
// every way the engine fails closed.
import { keccak256, stringToBytes } from 'viem';
import {
  emptyWindow,
  NOW_MS,
  policySnapshot,
  rulesOf,
  policyDocument,
  recentApprovalOf,
  snapshotOf,
  spendIntent,
} from '../test-support/spend-fixtures';
import { evaluate } from './evaluate';
import { ENGINE_INFO, RULES } from './manifest';
import { RULE_IDS, type EngineInput, type LedgerWindow, type PolicySnapshot } from './types';

const POLL_REF = 'esc_0123456789abcdef01234567';
const policy = policySnapshot();

function input(
  parts: {
    policy?: PolicySnapshot | null;
    intent?: Record<string, unknown>;
    window?: Partial<LedgerWindow>;
    now?: Date | number;
  } = {},
): EngineInput {
  const snapshot = parts.policy === undefined ? policy : parts.policy;
  return {
    intent: spendIntent(snapshot ?? policy, parts.intent ?? {}),
    policy: snapshot,
    window: emptyWindow(parts.window),
    now: parts.now ?? NOW_MS,
  };
}

describe('evaluate', () => {
  it('approves a spend every rule passes, with all fourteen entries in rule order', () => {
    const decision = evaluate(input());
    expect(decision.decision).toBe('APPROVED');
    expect(decision.outcome).toBe('APPROVED');
    expect(decision.decidingRule).toBeNull();
    expect(decision.failClosedReason).toBeNull();
    expect(decision.ruleTrace.map((e) => e.rule)).toEqual([...RULE_IDS]);
    expect(decision.ruleTrace.every((e) => e.result === 'PASS')).toBe(true);
  });

  it('names its engine: version, rule count and the hash of the rule ids in order', () => {
    const decision = evaluate(input());
    expect(decision.engine).toEqual({
      version: '1.0.0',
      ruleManifestHash: keccak256(stringToBytes(RULE_IDS.join('\n'))),
      ruleCount: 14,
    });
    expect(RULES.map((r) => r.id)).toEqual([...RULE_IDS]);
    expect(RULE_IDS).toEqual([
      'policy.binding',
      'intent.deadline',
      'asset.allowed',
      'category.allow',
      'recipient.allowDeny',
      'agent.allowDeny',
      'vendor.riskFloor',
      'duplicate.window',
      'cooldown.sameService',
      'rate.limit',
      'hardCap.absolute',
      'perCall.cap',
      'budget.daily',
      'escalate.aboveThreshold',
    ]);
  });

  it('accepts now as a Date or as unix milliseconds alike', () => {
    expect(JSON.stringify(evaluate(input({ now: new Date(NOW_MS) })))).toBe(
      JSON.stringify(evaluate(input({ now: NOW_MS }))),
    );
  });

  it('serialises to JSON with money as atomic strings', () => {
    const json = JSON.parse(
      JSON.stringify(evaluate(input({ window: { settledTodayAtomic: 1_000_000n } }))),
    );
    expect(json.ruleTrace[12]).toEqual({
      rule: 'budget.daily',
      result: 'PASS',
      observed: '1050000',
      limit: '25000000',
      note: 'UTC_DAY:2026-11-22',
    });
  });

  describe('precedence', () => {
    it('of two blocking rules, the earlier one decides and both are in the trace', () => {
      const decision = evaluate(
        input({ intent: { category: 'travel' }, window: { approvedCallsLastHour: 60 } }),
      );
      expect(decision.decision).toBe('BLOCKED_CATEGORY');
      expect(decision.decidingRule).toBe('category.allow');
      expect(decision.ruleTrace[9]).toMatchObject({
        rule: 'rate.limit',
        result: 'BLOCK',
        note: 'BLOCKED_RATE',
      });
    });

    it('a later BLOCK beats an earlier ESCALATE: the owner is never asked about a spend that would be blocked', () => {
      // Vendor score below the floor escalates (rule 7); the budget is exhausted (rule 13).
      const decision = evaluate(
        input({ window: { vendorScore: 10, settledTodayAtomic: 25_000_000n } }),
      );
      expect(decision.ruleTrace[6]!.result).toBe('ESCALATE');
      expect(decision.decision).toBe('BLOCKED_BUDGET');
      expect(decision.outcome).toBe('BLOCKED');
    });

    it('of two escalating rules, the earlier one decides', () => {
      const decision = evaluate(
        input({ intent: { amount: '1500000' }, window: { vendorScore: 10 } }),
      );
      expect(decision.decision).toBe('ESCALATED_VENDOR_RISK');
      expect(decision.decidingRule).toBe('vendor.riskFloor');
      expect(decision.ruleTrace[13]!.result).toBe('ESCALATE');
    });

    it('amounts over perCallCap under the example policy block, and over escalateAbove escalate', () => {
      expect(evaluate(input({ intent: { amount: '2000001' } })).decision).toBe(
        'BLOCKED_PER_CALL_CAP',
      );
      expect(evaluate(input({ intent: { amount: '2000000' } })).decision).toBe(
        'ESCALATED_THRESHOLD',
      );
      expect(evaluate(input({ intent: { amount: '1000000' } })).decision).toBe('APPROVED');
    });
  });

  describe('owner approval', () => {
    const above = input({ intent: { amount: '1500000' }, window: { vendorScore: 10 } });

    it('turns every ESCALATE for this exact intentHash into PASS, noting the pollRef', () => {
      const decision = evaluate({
        ...above,
        approval: { pollRef: POLL_REF, intentHash: above.intent.intentHash },
      });
      expect(decision.decision).toBe('APPROVED');
      expect(decision.ruleTrace[6]).toMatchObject({
        result: 'PASS',
        note: `OWNER_APPROVED:${POLL_REF}`,
      });
      expect(decision.ruleTrace[13]).toMatchObject({
        result: 'PASS',
        note: `OWNER_APPROVED:${POLL_REF}`,
      });
    });

    it('matches the intentHash regardless of hex case', () => {
      const upper = `0x${above.intent.intentHash.slice(2).toUpperCase()}`;
      expect(
        evaluate({ ...above, approval: { pollRef: POLL_REF, intentHash: upper } }).decision,
      ).toBe('APPROVED');
    });

    it('does nothing for another intent, e.g. the same spend with a changed amount', () => {
      const changed = input({ intent: { amount: '1500001' }, window: { vendorScore: 10 } });
      expect(changed.intent.intentHash).not.toBe(above.intent.intentHash);
      const decision = evaluate({
        ...changed,
        approval: { pollRef: POLL_REF, intentHash: above.intent.intentHash },
      });
      expect(decision.decision).toBe('ESCALATED_VENDOR_RISK');
    });

    it('never overrides a BLOCK', () => {
      const blocked = input({ intent: { amount: '2000001' } });
      const decision = evaluate({
        ...blocked,
        approval: { pollRef: POLL_REF, intentHash: blocked.intent.intentHash },
      });
      expect(decision.decision).toBe('BLOCKED_PER_CALL_CAP');
    });
  });

  describe('policy binding', () => {
    it('no policy: BLOCKED_POLICY_INACTIVE, the other rules reported as not evaluated', () => {
      const decision = evaluate(input({ policy: null }));
      expect(decision.decision).toBe('BLOCKED_POLICY_INACTIVE');
      expect(decision.ruleTrace).toHaveLength(14);
      expect(
        decision.ruleTrace
          .slice(1)
          .every((e) => e.note === 'NOT_EVALUATED:NO_POLICY' && e.result === 'BLOCK'),
      ).toBe(true);
    });

    it('an intent bound to the previous version of the policy is BLOCKED_POLICY_MISMATCH', () => {
      const updated = snapshotOf(rulesOf(policyDocument({ dailyBudget: '30.00' })), { version: 2 });
      const decision = evaluate({ ...input(), policy: updated });
      expect(decision.decision).toBe('BLOCKED_POLICY_MISMATCH');
    });
  });

  describe('fails closed', () => {
    const base = input();

    it.each<[string, Partial<EngineInput>, string]>([
      ['a NaN clock', { now: Number.NaN }, 'NOW_MALFORMED'],
      ['an invalid Date', { now: new Date('nope') }, 'NOW_MALFORMED'],
      [
        'a negative settled total',
        { window: emptyWindow({ settledTodayAtomic: -1n }) },
        'WINDOW_MALFORMED:settledTodayAtomic',
      ],
      [
        'a number instead of a bigint',
        { window: emptyWindow({ reservedTodayAtomic: 5 as unknown as bigint }) },
        'WINDOW_MALFORMED:reservedTodayAtomic',
      ],
      [
        'a NaN call count',
        { window: emptyWindow({ approvedCallsLastHour: Number.NaN }) },
        'WINDOW_MALFORMED:approvedCallsLastHour',
      ],
      [
        'a vendor score above 100',
        { window: emptyWindow({ vendorScore: 101 }) },
        'WINDOW_MALFORMED:vendorScore',
      ],
      [
        'a missing window',
        { window: undefined as unknown as LedgerWindow },
        'WINDOW_MALFORMED:window',
      ],
      [
        'a malformed approval',
        { approval: { pollRef: 'esc_nothex', intentHash: `0x${'0'.repeat(64)}` } },
        'APPROVAL_MALFORMED:pollRef',
      ],
    ])('on %s', (_label, change, reason) => {
      const decision = evaluate({ ...base, ...change });
      expect(decision).toEqual({
        decision: 'BLOCKED_FAIL_CLOSED',
        outcome: 'BLOCKED',
        decidingRule: null,
        ruleTrace: [],
        engine: ENGINE_INFO,
        failClosedReason: reason,
      });
    });

    it('on a recent approval whose hashes are not hash-shaped', () => {
      const prior = recentApprovalOf(base.intent, NOW_MS - 1000);
      const window = emptyWindow({
        recentApproved: [{ ...prior, itemHash: prior.itemHash.slice(0, 40) }],
      });
      expect(evaluate({ ...base, window }).failClosedReason).toBe(
        'WINDOW_MALFORMED:recentApproved[0]',
      );
    });

    it('on a snapshot whose rules do not hash to its policyHash', () => {
      const decision = evaluate({
        ...base,
        policy: { ...policy, policyHash: `0x${'cd'.repeat(32)}` },
      });
      expect(decision.failClosedReason).toBe('POLICY_MALFORMED:POLICY_HASH_DOES_NOT_MATCH_RULES');
    });

    it('on a snapshot whose expiresAt disagrees with its rules', () => {
      const decision = evaluate({ ...base, policy: { ...policy, expiresAt: null } });
      expect(decision.failClosedReason).toBe('POLICY_MALFORMED:EXPIRES_AT_DOES_NOT_MATCH_RULES');
    });

    it('on rules that are not in normal form, even if otherwise valid', () => {
      const raw = policyDocument() as unknown as PolicySnapshot['rules'];
      const decision = evaluate({ ...base, policy: { ...policy, rules: raw } });
      expect(decision.failClosedReason).toBe('POLICY_MALFORMED:RULES_NOT_NORMALISED');
    });

    it('on rules that are not a valid policy at all', () => {
      const broken = { ...policy.rules, dailyBudget: 'lots' };
      expect(evaluate({ ...base, policy: { ...policy, rules: broken } }).failClosedReason).toBe(
        'POLICY_MALFORMED:RULES_INVALID:dailyBudget',
      );
    });

    it('on a malformed intent', () => {
      const intent = { ...base.intent, amountAtomic: 50_000 as unknown as bigint };
      expect(evaluate({ ...base, intent }).failClosedReason).toBe('INTENT_MALFORMED:amountAtomic');
    });

    it('when a rule throws, naming the rule', () => {
      // A window entry that reads well once (during the shape check) and throws afterwards.
      let reads = 0;
      const prior = recentApprovalOf(base.intent, NOW_MS - 1000);
      const treacherous = new Proxy(prior, {
        get(target, key, receiver) {
          if (key === 'approvedAtMs' && ++reads > 1) throw new Error('boom');
          return Reflect.get(target, key, receiver);
        },
      });
      const decision = evaluate({
        ...base,
        window: emptyWindow({ recentApproved: [treacherous] }),
      });
      expect(decision.failClosedReason).toBe('RULE_EXCEPTION:duplicate.window');
    });

    it('when the input itself throws on access', () => {
      const hostile = Object.defineProperty({ ...base }, 'window', {
        get() {
          throw new Error('boom');
        },
      });
      expect(evaluate(hostile).failClosedReason).toBe('ENGINE_EXCEPTION');
    });
  });

  it('does not read the clock: a wall clock far past the deadline and expiry changes nothing', () => {
    const first = JSON.stringify(evaluate(input()));
    jest.useFakeTimers({ now: Date.UTC(2100, 0, 1) });
    try {
      expect(JSON.stringify(evaluate(input()))).toBe(first);
    } finally {
      jest.useRealTimers();
    }
  });
});
