// Properties of the whole engine over generated scenarios. Each scenario says, per rule, whether
// it should pass, block or escalate, and builds real inputs that make it so; the expected
// decision is then derived from the scenario (not from the trace) and compared with evaluate.
import fc from 'fast-check';
import {
  NOW_MS,
  NOW_SECONDS,
  OTHER_ADDRESS,
  policyDocument,
  RECIPIENT,
  recentApprovalOf,
  rulesOf,
  snapshotOf,
  spendIntent,
} from '../test-support/spend-fixtures';
import { formatIsoSeconds } from '../validation/timestamp';
import type { SpendIntent } from '../validation/intent';
import { evaluate } from './evaluate';
import { explainDecision } from './explain';
import {
  RULE_IDS,
  type DecisionCode,
  type EngineInput,
  type LedgerWindow,
  type PolicySnapshot,
  type RuleResult,
} from './types';

const RUNS = { numRuns: 10_000 };
const AMOUNT = 1_500_000n;
const DAILY_BUDGET = 100_000_000n;
const DENIED_RECIPIENT = '0x4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d';
const POLL_REF = 'esc_0123456789abcdef01234567';
const DEADLINE_MS = (NOW_SECONDS + 3600) * 1000;

interface Scenario {
  binding: 'pass' | 'paused' | 'expired' | 'hashMismatch' | 'idMismatch';
  deadline: 'pass' | 'passed' | 'tooFar';
  asset: 'pass' | 'otherToken';
  category: 'pass' | 'denied' | 'notAllowed';
  recipient: 'pass' | 'denied' | 'notAllowed';
  agent: 'pass' | 'denied' | 'notAllowed';
  vendor: 'atFloor' | 'below' | 'unavailable';
  onBelow: 'BLOCK' | 'ESCALATE';
  onUnavailable: 'ALLOW' | 'BLOCK' | 'ESCALATE';
  duplicate: boolean;
  cooldown: boolean;
  rate: boolean;
  hardCap: boolean;
  perCall: boolean;
  perCallVerdict: 'BLOCK' | 'ESCALATE';
  budget: boolean;
  threshold: boolean;
  reservedShare: number;
  approval: 'none' | 'thisIntent' | 'otherIntent';
}

const scenarioArb: fc.Arbitrary<Scenario> = fc
  .record({
    binding: fc.constantFrom(
      'pass',
      'pass',
      'pass',
      'paused',
      'expired',
      'hashMismatch',
      'idMismatch',
    ),
    deadline: fc.constantFrom('pass', 'pass', 'passed', 'tooFar'),
    asset: fc.constantFrom('pass', 'pass', 'otherToken'),
    category: fc.constantFrom('pass', 'pass', 'denied', 'notAllowed'),
    recipient: fc.constantFrom('pass', 'pass', 'denied', 'notAllowed'),
    agent: fc.constantFrom('pass', 'pass', 'denied', 'notAllowed'),
    vendor: fc.constantFrom('atFloor', 'below', 'unavailable'),
    onBelow: fc.constantFrom('BLOCK', 'ESCALATE'),
    onUnavailable: fc.constantFrom('ALLOW', 'BLOCK', 'ESCALATE'),
    duplicate: fc.boolean(),
    cooldown: fc.boolean(),
    rate: fc.boolean(),
    hardCap: fc.boolean(),
    perCall: fc.boolean(),
    perCallVerdict: fc.constantFrom('BLOCK', 'ESCALATE'),
    budget: fc.boolean(),
    threshold: fc.boolean(),
    reservedShare: fc.integer({ min: 0, max: 100 }),
    approval: fc.constantFrom('none', 'thisIntent', 'otherIntent'),
  })
  // A valid policy has escalateAbove ≤ hardCap, so when the hard cap fails the threshold does too.
  .map((s) => (s.hardCap ? { ...s, threshold: true } : s)) as fc.Arbitrary<Scenario>;

// Policies depend on few scenario fields; compiling each distinct one once keeps runs cheap.
const snapshots = new Map<string, PolicySnapshot>();
function policyFor(s: Scenario): PolicySnapshot {
  const status = s.binding === 'paused' || s.binding === 'expired' ? s.binding : 'active';
  const key = JSON.stringify([
    status,
    s.deadline === 'tooFar',
    s.onBelow,
    s.onUnavailable,
    s.hardCap,
    s.perCall,
    s.perCallVerdict,
    s.threshold,
  ]);
  let snapshot = snapshots.get(key);
  if (snapshot === undefined) {
    const atomic = (value: bigint) =>
      `${value / 1_000_000n}.${(value % 1_000_000n).toString().padStart(6, '0')}`;
    const rules = rulesOf(
      policyDocument({
        dailyBudget: atomic(DAILY_BUDGET),
        perCallCap: atomic(s.perCall ? AMOUNT - 1n : AMOUNT),
        onPerCallCapExceeded: s.perCallVerdict,
        hardCap: atomic(s.hardCap ? AMOUNT - 1n : AMOUNT + 1_000_000n),
        escalateAbove: atomic(s.threshold ? AMOUNT - 1n : AMOUNT),
        categories: { allow: ['market-data', 'gambling'], deny: ['gambling'] },
        recipients: { allow: [RECIPIENT, DENIED_RECIPIENT], deny: [DENIED_RECIPIENT] },
        agents: { allow: ['research-bot-1', 'rogue-bot'], deny: ['rogue-bot'] },
        vendorRisk: { minScore: 50, onBelow: s.onBelow, onUnavailable: s.onUnavailable },
        duplicates: { windowMinutes: 60, keys: ['amount', 'capability', 'itemHash', 'recipient'] },
        cooldowns: { sameServiceMinutes: 10 },
        rateLimit: { callsPerHour: 60 },
        // The fixture deadline is one hour ahead: 60 minutes allows it exactly, 59 does not.
        maxDeadlineMinutes: s.deadline === 'tooFar' ? 59 : 60,
        expiresAt: formatIsoSeconds(s.binding === 'expired' ? NOW_SECONDS : NOW_SECONDS + 7200),
      }),
    );
    snapshot = snapshotOf(rules, { status: s.binding === 'paused' ? 'PAUSED' : 'ACTIVE' });
    snapshots.set(key, snapshot);
  }
  return snapshot;
}

let baseIntent: SpendIntent | undefined;
function intentFor(s: Scenario, policy: PolicySnapshot): SpendIntent {
  // The engine takes intentHash as given (validation computed it); the variants below change
  // only fields the rules read, so one validated intent serves as the template for all of them.
  baseIntent ??= spendIntent(policy, { amount: AMOUNT.toString() });
  return {
    ...baseIntent,
    policyId: s.binding === 'idMismatch' ? '42' : policy.policyId,
    policyHash: s.binding === 'hashMismatch' ? `0x${'ee'.repeat(32)}` : policy.policyHash,
    token: s.asset === 'otherToken' ? (OTHER_ADDRESS as SpendIntent['token']) : baseIntent.token,
    category: { pass: 'market-data', denied: 'gambling', notAllowed: 'travel' }[s.category],
    recipient: ({ pass: RECIPIENT, denied: DENIED_RECIPIENT, notAllowed: OTHER_ADDRESS } as const)[
      s.recipient
    ],
    agentId: { pass: 'research-bot-1', denied: 'rogue-bot', notAllowed: 'other-bot' }[s.agent],
  };
}

function inputFor(s: Scenario): EngineInput {
  const policy = policyFor(s);
  const intent = intentFor(s, policy);
  const nowMs = s.deadline === 'passed' ? DEADLINE_MS : NOW_MS;
  const windowMs = 60 * 60_000;
  const exact = recentApprovalOf(intent, nowMs - windowMs + 1);
  const headroom = DAILY_BUDGET - AMOUNT + (s.budget ? 1n : 0n);
  const reserved = (headroom * BigInt(s.reservedShare)) / 100n;
  const window: LedgerWindow = {
    settledTodayAtomic: headroom - reserved,
    reservedTodayAtomic: reserved,
    approvedCallsLastHour: s.rate ? 60 : 59,
    recentApproved: [
      // Always present: a same-key approval just outside the window, and a near miss inside it.
      recentApprovalOf(intent, nowMs - windowMs),
      { ...exact, amountAtomic: AMOUNT + 1n },
      ...(s.duplicate ? [exact] : []),
    ],
    lastApprovedAtMsByProvider: { [intent.provider]: nowMs - 600_000 + (s.cooldown ? 1 : 0) },
    vendorScore: { atFloor: 50, below: 49, unavailable: null }[s.vendor],
  };
  const approval =
    s.approval === 'none'
      ? null
      : {
          pollRef: POLL_REF,
          intentHash: s.approval === 'thisIntent' ? intent.intentHash : `0x${'0f'.repeat(32)}`,
        };
  return { intent, policy, window, now: nowMs, approval };
}

/** What each rule must say, and with which code, derived from the scenario alone. */
function expectedEntries(s: Scenario): Array<[RuleResult, DecisionCode | null]> {
  const approved = s.approval === 'thisIntent';
  const escalation = (code: DecisionCode): [RuleResult, DecisionCode | null] =>
    approved ? ['PASS', null] : ['ESCALATE', code];
  const fails = (failed: boolean, code: DecisionCode): [RuleResult, DecisionCode | null] =>
    failed ? ['BLOCK', code] : ['PASS', null];
  const vendor = (): [RuleResult, DecisionCode | null] => {
    const verdict =
      s.vendor === 'below' ? s.onBelow : s.vendor === 'unavailable' ? s.onUnavailable : 'ALLOW';
    if (verdict === 'ALLOW') return ['PASS', null];
    if (verdict === 'BLOCK') return ['BLOCK', 'BLOCKED_VENDOR_RISK'];
    return escalation('ESCALATED_VENDOR_RISK');
  };
  const bindingCode: DecisionCode =
    s.binding === 'paused' || s.binding === 'expired'
      ? 'BLOCKED_POLICY_INACTIVE'
      : 'BLOCKED_POLICY_MISMATCH';
  return [
    fails(s.binding !== 'pass', bindingCode),
    fails(s.deadline !== 'pass', 'BLOCKED_DEADLINE'),
    fails(s.asset !== 'pass', 'BLOCKED_ASSET'),
    fails(s.category !== 'pass', 'BLOCKED_CATEGORY'),
    fails(s.recipient !== 'pass', 'BLOCKED_RECIPIENT'),
    fails(s.agent !== 'pass', 'BLOCKED_AGENT'),
    vendor(),
    fails(s.duplicate, 'BLOCKED_DUPLICATE'),
    fails(s.cooldown, 'BLOCKED_COOLDOWN'),
    fails(s.rate, 'BLOCKED_RATE'),
    fails(s.hardCap, 'BLOCKED_HARD_CAP'),
    !s.perCall
      ? ['PASS', null]
      : s.perCallVerdict === 'BLOCK'
        ? ['BLOCK', 'BLOCKED_PER_CALL_CAP']
        : escalation('ESCALATED_PER_CALL_CAP'),
    fails(s.budget, 'BLOCKED_BUDGET'),
    s.threshold ? escalation('ESCALATED_THRESHOLD') : ['PASS', null],
  ];
}

describe('engine properties', () => {
  it('BLOCK beats ESCALATE beats APPROVE, whichever rules fail', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const decision = evaluate(inputFor(s));
        const expected = expectedEntries(s);
        expect(decision.ruleTrace.map((e) => e.result).join()).toBe(
          expected.map(([result]) => result).join(),
        );
        const firstBlock = expected.findIndex(([result]) => result === 'BLOCK');
        const firstEscalate = expected.findIndex(([result]) => result === 'ESCALATE');
        const deciding = firstBlock >= 0 ? firstBlock : firstEscalate;
        expect(decision.decision).toBe(deciding >= 0 ? expected[deciding]![1] : 'APPROVED');
        expect(decision.decidingRule).toBe(deciding >= 0 ? RULE_IDS[deciding] : null);
        expect(decision.outcome).toBe(
          firstBlock >= 0 ? 'BLOCKED' : firstEscalate >= 0 ? 'ESCALATED' : 'APPROVED',
        );
      }),
      RUNS,
    );
  });

  it('is deterministic: equal inputs give byte-identical decisions and explanations', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const original = inputFor(s);
        // A deep copy shares no object with the original (rules excepted: see the next test).
        const copy: EngineInput = {
          ...structuredClone({ ...original, policy: null }),
          policy: original.policy && {
            ...original.policy,
            expiresAt: original.policy.expiresAt && new Date(Number(original.policy.expiresAt)),
          },
        };
        const first = evaluate(original);
        const second = evaluate(copy);
        expect(JSON.stringify(second)).toBe(JSON.stringify(first));
        const asset = { symbol: 'USDT0', decimals: 6 };
        expect(explainDecision(second, asset).join('\n')).toBe(
          explainDecision(first, asset).join('\n'),
        );
      }),
      RUNS,
    );
  });

  it('decides the same with a freshly parsed copy of the rules (no hidden state in the compile cache)', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const original = inputFor(s);
        const policy = original.policy!;
        const reparsed = { ...policy, rules: JSON.parse(JSON.stringify(policy.rules)) };
        expect(JSON.stringify(evaluate({ ...original, policy: reparsed }))).toBe(
          JSON.stringify(evaluate(original)),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('always fails closed on a malformed window', () => {
    type Corruption = (w: Record<string, unknown>) => void;
    const numberLike = fc.constantFrom(Number.NaN, -1, Number.POSITIVE_INFINITY, 1.5, -0.5);
    const corruption: fc.Arbitrary<Corruption> = fc.oneof(
      fc
        .constantFrom(
          'settledTodayAtomic',
          'reservedTodayAtomic',
          'approvedCallsLastHour',
          'recentApproved',
          'lastApprovedAtMsByProvider',
          'vendorScore',
        )
        .map(
          (field): Corruption =>
            (w) =>
              delete w[field],
        ),
      fc.constantFrom('settledTodayAtomic', 'reservedTodayAtomic').chain((field) =>
        fc.oneof(
          fc.bigInt({ max: -1n }).map(
            (v): Corruption =>
              (w) =>
                (w[field] = v),
          ),
          fc.oneof(numberLike, fc.integer({ min: 0 })).map(
            (v): Corruption =>
              (w) =>
                (w[field] = v),
          ),
          fc.constantFrom('100', null, undefined).map(
            (v): Corruption =>
              (w) =>
                (w[field] = v),
          ),
        ),
      ),
      fc.oneof(numberLike, fc.constant(2 ** 53), fc.constant('3')).map(
        (v): Corruption =>
          (w) =>
            (w.approvedCallsLastHour = v),
      ),
      fc
        .oneof(
          fc.constantFrom(Number.NaN, -1, 100.5, 1e9, Number.NEGATIVE_INFINITY),
          fc.constant('80'),
        )
        .map(
          (v): Corruption =>
            (w) =>
              (w.vendorScore = v),
        ),
      fc.constantFrom(null, {}, 'x').map(
        (v): Corruption =>
          (w) =>
            (w.recentApproved = v),
      ),
      fc
        .constantFrom(
          'approvedAtMs',
          'amountAtomic',
          'intentHash',
          'recipient',
          'itemHash',
          'capability',
          'provider',
          'agentId',
          'endpoint',
        )
        .chain((field) =>
          // Free-text fields may hold any string; the others have a shape that 'X' breaks.
          fc
            .constantFrom(
              ...(['capability', 'provider', 'agentId', 'endpoint'].includes(field)
                ? [undefined, Number.NaN, -5n, null]
                : [undefined, Number.NaN, -5n, 'X', null]),
            )
            .map((v): Corruption => (w) => {
              const entries = w.recentApproved as Array<Record<string, unknown>>;
              entries.push({ ...entries[0]!, [field]: v });
            }),
        ),
      fc.constantFrom(Number.NaN, -1, '1', null).map(
        (v): Corruption =>
          (w) =>
            ((w.lastApprovedAtMsByProvider as Record<string, unknown>)['api.vendor.example'] = v),
      ),
      fc.constantFrom(null, 'window', 7).map(
        (v): Corruption =>
          (w) =>
            Object.assign(w, { __replace: v }),
      ),
    );
    fc.assert(
      fc.property(scenarioArb, corruption, (s, corrupt) => {
        const input = inputFor(s);
        const window = {
          ...input.window,
          recentApproved: [...input.window.recentApproved],
          lastApprovedAtMsByProvider: { ...input.window.lastApprovedAtMsByProvider },
        } as Record<string, unknown>;
        corrupt(window);
        const replaced = '__replace' in window ? window.__replace : window;
        const decision = evaluate({ ...input, window: replaced as unknown as LedgerWindow });
        expect(decision.decision).toBe('BLOCKED_FAIL_CLOSED');
        expect(decision.ruleTrace).toEqual([]);
        expect(decision.failClosedReason).toMatch(/^WINDOW_MALFORMED:/);
      }),
      RUNS,
    );
  });

  it('the clean window of every scenario is well formed (so the corruptions above are what fail)', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        expect(evaluate(inputFor(s)).decision).not.toBe('BLOCKED_FAIL_CLOSED');
      }),
      { numRuns: 1000 },
    );
  });
});
