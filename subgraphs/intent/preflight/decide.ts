// One preflight decided, with no I/O: the engine's inputs from a preflight_windows row, the engine
// at the decision's instant, what the decision writes (an intent.preflight_records element) and
// the DECISIONS preflight response built from it. Fresh ids and escalation codes are drawn through
// DecisionDraws, so the same row, instant and draws always decide and answer the same way.
import {
  evaluate,
  type Decision,
  type LedgerWindow,
  type OwnerApproval,
  type PolicySnapshot,
  type RecentApproval,
} from '../../../core/engine';
import { AppError } from '../../../core/errors';
import { spendIntentToWire, type SpendIntent } from '../../../core/validation/intent';
import { inputsToJson } from '../../../core/whatif/history';
import type { NormalisedPolicyRules } from '../../../core/validation/policy';
import { utcDay } from '../day';
import {
  approvalWasUsed,
  type EscalationToOpen,
  preflightEscalation,
} from '../decisions/escalation';
import type { WindowOutcomes } from '../trust/outcomes';
import { vendorScoreOfWindow } from '../trust/score';
import type { Json } from '../views';

/** The decision, receipt and ACTIVE reservation of an earlier approval of the same intent. */
export interface ReplayRow {
  decision: string;
  policyHash: string | null;
  policyVersion: number | null;
  evaluatedAtMs: number;
  engine: Json;
  ruleTrace: unknown[];
  receiptId: string;
  reservationId: string;
  amount: string;
  asset: string;
  day: string;
  expiresAtMs: number;
}

/** One row of `intent.preflight_windows` (migration 0011), read under the policy's decision lock. */
export interface PreflightWindowRow {
  policy_found: boolean;
  version: number | null;
  status: string | null;
  policy_hash: string | null;
  /** Null when the caller passed the version and hash of the rules it already holds. */
  rules: NormalisedPolicyRules | null;
  expires_at: Date | null;
  settled: string;
  reserved: string;
  calls: string;
  provider_last_at: Date | null;
  /** [intentHash, capability, recipient, amount, itemHash, provider, agentId, endpoint, approvedAtMs] */
  recent: Array<[string, string, string, string, string, string, string, string, number]> | null;
  approval: string | null;
  /** While the lock is held, nothing in this row changes before this instant (migration 0011). */
  valid_until: Date;
  /** Set when this intent's approval still holds an ACTIVE reservation: the answer to a repeat. */
  replay: ReplayRow | null;
  /** The provider's counted outcomes (migration 0019), rule 7's input; null without history. */
  vendor_outcomes?: WindowOutcomes | null;
}

/** The engine's inputs a preflight reads: the policy, the window and an unused owner approval. */
export interface PreflightReading {
  policy: PolicySnapshot | null;
  window: LedgerWindow;
  approval: OwnerApproval | null;
}

/** What decides one preflight: its validated intent, the policyId in its one spelling. */
export interface PreflightToDecide {
  readonly policyId: string;
  readonly intent: SpendIntent;
  /** The intent came in the body (so it is bound as create_spend_intent binds it). */
  readonly given: boolean;
  readonly sealingKey: Buffer | undefined;
}

/** The fresh values a decision draws: ids, and the escalation to open for an ESCALATED_* one. */
export interface DecisionDraws {
  receiptId(): string;
  reservationId(): string;
  escalation(policy: PolicySnapshot, decision: Decision, sealingKey: Buffer): EscalationToOpen;
}

/** What one decision writes (intent.preflight_records' element) and how its answer is built. */
export interface DecidedPreflight {
  readonly record: Json;
  respond(row: { escalation_poll_ref: string | null; escalation_expires_at: Date | null }): Json;
}

/** The engine's window from the budget window's sums and the approvals a rule may look at. */
export function windowOf(
  sums: { settled: string; reserved: string; calls: string },
  recentApproved: RecentApproval[],
  lastApprovedAtMsByProvider: Record<string, number>,
  vendorScore: number | null = null,
): LedgerWindow {
  return {
    settledTodayAtomic: BigInt(sums.settled),
    reservedTodayAtomic: BigInt(sums.reserved),
    approvedCallsLastHour: Number(sums.calls),
    recentApproved,
    lastApprovedAtMsByProvider,
    // The service's own score of the provider; null (too little history): vendorRisk.onUnavailable.
    vendorScore,
  };
}

/** The engine's inputs from one preflight_windows row and the policy it names (policy.ts policyOf). */
export function readingOf(
  row: PreflightWindowRow,
  intent: SpendIntent,
  policy: PolicySnapshot | null,
): PreflightReading {
  const recentApproved: RecentApproval[] = (row.recent ?? []).map((entry) => ({
    intentHash: entry[0],
    capability: entry[1],
    recipient: entry[2],
    amountAtomic: BigInt(entry[3]),
    itemHash: entry[4],
    provider: entry[5],
    agentId: entry[6],
    endpoint: entry[7],
    approvedAtMs: entry[8],
  }));
  const lastApprovedAtMsByProvider: Record<string, number> = {};
  if (row.provider_last_at !== null)
    lastApprovedAtMsByProvider[intent.provider] = row.provider_last_at.getTime();
  const window = windowOf(
    row,
    recentApproved,
    lastApprovedAtMsByProvider,
    vendorScoreOfWindow(row.vendor_outcomes),
  );
  const approval =
    row.approval === null ? null : { pollRef: row.approval, intentHash: intent.intentHash };
  return { policy, window, approval };
}

/** Everything a decided preflight's record and answer are built from. */
interface Decided {
  readonly request: PreflightToDecide;
  readonly reading: PreflightReading;
  readonly decision: Decision;
  readonly now: Date;
  readonly escalation: EscalationToOpen | null;
  readonly reservationId: string | null;
  readonly receiptId: string;
  readonly asset: string | null;
  readonly day: string;
  readonly reservationExpiresAt: Date;
}

/** Runs the engine on one request's reading at `now` and prepares its writes and its answer. */
export function decidePreflight(
  request: PreflightToDecide,
  reading: PreflightReading,
  now: Date,
  draws: DecisionDraws,
): DecidedPreflight {
  const { intent } = request;
  const { policy, window, approval } = reading;
  const decision = evaluate({ intent, policy, window, now, approval });
  let escalation: EscalationToOpen | null = null;
  if (decision.outcome === 'ESCALATED' && policy !== null) {
    if (request.sealingKey === undefined)
      throw new AppError('INTERNAL_ERROR', 'No sealing key for escalation codes.');
    escalation = draws.escalation(policy, decision, request.sealingKey);
  }
  const approved = decision.outcome === 'APPROVED' && policy !== null;
  const decided: Decided = {
    request,
    reading,
    decision,
    now,
    escalation,
    reservationId: approved ? draws.reservationId() : null,
    receiptId: draws.receiptId(),
    asset:
      policy === null ? null : `${policy.rules.asset.network}/erc20:${policy.rules.asset.token}`,
    day: utcDay(now),
    reservationExpiresAt: new Date(intent.deadlineUnixSeconds * 1000),
  };
  return { record: recordOf(decided), respond: (row) => responseOf(decided, row) };
}

/** The intent.preflight_records element of a decision. */
function recordOf(decided: Decided): Json {
  const { request, decision, escalation } = decided;
  const { intent, policyId } = request;
  const { policy, approval } = decided.reading;
  // An intent preflighted directly is bound as create_spend_intent would bind it (when its policy exists).
  const storeIntent = request.given && policy !== null;
  const canonical = storeIntent || escalation !== null ? spendIntentToWire(intent) : null;
  return {
    intentHash: intent.intentHash,
    policyId,
    policyVersion: policy?.version ?? null,
    policyHash: policy?.policyHash ?? null,
    decision: decision.decision,
    outcome: decision.outcome,
    decidingRule: decision.decidingRule,
    ruleTrace: decision.ruleTrace,
    engine: decision.engine,
    failClosedReason: decision.failClosedReason,
    inputs: inputsOf(decided.reading, intent),
    now: decided.now.toISOString(),
    receiptId: decided.receiptId,
    storeIntent,
    agentId: intent.agentId,
    amount: intent.amountAtomic.toString(),
    canonical,
    reservationId: decided.reservationId,
    asset: decided.asset,
    day: decided.day,
    reservationExpiresAt: decided.reservationExpiresAt.toISOString(),
    provider: intent.provider,
    capability: intent.capability,
    recipient: intent.recipient,
    itemHash: intent.itemHash,
    endpoint: intent.endpoint,
    useApproval: approvalWasUsed(decision, approval) ? approval.pollRef : null,
    escalationPollRef: escalation?.pollRef ?? null,
    escalationRule: escalation?.decidingRule ?? null,
    escalationReason: escalation?.reason ?? null,
    codeSha256: escalation?.codeSha256.toString('hex') ?? null,
    sealedCode: escalation?.sealedCode.toString('hex') ?? null,
  };
}

/** What the engine saw beyond the intent and the policy, kept with the decision (policy what-if). */
function inputsOf(reading: PreflightReading, intent: SpendIntent): Json {
  const { window, approval, policy } = reading;
  return inputsToJson({
    settledAtomic: window.settledTodayAtomic,
    reservedAtomic: window.reservedTodayAtomic,
    approvedCallsLastHour: window.approvedCallsLastHour,
    vendorScore: window.vendorScore,
    providerLastAtMs: window.lastApprovedAtMsByProvider[intent.provider] ?? null,
    approval: approval?.pollRef ?? null,
    policyStatus: policy?.status ?? 'ACTIVE',
  }) as Json;
}

/** The DECISIONS preflight response, once the record's row (its escalation) is back. */
function responseOf(
  decided: Decided,
  row: { escalation_poll_ref: string | null; escalation_expires_at: Date | null },
): Json {
  const { request, decision, reservationId } = decided;
  const { policy } = decided.reading;
  return {
    decision: decision.decision,
    intentHash: request.intent.intentHash,
    policyId: request.policyId,
    policyHash: policy?.policyHash ?? null,
    policyVersion: policy?.version ?? null,
    evaluatedAt: decided.now.toISOString(),
    engine: decision.engine,
    ruleTrace: decision.ruleTrace,
    reservation:
      reservationId === null
        ? null
        : {
            reservationId,
            state: 'ACTIVE',
            amountAtomic: request.intent.amountAtomic.toString(),
            asset: decided.asset,
            day: decided.day,
            expiresAt: decided.reservationExpiresAt.toISOString(),
          },
    escalation:
      decided.escalation === null
        ? null
        : preflightEscalation(row.escalation_poll_ref!, row.escalation_expires_at!),
    receiptId: decided.receiptId,
  };
}

/** The answer to a repeat of an intent whose approval still holds its reservation: that approval, as first answered. */
export function replayAnswer(request: PreflightToDecide, replay: ReplayRow): Json {
  return {
    decision: replay.decision,
    intentHash: request.intent.intentHash,
    policyId: request.policyId,
    policyHash: replay.policyHash,
    policyVersion: replay.policyVersion,
    evaluatedAt: new Date(replay.evaluatedAtMs).toISOString(),
    engine: replay.engine,
    ruleTrace: replay.ruleTrace,
    reservation: {
      reservationId: replay.reservationId,
      state: 'ACTIVE',
      amountAtomic: replay.amount,
      asset: replay.asset,
      day: replay.day,
      expiresAt: new Date(replay.expiresAtMs).toISOString(),
    },
    escalation: null,
    receiptId: replay.receiptId,
  };
}
