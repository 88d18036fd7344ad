// Explain a block: on generated histories (inputs stored or rebuilt), every blocked or escalated
// decision's suggested value of each amount setting approves it under the engine and one atomic
// unit less does not; a setting that cannot help says so; the category fix approves exactly the
// category blocks.
import fc from 'fast-check';
import { NOW_MS, spendIntent } from '../test-support/spend-fixtures';
import { generateHistory, whatIfPolicy } from '../test-support/whatif-history';
import { approvesUnder, decisionJudge, explainDecision, settingRange, withAmount } from './explain';
import type { PastDecision, PriorApproval } from './history';

const DAY_START = Date.UTC(2026, 9, 1);
const AMOUNTS = [200_000n, 700_000n, 1_000_000n, 1_500_000n, 2_500_000n];

const policy = whatIfPolicy();

/** Each decision with the approvals before it, as the GraphQL read hands them over. */
function withPrior(
  history: readonly PastDecision[],
): { past: PastDecision; prior: PriorApproval[] }[] {
  const prior: PriorApproval[] = [];
  return history.map((past) => {
    const entry = { past, prior: [...prior] };
    if (past.outcome === 'APPROVED')
      prior.push({ intent: past.intent, approvedAtMs: past.decidedAtMs });
    return entry;
  });
}

describe('explain a block', () => {
  test('each suggested amount approves and one atomic unit less does not; the category fix approves category blocks', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.constantFrom(0, 1),
        (seed, withoutInputs) => {
          const history = generateHistory(policy, spendIntent(policy), {
            seed,
            decisions: 120,
            startMs: DAY_START,
            meanGapSeconds: 60,
            categories: ['market-data', 'research', 'gambling'],
            amounts: AMOUNTS,
            withoutInputs,
          });
          let explained = 0;
          for (const { past, prior } of withPrior(history)) {
            if (past.outcome === 'APPROVED' || past.ruleTrace.length === 0) continue;
            const input = { policyId: policy.policyId, rules: policy.rules, past, prior };
            const explanation = explainDecision(input);
            const { judge } = decisionJudge(input);
            expect(explanation.current.decision).toBe(past.decision);
            expect(explanation.rebuiltInputs).toBe(withoutInputs === 1);
            const approves = (
              setting: (typeof explanation.amounts)[number]['setting'],
              atomic: bigint,
            ) => approvesUnder(judge, withAmount(policy.rules, setting, atomic));
            for (const fix of explanation.amounts) {
              const { low, high } = settingRange(policy.rules, fix.setting);
              if (fix.approvingAtomic === null) {
                expect(approves(fix.setting, high)).toBe(false);
                continue;
              }
              expect(fix.approvingAtomic >= low && fix.approvingAtomic <= high).toBe(true);
              expect(approves(fix.setting, fix.approvingAtomic)).toBe(true);
              if (fix.approvingAtomic > low)
                expect(approves(fix.setting, fix.approvingAtomic - 1n)).toBe(false);
            }
            if (past.decision === 'BLOCKED_CATEGORY') {
              expect(explanation.categories.addToAllow).toBe(true);
              expect(explanation.amounts.every((fix) => fix.approvingAtomic === null)).toBe(true);
            }
            if (explanation.categories.approves) expect(past.decision).toBe('BLOCKED_CATEGORY');
            explained += 1;
          }
          expect(explained).toBeGreaterThan(0);
        },
      ),
      { numRuns: 3 },
    );
  });

  test('a budget block: the suggested budget is exactly what was on the books plus the amount', () => {
    const intent = spendIntent(policy, { amount: '1000000' });
    const past: PastDecision = {
      intent,
      decidedAtMs: NOW_MS,
      boundToPolicy: true,
      decision: 'BLOCKED_BUDGET',
      outcome: 'BLOCKED',
      ruleTrace: [],
      inputs: {
        settledAtomic: 11_500_000n,
        reservedAtomic: 0n,
        approvedCallsLastHour: 0,
        vendorScore: 90,
        providerLastAtMs: null,
        approval: null,
        policyStatus: 'ACTIVE',
      },
      reservation: null,
    };
    const explanation = explainDecision({ policyId: policy.policyId, rules: policy.rules, past });
    expect(explanation.current.decision).toBe('BLOCKED_BUDGET');
    const budget = explanation.amounts.find((fix) => fix.setting === 'dailyBudget')!;
    expect(budget).toEqual({
      setting: 'dailyBudget',
      currentAtomic: 12_000_000n,
      approvingAtomic: 12_500_000n,
    });
    expect(explanation.amounts.find((fix) => fix.setting === 'perCallCap')!.approvingAtomic).toBe(
      null,
    );
    expect(explanation.categories.approves).toBe(false);
  });
});
