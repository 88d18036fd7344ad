// The what-if replay: the current policy replayed over its own history reproduces every stored
// decision exactly (outcome and trace), on generated histories with escalations, owner approvals,
// expiries, releases and purchases, with inputs stored or rebuilt from the trace; and drafts move
// the decisions they should, carrying their own approvals forward.
import fc from 'fast-check';
import { NOW_MS, policyDocument, rulesOf, spendIntent } from '../test-support/spend-fixtures';
import { generateHistory, whatIfPolicy } from '../test-support/whatif-history';
import { replayPolicy } from './replay';

const DAY_START = Date.UTC(2026, 9, 1);
const AMOUNTS = [200_000n, 700_000n, 1_000_000n, 1_500_000n, 2_500_000n];

const policyWith = whatIfPolicy;

describe('policy what-if replay', () => {
  test('replaying the current policy over its history reproduces every stored decision exactly', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.constantFrom('UTC_DAY', 'ROLLING_24H'),
        fc.constantFrom(0, 0.3, 1),
        fc.constantFrom(30, 90, 240),
        (seed, budgetWindow, withoutInputs, meanGapSeconds) => {
          const policy = policyWith({ budgetWindow });
          const history = generateHistory(policy, spendIntent(policy), {
            seed,
            decisions: 3000,
            startMs: DAY_START,
            meanGapSeconds,
            categories: ['market-data', 'research', 'gambling'],
            amounts: AMOUNTS,
            withoutInputs,
          });
          const outcomes = new Set(history.map((past) => past.decision));
          expect(outcomes.has('APPROVED')).toBe(true);
          expect([...outcomes].some((code) => code.startsWith('ESCALATED'))).toBe(true);
          const ownerApproved = history.some((past) =>
            past.ruleTrace.some((entry) => entry.note?.startsWith('OWNER_APPROVED:')),
          );
          expect(ownerApproved).toBe(true);
          const result = replayPolicy({
            policyId: policy.policyId,
            draft: policy.rules,
            history,
            everyDecision: true,
          });
          result.decisions.forEach((replayed, index) => {
            const past = history[index]!;
            expect(replayed.repeat).toBe(false);
            expect(replayed.after.decision).toBe(past.decision);
            expect(replayed.after.ruleTrace).toEqual(past.ruleTrace);
          });
          expect(result.after).toEqual(result.before);
          expect(result.rebuiltInputs.length > 0).toBe(withoutInputs > 0);
        },
      ),
      { numRuns: 8 },
    );
  });

  test('a lower daily budget blocks the later approvals of a day and spends exactly what it still approves', () => {
    const policy = policyWith({
      duplicates: { windowMinutes: 0, keys: ['itemHash'] },
      cooldowns: { sameServiceMinutes: 0 },
      rateLimit: { callsPerHour: 1000 },
    });
    const history = generateHistory(policy, spendIntent(policy), {
      seed: 7,
      decisions: 2000,
      startMs: DAY_START,
      meanGapSeconds: 60,
      categories: ['market-data'],
      amounts: [500_000n],
      withoutInputs: 0,
    });
    const draft = rulesOf({ ...policyDocument(), ...policy.rules, dailyBudget: '3.00' });
    const result = replayPolicy({ policyId: policy.policyId, draft, history, everyDecision: true });
    const changed = result.decisions.filter((d) => d.after.decision !== d.before.decision);
    expect(changed.length).toBeGreaterThan(0);
    for (const d of changed) {
      expect(['APPROVED', 'ESCALATED']).toContain(d.before.outcome);
      expect(d.after.decision).toBe('BLOCKED_BUDGET');
    }
    // Every approval the draft keeps fits its budget with what it had itself approved before.
    for (const d of result.decisions) {
      if (d.after.outcome === 'APPROVED')
        expect(BigInt(d.after.ruleTrace[12]!.observed!)).toBeLessThanOrEqual(3_000_000n);
    }
    for (const day of result.byDay)
      expect(day.spendAfterAtomic).toBeLessThanOrEqual(day.spendBeforeAtomic);
    const lost = changed.filter((d) => d.before.outcome === 'APPROVED').length;
    expect(result.before.spendAtomic - result.after.spendAtomic).toBe(BigInt(lost) * 500_000n);
  });

  test('adding a category unblocks exactly the intents of that category', () => {
    const policy = policyWith({
      dailyBudget: '10000.00',
      duplicates: { windowMinutes: 0, keys: ['itemHash'] },
      cooldowns: { sameServiceMinutes: 0 },
      rateLimit: { callsPerHour: 1000 },
    });
    const history = generateHistory(policy, spendIntent(policy), {
      seed: 11,
      decisions: 1500,
      startMs: DAY_START,
      meanGapSeconds: 300,
      categories: ['market-data', 'gambling'],
      amounts: [200_000n],
      withoutInputs: 0.5,
    });
    const draft = rulesOf({
      ...policyDocument(),
      ...policy.rules,
      categories: { allow: ['market-data', 'research', 'gambling'], deny: [] },
    });
    const result = replayPolicy({ policyId: policy.policyId, draft, history, everyDecision: true });
    const changed = result.decisions.filter((d) => d.after.decision !== d.before.decision);
    const blockedByCategory = history.filter((p) => p.decision === 'BLOCKED_CATEGORY');
    expect(blockedByCategory.length).toBeGreaterThan(0);
    const changedHashes = new Set(changed.map((d) => d.intentHash));
    for (const past of history) {
      if (past.decision === 'BLOCKED_CATEGORY')
        expect(changedHashes.has(past.intent.intentHash)).toBe(true);
      else
        expect(changedHashes.has(past.intent.intentHash)).toBe(past.intent.category === 'gambling');
    }
    for (const d of changed) expect(d.before.decision).toBe('BLOCKED_CATEGORY');
  });

  test('a draft that escalates above a lower threshold keeps the owner approvals given in history', () => {
    const policy = policyWith({ budgetWindow: 'UTC_DAY', dailyBudget: '10000.00' });
    const history = generateHistory(policy, spendIntent({ ...policy }), {
      seed: 5,
      decisions: 800,
      startMs: NOW_MS,
      meanGapSeconds: 300,
      categories: ['market-data'],
      amounts: AMOUNTS,
      withoutInputs: 0,
    });
    const draft = rulesOf({ ...policyDocument(), ...policy.rules, escalateAbove: '0.50' });
    const result = replayPolicy({ policyId: policy.policyId, draft, history, everyDecision: true });
    result.decisions.forEach((d, index) => {
      const past = history[index]!;
      if (past.inputs?.approval != null && past.decision === 'APPROVED')
        expect(d.after.outcome).toBe('APPROVED');
    });
  });
});
