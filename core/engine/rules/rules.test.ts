// One block per rule: it passes, it fails, and the exact boundary (at the limit passes, one unit
// past it does not). Rules are called directly with the context evaluate would build.
import {
  emptyWindow,
  NOW_MS,
  NOW_SECONDS,
  OTHER_ADDRESS,
  policySnapshot,
  RECIPIENT,
  recentApprovalOf,
  ruleContext,
  spendIntent,
} from '../../test-support/spend-fixtures';
import { formatIsoSeconds } from '../../validation/timestamp';
import type { LedgerWindow, PolicySnapshot, Rule, TraceEntry } from '../types';
import { policyBinding } from './01-policy-binding';
import { intentDeadline } from './02-intent-deadline';
import { assetAllowed } from './03-asset-allowed';
import { categoryAllow } from './04-category-allow';
import { recipientAllowDeny } from './05-recipient-allow-deny';
import { agentAllowDeny } from './06-agent-allow-deny';
import { vendorRiskFloor } from './07-vendor-risk-floor';
import { duplicateWindow } from './08-duplicate-window';
import { cooldownSameService } from './09-cooldown-same-service';
import { rateLimit } from './10-rate-limit';
import { hardCapAbsolute } from './11-hard-cap-absolute';
import { perCallCap } from './12-per-call-cap';
import { budgetDaily } from './13-budget-daily';
import { escalateAboveThreshold } from './14-escalate-above-threshold';

const POLL_REF = 'esc_0123456789abcdef01234567';
const policy = policySnapshot();

function run(
  rule: Rule,
  parts: {
    policy?: PolicySnapshot | null;
    intent?: Record<string, unknown>;
    window?: Partial<LedgerWindow>;
    nowMs?: number;
    approved?: boolean;
  } = {},
): TraceEntry {
  const snapshot = parts.policy === undefined ? policy : parts.policy;
  const intent = spendIntent(snapshot ?? policy, parts.intent ?? {});
  return rule.evaluate(
    ruleContext({
      intent,
      policy: snapshot,
      window: emptyWindow(parts.window),
      nowMs: parts.nowMs,
      approvalPollRef: parts.approved === true ? POLL_REF : undefined,
    }),
  );
}

const outcome = (entry: TraceEntry) => [entry.result, entry.note];

describe('every rule with no policy', () => {
  it.each([
    intentDeadline,
    assetAllowed,
    categoryAllow,
    recipientAllowDeny,
    agentAllowDeny,
    vendorRiskFloor,
    duplicateWindow,
    cooldownSameService,
    rateLimit,
    hardCapAbsolute,
    perCallCap,
    budgetDaily,
    escalateAboveThreshold,
  ])('$id is not evaluated, which counts as BLOCK', (rule) => {
    expect(run(rule, { policy: null })).toEqual({
      rule: rule.id,
      result: 'BLOCK',
      observed: null,
      limit: null,
      note: 'NOT_EVALUATED:NO_POLICY',
    });
  });
});

describe('1 policy.binding', () => {
  it('passes for an active, unexpired policy the intent was written against', () => {
    expect(run(policyBinding)).toEqual({
      rule: 'policy.binding',
      result: 'PASS',
      observed: policy.policyHash,
      limit: policy.policyHash,
      note: null,
    });
  });

  it('blocks without a policy', () => {
    expect(outcome(run(policyBinding, { policy: null }))).toEqual([
      'BLOCK',
      'BLOCKED_POLICY_INACTIVE:NOT_FOUND',
    ]);
  });

  it('blocks a paused policy', () => {
    const paused: PolicySnapshot = { ...policy, status: 'PAUSED' };
    expect(outcome(run(policyBinding, { policy: paused }))).toEqual([
      'BLOCK',
      'BLOCKED_POLICY_INACTIVE:PAUSED',
    ]);
  });

  it('blocks from the expiry instant on, not a millisecond before', () => {
    const expiring = policySnapshot({ expiresAt: formatIsoSeconds(NOW_SECONDS + 60) });
    expect(run(policyBinding, { policy: expiring, nowMs: NOW_MS + 59_999 }).result).toBe('PASS');
    expect(run(policyBinding, { policy: expiring, nowMs: NOW_MS + 60_000 })).toEqual({
      rule: 'policy.binding',
      result: 'BLOCK',
      observed: String(NOW_SECONDS + 60),
      limit: String(NOW_SECONDS + 60),
      note: 'BLOCKED_POLICY_INACTIVE:EXPIRED',
    });
  });

  it('blocks an intent written against an older policyHash', () => {
    const stale = `0x${'ab'.repeat(32)}`;
    expect(run(policyBinding, { intent: { policyHash: stale } })).toEqual({
      rule: 'policy.binding',
      result: 'BLOCK',
      observed: stale,
      limit: policy.policyHash,
      note: 'BLOCKED_POLICY_MISMATCH:POLICY_HASH',
    });
  });

  it('blocks an intent written for a different policyId', () => {
    expect(outcome(run(policyBinding, { intent: { policyId: '42' } }))).toEqual([
      'BLOCK',
      'BLOCKED_POLICY_MISMATCH:POLICY_ID',
    ]);
  });
});

describe('2 intent.deadline', () => {
  // The fixture deadline is NOW + 3600 s; this policy allows at most 60 minutes ahead.
  const hourPolicy = policySnapshot({ maxDeadlineMinutes: 60 });
  const deadlineMs = (NOW_SECONDS + 3600) * 1000;

  it('passes a deadline exactly maxDeadlineMinutes ahead', () => {
    expect(run(intentDeadline, { policy: hourPolicy })).toEqual({
      rule: 'intent.deadline',
      result: 'PASS',
      observed: String(NOW_SECONDS + 3600),
      limit: String(NOW_SECONDS + 3600),
      note: null,
    });
  });

  it('blocks a deadline one millisecond further than allowed', () => {
    expect(outcome(run(intentDeadline, { policy: hourPolicy, nowMs: NOW_MS - 1 }))).toEqual([
      'BLOCK',
      'BLOCKED_DEADLINE:TOO_FAR',
    ]);
  });

  it('passes until the deadline and blocks at it', () => {
    expect(run(intentDeadline, { nowMs: deadlineMs - 1 }).result).toBe('PASS');
    expect(run(intentDeadline, { nowMs: deadlineMs })).toEqual({
      rule: 'intent.deadline',
      result: 'BLOCK',
      observed: String(NOW_SECONDS + 3600),
      limit: String(NOW_SECONDS + 3600),
      note: 'BLOCKED_DEADLINE:PASSED',
    });
  });
});

describe('3 asset.allowed', () => {
  it('passes the policy asset', () => {
    expect(run(assetAllowed).result).toBe('PASS');
  });

  it('blocks another token', () => {
    expect(run(assetAllowed, { intent: { token: OTHER_ADDRESS } })).toEqual({
      rule: 'asset.allowed',
      result: 'BLOCK',
      observed: `eip155:196/erc20:${OTHER_ADDRESS}`,
      limit: `eip155:196/erc20:${policy.rules.asset.token}`,
      note: 'BLOCKED_ASSET',
    });
  });

  it('blocks the same token address on another network', () => {
    expect(outcome(run(assetAllowed, { intent: { network: 'eip155:8453' } }))).toEqual([
      'BLOCK',
      'BLOCKED_ASSET',
    ]);
  });
});

describe('4 category.allow', () => {
  const withDeny = policySnapshot({
    categories: { allow: ['market-data', 'research'], deny: ['research'] },
  });

  it('passes an allowed category', () => {
    expect(run(categoryAllow, { policy: withDeny })).toEqual({
      rule: 'category.allow',
      result: 'PASS',
      observed: 'market-data',
      limit: null,
      note: null,
    });
  });

  it('blocks a category that is not on the allow list', () => {
    expect(
      outcome(run(categoryAllow, { policy: withDeny, intent: { category: 'travel' } })),
    ).toEqual(['BLOCK', 'BLOCKED_CATEGORY:NOT_ALLOWED']);
  });

  it('blocks a denied category even when it is also allowed', () => {
    expect(
      outcome(run(categoryAllow, { policy: withDeny, intent: { category: 'research' } })),
    ).toEqual(['BLOCK', 'BLOCKED_CATEGORY:DENIED']);
  });
});

describe('5 recipient.allowDeny', () => {
  it('passes any recipient when the allow list is empty', () => {
    expect(run(recipientAllowDeny, { intent: { recipient: OTHER_ADDRESS } }).result).toBe('PASS');
  });

  it('with an allow list, passes listed recipients and blocks the rest', () => {
    const allowOne = policySnapshot({
      recipients: { allow: [`0x${RECIPIENT.slice(2).toUpperCase()}`] },
    });
    expect(run(recipientAllowDeny, { policy: allowOne }).result).toBe('PASS');
    expect(
      outcome(run(recipientAllowDeny, { policy: allowOne, intent: { recipient: OTHER_ADDRESS } })),
    ).toEqual(['BLOCK', 'BLOCKED_RECIPIENT:NOT_ALLOWED']);
  });

  it('blocks a denied recipient, whatever the case it was written in', () => {
    const denyOne = policySnapshot({ recipients: { allow: [RECIPIENT], deny: [RECIPIENT] } });
    expect(
      run(recipientAllowDeny, {
        policy: denyOne,
        intent: { recipient: `0x${RECIPIENT.slice(2).toUpperCase()}` },
      }),
    ).toEqual({
      rule: 'recipient.allowDeny',
      result: 'BLOCK',
      observed: RECIPIENT,
      limit: null,
      note: 'BLOCKED_RECIPIENT:DENIED',
    });
  });
});

describe('6 agent.allowDeny', () => {
  it('passes any agent when the allow list is empty', () => {
    expect(run(agentAllowDeny).result).toBe('PASS');
  });

  it('with an allow list, compares agent ids exactly (case-sensitive)', () => {
    const allowOne = policySnapshot({ agents: { allow: ['research-bot-1'] } });
    expect(run(agentAllowDeny, { policy: allowOne }).result).toBe('PASS');
    expect(
      outcome(run(agentAllowDeny, { policy: allowOne, intent: { agentId: 'Research-bot-1' } })),
    ).toEqual(['BLOCK', 'BLOCKED_AGENT:NOT_ALLOWED']);
  });

  it('blocks a denied agent', () => {
    const denyOne = policySnapshot({ agents: { deny: ['research-bot-1'] } });
    expect(outcome(run(agentAllowDeny, { policy: denyOne }))).toEqual([
      'BLOCK',
      'BLOCKED_AGENT:DENIED',
    ]);
  });
});

describe('7 vendor.riskFloor', () => {
  const blockBelow = policySnapshot({
    vendorRisk: { minScore: 50, onBelow: 'BLOCK', onUnavailable: 'BLOCK' },
  });
  const escalateBelow = policySnapshot({
    vendorRisk: { minScore: 50, onBelow: 'ESCALATE', onUnavailable: 'ESCALATE' },
  });

  it('passes a score exactly at the floor', () => {
    expect(run(vendorRiskFloor, { policy: blockBelow, window: { vendorScore: 50 } })).toEqual({
      rule: 'vendor.riskFloor',
      result: 'PASS',
      observed: '50',
      limit: '50',
      note: null,
    });
  });

  it('one point below the floor blocks or escalates as the policy says', () => {
    expect(
      outcome(run(vendorRiskFloor, { policy: blockBelow, window: { vendorScore: 49 } })),
    ).toEqual(['BLOCK', 'BLOCKED_VENDOR_RISK:BELOW_FLOOR']);
    expect(
      outcome(run(vendorRiskFloor, { policy: escalateBelow, window: { vendorScore: 49 } })),
    ).toEqual(['ESCALATE', 'ESCALATED_VENDOR_RISK:BELOW_FLOOR']);
  });

  it('an owner approval clears the escalation but never the block', () => {
    expect(
      outcome(
        run(vendorRiskFloor, {
          policy: escalateBelow,
          window: { vendorScore: 49 },
          approved: true,
        }),
      ),
    ).toEqual(['PASS', `OWNER_APPROVED:${POLL_REF}`]);
    expect(
      run(vendorRiskFloor, { policy: blockBelow, window: { vendorScore: 49 }, approved: true })
        .result,
    ).toBe('BLOCK');
  });

  it('an unavailable score follows onUnavailable: ALLOW passes with a note, BLOCK blocks, ESCALATE escalates', () => {
    expect(run(vendorRiskFloor, { window: { vendorScore: null } })).toEqual({
      rule: 'vendor.riskFloor',
      result: 'PASS',
      observed: null,
      limit: '50',
      note: 'VENDOR_SCORE_UNAVAILABLE',
    });
    expect(
      outcome(run(vendorRiskFloor, { policy: blockBelow, window: { vendorScore: null } })),
    ).toEqual(['BLOCK', 'BLOCKED_VENDOR_RISK:SCORE_UNAVAILABLE']);
    expect(
      outcome(run(vendorRiskFloor, { policy: escalateBelow, window: { vendorScore: null } })),
    ).toEqual(['ESCALATE', 'ESCALATED_VENDOR_RISK:SCORE_UNAVAILABLE']);
  });
});

describe('8 duplicate.window', () => {
  const intent = spendIntent(policy);
  const windowMs = 60 * 60_000;

  it('passes with no recent approvals', () => {
    expect(run(duplicateWindow)).toEqual({
      rule: 'duplicate.window',
      result: 'PASS',
      observed: null,
      limit: '3600',
      note: null,
    });
  });

  it('blocks a same-key approval inside the window and names it', () => {
    const prior = {
      ...recentApprovalOf(intent, NOW_MS - windowMs + 1),
      intentHash: `0x${'01'.repeat(32)}`,
    };
    expect(run(duplicateWindow, { window: { recentApproved: [prior] } })).toEqual({
      rule: 'duplicate.window',
      result: 'BLOCK',
      observed: prior.intentHash,
      limit: '3600',
      note: 'BLOCKED_DUPLICATE',
    });
  });

  it('passes an approval exactly windowMinutes old', () => {
    expect(
      run(duplicateWindow, {
        window: { recentApproved: [recentApprovalOf(intent, NOW_MS - windowMs)] },
      }).result,
    ).toBe('PASS');
  });

  it('passes when any key in the tuple differs, and ignores fields outside the tuple', () => {
    const prior = recentApprovalOf(intent, NOW_MS - 1000);
    expect(
      run(duplicateWindow, {
        window: { recentApproved: [{ ...prior, amountAtomic: prior.amountAtomic + 1n }] },
      }).result,
    ).toBe('PASS');
    expect(
      run(duplicateWindow, { window: { recentApproved: [{ ...prior, recipient: OTHER_ADDRESS }] } })
        .result,
    ).toBe('PASS');
    // provider and agentId are not in the default key tuple.
    expect(
      run(duplicateWindow, {
        window: { recentApproved: [{ ...prior, provider: 'other', agentId: 'other' }] },
      }).result,
    ).toBe('BLOCK');
  });

  it('matches stored addresses and hashes whatever their case, so mixed case cannot hide a duplicate', () => {
    const prior = recentApprovalOf(intent, NOW_MS - 1000);
    const shouted = {
      ...prior,
      intentHash: `0x${'AB'.repeat(32)}`,
      recipient: `0x${prior.recipient.slice(2).toUpperCase()}`,
      itemHash: `0x${prior.itemHash.slice(2).toUpperCase()}`,
    };
    expect(run(duplicateWindow, { window: { recentApproved: [shouted] } })).toEqual({
      rule: 'duplicate.window',
      result: 'BLOCK',
      observed: `0x${'ab'.repeat(32)}`,
      limit: '3600',
      note: 'BLOCKED_DUPLICATE',
    });
  });

  it('uses exactly the policy key tuple', () => {
    const byProvider = policySnapshot({ duplicates: { windowMinutes: 60, keys: ['provider'] } });
    const prior = {
      ...recentApprovalOf(intent, NOW_MS - 1000),
      amountAtomic: 1n,
      capability: 'x.y',
    };
    expect(
      run(duplicateWindow, { policy: byProvider, window: { recentApproved: [prior] } }).result,
    ).toBe('BLOCK');
  });

  it('is disabled by a window of 0 minutes', () => {
    const off = policySnapshot({ duplicates: { windowMinutes: 0 } });
    expect(
      run(duplicateWindow, {
        policy: off,
        window: { recentApproved: [recentApprovalOf(intent, NOW_MS)] },
      }),
    ).toEqual({
      rule: 'duplicate.window',
      result: 'PASS',
      observed: null,
      limit: '0',
      note: 'DISABLED',
    });
  });
});

describe('9 cooldown.sameService', () => {
  const tenMinutes = policySnapshot({ cooldowns: { sameServiceMinutes: 10 } });
  const provider = 'api.vendor.example';

  it('passes with no earlier call to the provider, or one to another provider', () => {
    expect(run(cooldownSameService, { policy: tenMinutes }).result).toBe('PASS');
    expect(
      run(cooldownSameService, {
        policy: tenMinutes,
        window: { lastApprovedAtMsByProvider: { other: NOW_MS } },
      }).result,
    ).toBe('PASS');
  });

  it('passes exactly sameServiceMinutes after the last call', () => {
    expect(
      run(cooldownSameService, {
        policy: tenMinutes,
        window: { lastApprovedAtMsByProvider: { [provider]: NOW_MS - 600_000 } },
      }),
    ).toEqual({
      rule: 'cooldown.sameService',
      result: 'PASS',
      observed: '600',
      limit: '600',
      note: null,
    });
  });

  it('blocks one millisecond sooner', () => {
    expect(
      run(cooldownSameService, {
        policy: tenMinutes,
        window: { lastApprovedAtMsByProvider: { [provider]: NOW_MS - 599_999 } },
      }),
    ).toEqual({
      rule: 'cooldown.sameService',
      result: 'BLOCK',
      observed: '599',
      limit: '600',
      note: 'BLOCKED_COOLDOWN',
    });
  });

  it('is disabled at 0 minutes', () => {
    expect(
      run(cooldownSameService, { window: { lastApprovedAtMsByProvider: { [provider]: NOW_MS } } })
        .note,
    ).toBe('DISABLED');
  });

  it('does not mistake inherited object keys for providers', () => {
    expect(
      run(cooldownSameService, { policy: tenMinutes, intent: { provider: 'constructor' } }).result,
    ).toBe('PASS');
  });
});

describe('10 rate.limit', () => {
  it('passes the call that reaches callsPerHour', () => {
    expect(run(rateLimit, { window: { approvedCallsLastHour: 59 } })).toEqual({
      rule: 'rate.limit',
      result: 'PASS',
      observed: '60',
      limit: '60',
      note: null,
    });
  });

  it('blocks the call after it', () => {
    expect(run(rateLimit, { window: { approvedCallsLastHour: 60 } })).toEqual({
      rule: 'rate.limit',
      result: 'BLOCK',
      observed: '61',
      limit: '60',
      note: 'BLOCKED_RATE',
    });
  });
});

describe('11 hardCap.absolute', () => {
  it('passes an amount equal to hardCap', () => {
    expect(run(hardCapAbsolute, { intent: { amount: '10000000' } })).toEqual({
      rule: 'hardCap.absolute',
      result: 'PASS',
      observed: '10000000',
      limit: '10000000',
      note: null,
    });
  });

  it('blocks one atomic unit more, even with an owner approval', () => {
    expect(run(hardCapAbsolute, { intent: { amount: '10000001' }, approved: true })).toEqual({
      rule: 'hardCap.absolute',
      result: 'BLOCK',
      observed: '10000001',
      limit: '10000000',
      note: 'BLOCKED_HARD_CAP',
    });
  });
});

describe('12 perCall.cap', () => {
  const escalating = policySnapshot({ onPerCallCapExceeded: 'ESCALATE' });

  it('passes an amount equal to perCallCap', () => {
    expect(run(perCallCap, { intent: { amount: '2000000' } })).toEqual({
      rule: 'perCall.cap',
      result: 'PASS',
      observed: '2000000',
      limit: '2000000',
      note: null,
    });
  });

  it('blocks one atomic unit more under BLOCK, approval or not', () => {
    expect(outcome(run(perCallCap, { intent: { amount: '2000001' } }))).toEqual([
      'BLOCK',
      'BLOCKED_PER_CALL_CAP',
    ]);
    expect(outcome(run(perCallCap, { intent: { amount: '2000001' }, approved: true }))).toEqual([
      'BLOCK',
      'BLOCKED_PER_CALL_CAP',
    ]);
  });

  it('escalates one atomic unit more under ESCALATE, and an approval passes it', () => {
    expect(outcome(run(perCallCap, { policy: escalating, intent: { amount: '2000001' } }))).toEqual(
      ['ESCALATE', 'ESCALATED_PER_CALL_CAP'],
    );
    expect(
      outcome(
        run(perCallCap, { policy: escalating, intent: { amount: '2000001' }, approved: true }),
      ),
    ).toEqual(['PASS', `OWNER_APPROVED:${POLL_REF}`]);
  });
});

describe('13 budget.daily', () => {
  // dailyBudget 25.00 = 25 000 000; the intent spends 50 000.
  it('passes when settled + reserved + amount equals the budget; the note names the UTC day it counts toward', () => {
    expect(
      run(budgetDaily, {
        window: { settledTodayAtomic: 20_000_000n, reservedTodayAtomic: 4_950_000n },
      }),
    ).toEqual({
      rule: 'budget.daily',
      result: 'PASS',
      observed: '25000000',
      limit: '25000000',
      note: 'UTC_DAY:2026-11-22',
    });
  });

  it('blocks one atomic unit over, counting active reservations', () => {
    expect(
      run(budgetDaily, {
        window: { settledTodayAtomic: 20_000_000n, reservedTodayAtomic: 4_950_001n },
      }),
    ).toEqual({
      rule: 'budget.daily',
      result: 'BLOCK',
      observed: '25000001',
      limit: '25000000',
      note: 'BLOCKED_BUDGET:UTC_DAY:2026-11-22',
    });
    expect(run(budgetDaily, { window: { reservedTodayAtomic: 24_950_001n } }).result).toBe('BLOCK');
  });

  it('names the UTC day of now, to the millisecond around midnight', () => {
    const midnight = Date.UTC(2026, 10, 23);
    expect(run(budgetDaily, { nowMs: midnight - 1 }).note).toBe('UTC_DAY:2026-11-22');
    expect(run(budgetDaily, { nowMs: midnight }).note).toBe('UTC_DAY:2026-11-23');
    expect(run(budgetDaily, { nowMs: midnight - 1 }).note).toBe('UTC_DAY:2026-11-22');
  });

  it('under ROLLING_24H the note says so, and the limit and boundary are the same', () => {
    const rolling = policySnapshot({ budgetWindow: 'ROLLING_24H' });
    expect(
      run(budgetDaily, { policy: rolling, window: { settledTodayAtomic: 24_950_000n } }),
    ).toEqual({
      rule: 'budget.daily',
      result: 'PASS',
      observed: '25000000',
      limit: '25000000',
      note: 'ROLLING_24H',
    });
    expect(
      run(budgetDaily, { policy: rolling, window: { settledTodayAtomic: 24_950_001n } }),
    ).toEqual({
      rule: 'budget.daily',
      result: 'BLOCK',
      observed: '25000001',
      limit: '25000000',
      note: 'BLOCKED_BUDGET:ROLLING_24H',
    });
  });
});

describe('14 escalate.aboveThreshold', () => {
  it('passes an amount equal to escalateAbove', () => {
    expect(run(escalateAboveThreshold, { intent: { amount: '1000000' } })).toEqual({
      rule: 'escalate.aboveThreshold',
      result: 'PASS',
      observed: '1000000',
      limit: '1000000',
      note: null,
    });
  });

  it('escalates one atomic unit more', () => {
    expect(run(escalateAboveThreshold, { intent: { amount: '1000001' } })).toEqual({
      rule: 'escalate.aboveThreshold',
      result: 'ESCALATE',
      observed: '1000001',
      limit: '1000000',
      note: 'ESCALATED_THRESHOLD',
    });
  });

  it('passes it once the owner approved this intent', () => {
    expect(
      outcome(run(escalateAboveThreshold, { intent: { amount: '1000001' }, approved: true })),
    ).toEqual(['PASS', `OWNER_APPROVED:${POLL_REF}`]);
  });
});
