// The explainer: one deterministic plain-English line per rule that did not pass, with amounts in
// the policy's asset.
import {
  emptyWindow,
  NOW_MS,
  policySnapshot,
  recentApprovalOf,
  spendIntent,
} from '../test-support/spend-fixtures';
import { evaluate } from './evaluate';
import { explainDecision } from './explain';
import type { EngineInput, LedgerWindow, PolicySnapshot } from './types';

const USDT0 = { symbol: 'USDT0', decimals: 6 };
const policy = policySnapshot();

function explain(
  parts: {
    policy?: PolicySnapshot | null;
    intent?: Record<string, unknown>;
    window?: Partial<LedgerWindow>;
    approval?: boolean;
  } = {},
) {
  const snapshot = parts.policy === undefined ? policy : parts.policy;
  const intent = spendIntent(snapshot ?? policy, parts.intent ?? {});
  const input: EngineInput = {
    intent,
    policy: snapshot,
    window: emptyWindow(parts.window),
    now: NOW_MS,
    approval: parts.approval
      ? { pollRef: 'esc_0123456789abcdef01234567', intentHash: intent.intentHash }
      : null,
  };
  return explainDecision(evaluate(input), snapshot === null ? null : USDT0);
}

describe('explainDecision', () => {
  it('says nothing for a spend every rule passed', () => {
    expect(explain()).toEqual([]);
  });

  it('writes amounts in the asset, as people read them', () => {
    expect(explain({ intent: { amount: '2500000' } })).toEqual([
      'The amount 2.50 USDT0 is above the per-call cap of 2.00 USDT0.',
      'The amount 2.50 USDT0 is above the approval threshold of 1.00 USDT0, so the owner must approve it.',
    ]);
  });

  it('gives one line per rule that did not pass, in rule order', () => {
    const prior = recentApprovalOf(spendIntent(policy, { amount: '26000000' }), NOW_MS - 60_000);
    expect(
      explain({
        intent: { amount: '26000000', category: 'travel' },
        window: {
          vendorScore: 20,
          approvedCallsLastHour: 60,
          recentApproved: [{ ...prior, intentHash: `0x${'ab'.repeat(32)}` }],
        },
      }),
    ).toEqual([
      'The category "travel" is not on the policy\'s allow list.',
      "The provider's vendor score 20 is below the policy's minimum of 50, so the owner must approve it.",
      `The same spend (intent 0x${'ab'.repeat(32)}) was already approved within the last 60 minutes.`,
      'This would be call 61 in the last hour; the policy allows 60.',
      'The amount 26.00 USDT0 is above the hard cap of 10.00 USDT0, which no approval can lift.',
      'The amount 26.00 USDT0 is above the per-call cap of 2.00 USDT0.',
      'Spends approved on 2026-11-22 (UTC), settled or still reserved, plus this amount come to 26.00 USDT0, above the daily budget of 25.00 USDT0.',
      'The amount 26.00 USDT0 is above the approval threshold of 1.00 USDT0, so the owner must approve it.',
    ]);
  });

  it('says which budget window a budget block counted', () => {
    const rolling = policySnapshot({ budgetWindow: 'ROLLING_24H' });
    expect(explain({ policy: rolling, window: { settledTodayAtomic: 25_000_000n } })).toEqual([
      'Spends settled in the last 24 hours and reservations still active, plus this amount, come to 25.05 USDT0, above the budget of 25.00 USDT0 per 24 hours.',
    ]);
  });

  it('names the owner approval that cleared an escalation', () => {
    expect(explain({ intent: { amount: '1500000' }, approval: true })).toEqual([
      'The owner approved this exact intent (esc_0123456789abcdef01234567), which cleared the approval threshold check.',
    ]);
  });

  it('explains a missing policy in one line plus one for the unchecked rules', () => {
    expect(explain({ policy: null })).toEqual([
      'No policy with this policyId exists, so nothing can be approved.',
      'The other 13 rules could not be checked without a policy.',
    ]);
  });

  it('explains a stale policy hash and a paused policy', () => {
    const stale = `0x${'ab'.repeat(32)}`;
    expect(explain({ intent: { policyHash: stale } })).toEqual([
      `The intent was written against policy hash ${stale}, but the policy's current hash is ${policy.policyHash}; create the intent again.`,
    ]);
    expect(explain({ policy: { ...policy, status: 'PAUSED' } })).toEqual([
      'The policy is paused; its owner must make it active before any spend.',
    ]);
  });

  it('explains a fail-closed decision by its reason', () => {
    const intent = spendIntent(policy);
    const decision = evaluate({
      intent,
      policy,
      window: emptyWindow({ settledTodayAtomic: -1n }),
      now: NOW_MS,
    });
    expect(explainDecision(decision, USDT0)).toEqual([
      'The engine could not evaluate this spend safely (WINDOW_MALFORMED:settledTodayAtomic), so it is blocked.',
    ]);
  });

  it('shows atomic units when no asset is known', () => {
    const intent = spendIntent(policy, { amount: '2500000' });
    const decision = evaluate({ intent, policy, window: emptyWindow(), now: NOW_MS });
    expect(explainDecision(decision, null)[0]).toBe(
      'The amount 2500000 atomic units is above the per-call cap of 2000000 atomic units.',
    );
  });
});
