// Shared fixtures for the core tests: the DECISIONS example policy, a matching intent and an
// empty ledger window, each built through the real validators so tests start from legal input.
// Test support only; nothing in the service imports it.
import { policyHash, policyIdFor } from '../canon/policy-identity';
import { compilePolicy } from '../engine/compile';
import type { LedgerWindow, PolicySnapshot, RecentApproval, RuleContext } from '../engine/types';
import { validateSpendIntent, type SpendIntent } from '../validation/intent';
import { validatePolicy, type NormalisedPolicyRules } from '../validation/policy';
import { formatIsoSeconds } from '../validation/timestamp';

export const OWNER = '0x1111111111111111111111111111111111111111';
export const TOKEN = '0x779ded0c9e1022225f8e0630b35a9b54be713736';
export const RECIPIENT = '0x2a2b2c2d2e2f2a2b2c2d2e2f2a2b2c2d2e2f2a2b';
export const OTHER_ADDRESS = '0x3c3d3e3f3c3d3e3f3c3d3e3f3c3d3e3f3c3d3e3f';
/** 2026-11-22T09:00:00Z */
export const NOW_MS = Date.UTC(2026, 10, 22, 9, 0, 0);
export const NOW_SECONDS = NOW_MS / 1000;
export const ONE_USDT0 = 1_000_000n;

/** The policy from DECISIONS "Spend policy (wire)". */
export function policyDocument(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    owner: OWNER,
    name: 'research agent',
    asset: { network: 'eip155:196', token: TOKEN, symbol: 'USDT0', decimals: 6 },
    dailyBudget: '25.00',
    perCallCap: '2.00',
    onPerCallCapExceeded: 'BLOCK',
    hardCap: '10.00',
    escalateAbove: '1.00',
    categories: { allow: ['market-data', 'security', 'research'], deny: [] },
    recipients: { allow: [], deny: [] },
    agents: { allow: [], deny: [] },
    vendorRisk: { minScore: 50, onBelow: 'ESCALATE', onUnavailable: 'ALLOW' },
    duplicates: { windowMinutes: 60, keys: ['capability', 'recipient', 'amount', 'itemHash'] },
    cooldowns: { sameServiceMinutes: 0 },
    rateLimit: { callsPerHour: 60 },
    escalation: { timeoutMinutes: 30, channels: ['webhook'] },
    maxDeadlineMinutes: 1440,
    expiresAt: '2027-12-31T00:00:00Z',
    ...overrides,
  };
}

export function rulesOf(document: Record<string, unknown>): NormalisedPolicyRules {
  const result = validatePolicy(document);
  if (!result.ok) throw new Error(`fixture policy invalid: ${JSON.stringify(result.errors)}`);
  return result.rules;
}

export function snapshotOf(
  rules: NormalisedPolicyRules,
  options: { status?: 'ACTIVE' | 'PAUSED'; version?: number; ownerNonce?: bigint } = {},
): PolicySnapshot {
  return {
    policyId: policyIdFor(rules.owner, options.ownerNonce ?? 1n),
    version: options.version ?? 1,
    status: options.status ?? 'ACTIVE',
    policyHash: policyHash(rules),
    rules,
    expiresAt: rules.expiresAt === null ? null : new Date(rules.expiresAt),
  };
}

export function policySnapshot(overrides: Record<string, unknown> = {}): PolicySnapshot {
  return snapshotOf(rulesOf(policyDocument(overrides)));
}

/** The identity of the policy an intent names: a PolicySnapshot, or what the REST routes answer. */
export interface NamedPolicy {
  readonly policyId: string;
  readonly policyHash: string;
}

export function wireIntent(
  policy: NamedPolicy,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    policyId: policy.policyId,
    policyHash: policy.policyHash,
    agentId: 'research-bot-1',
    category: 'market-data',
    provider: 'api.vendor.example',
    capability: 'quotes.read',
    item: { description: 'EURUSD 1m candles, 24h', params: { pair: 'EURUSD' } },
    recipient: RECIPIENT,
    network: 'eip155:196',
    token: TOKEN,
    amount: '50000',
    deadline: formatIsoSeconds(NOW_SECONDS + 3600),
    nonce: '1',
    endpoint: 'https://api.vendor.example/candles',
    ...overrides,
  };
}

let freshNonce = 0;

/**
 * A wire intent of its own (a fresh nonce, also in the item's params, so never a duplicate unless
 * asked), its deadline one hour after `nowMs`; `item` without the counter, which is added as `n`.
 */
export function freshWireIntent(
  policy: NamedPolicy,
  nowMs: number,
  overrides: Record<string, unknown> = {},
  item: { description: string; params: Record<string, unknown> } = {
    description: 'EURUSD 1m candles, 24h',
    params: { pair: 'EURUSD' },
  },
): Record<string, unknown> {
  freshNonce += 1;
  return wireIntent(policy, {
    item: { description: item.description, params: { ...item.params, n: freshNonce } },
    deadline: formatIsoSeconds(Math.floor(nowMs / 1000) + 3600),
    nonce: String(freshNonce),
    ...overrides,
  });
}

export function spendIntent(
  policy: PolicySnapshot,
  overrides: Record<string, unknown> = {},
): SpendIntent {
  const result = validateSpendIntent(wireIntent(policy, overrides), NOW_MS);
  if (!result.ok) throw new Error(`fixture intent invalid: ${JSON.stringify(result.errors)}`);
  return result.intent;
}

export function emptyWindow(overrides: Partial<LedgerWindow> = {}): LedgerWindow {
  return {
    settledTodayAtomic: 0n,
    reservedTodayAtomic: 0n,
    approvedCallsLastHour: 0,
    recentApproved: [],
    lastApprovedAtMsByProvider: {},
    vendorScore: 80,
    ...overrides,
  };
}

/** The window record an approval of `intent` at `approvedAtMs` leaves behind. */
export function recentApprovalOf(intent: SpendIntent, approvedAtMs: number): RecentApproval {
  return {
    intentHash: intent.intentHash,
    capability: intent.capability,
    recipient: intent.recipient,
    amountAtomic: intent.amountAtomic,
    itemHash: intent.itemHash,
    provider: intent.provider,
    agentId: intent.agentId,
    endpoint: intent.endpoint,
    approvedAtMs,
  };
}

/** A rule context as evaluate would build it, for testing one rule on its own. */
export function ruleContext(parts: {
  intent: SpendIntent;
  policy: PolicySnapshot | null;
  window?: LedgerWindow;
  nowMs?: number;
  approvalPollRef?: string;
}): RuleContext {
  return {
    intent: parts.intent,
    policy: parts.policy,
    compiled: parts.policy === null ? null : compilePolicy(parts.policy.rules),
    window: parts.window ?? emptyWindow(),
    nowMs: parts.nowMs ?? NOW_MS,
    approvalNote:
      parts.approvalPollRef === undefined ? null : `OWNER_APPROVED:${parts.approvalPollRef}`,
    amountText: parts.intent.amountAtomic.toString(),
  };
}
