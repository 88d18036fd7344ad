// create_spend_intent and preflight_payment. A preflight is one transaction under a per-policy
// advisory lock: read the policy and its LedgerWindow, run the pure engine with the injected clock,
// and write decision, trace and receipt, plus a reservation and an approved-call record on
// APPROVED. Concurrent preflights of one policy are serialised by the lock, so they can never
// approve more than the budget. Preflights share transactions (group commit, batchQueue.ts): a
// batch runs in rounds (each policy's first preflight, then its second, …), each round one call of
// `intent.preflight_windows` (the locks and every window) and one of `intent.preflight_records`
// (every decision), with BEGIN and the durable COMMIT paid once per batch (migrations 0003, 0004).
import type { PoolClient, QueryResult } from 'pg';
import { newReceiptId, newReservationId } from '../../core/canon/ids';
import { evaluate, type LedgerWindow, type OwnerApproval, type PolicySnapshot, type RecentApproval } from '../../core/engine';
import { AppError } from '../../core/errors';
import { spendIntentToWire, validateSpendIntent, type SpendIntent } from '../../core/validation/intent';
import type { NormalisedPolicyRules } from '../../core/validation/policy';
import { approvalWasUsed, type EscalationToOpen, escalationToOpen, preflightEscalation } from './escalation';
import type { SubgraphContext } from '../kit';
import { decisionThreadOf } from './decisionThread';
import { BatchNotCommitted, type BatchQueueOptions, type BatchSignals, KeyedBatchQueue, type Settled } from './batchQueue';
import { INTENT_HASH } from './store';

type Db = Pick<PoolClient, 'query'>;
export type Json = Record<string, unknown>;

/** Advisory lock class of intent decisions (the policy subgraph's write lock uses its own). */
export const INTENT_DECISION_LOCK_CLASS = 0x1a7e;
const POLICY_ID = /^[0-9]{1,78}$/;

export function requirePolicyId(policyId: unknown): string {
  if (policyId === undefined || policyId === null || policyId === '') throw new AppError('POLICY_ID_REQUIRED');
  if (typeof policyId !== 'string' || !POLICY_ID.test(policyId)) {
    throw new AppError('REQUEST_INVALID', 'policyId must be a uint256 decimal string.', [{ field: 'policyId', reason: 'must be a uint256 decimal string' }]);
  }
  // One spelling per policy: the lock and the window are keyed by this string, so "007" and "7"
  // must not be two policies (each with its own budget) when current_policy finds the same one.
  return BigInt(policyId).toString();
}

export function validIntent(raw: unknown, now: Date): SpendIntent {
  const result = validateSpendIntent(raw, now);
  if (!result.ok) throw new AppError('INTENT_MALFORMED', undefined, result.errors);
  return result.intent;
}

export async function lockPolicyDecisions(client: Db, policyId: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [INTENT_DECISION_LOCK_CLASS, policyId]);
}

interface CurrentPolicyRow {
  id: string;
  version: number;
  owner: string;
  status: string;
  policy_hash: string;
  rules: NormalisedPolicyRules;
  expires_at: Date | null;
}

/**
 * A policy version's rules never change (a change is a new version), so the rules object of each
 * policy's latest version seen is kept and reused while the version and hash still match: the
 * engine compiles and integrity-checks a rules object once (milliseconds) and caches the result by
 * object identity, and the preflight does not fetch rules it already holds. Bounded; oldest out first.
 */
export const RULES_CACHE_MAX_ENTRIES = 10_000;
interface HeldRules {
  readonly version: number;
  readonly policyHash: string;
  readonly rules: NormalisedPolicyRules;
}
const rulesByPolicy = new Map<string, HeldRules>();

function heldRules(policyId: string, version: number, policyHash: string): HeldRules | undefined {
  const held = rulesByPolicy.get(policyId);
  return held !== undefined && held.version === version && held.policyHash === policyHash ? held : undefined;
}

function holdRules(policyId: string, version: number, policyHash: string, rules: NormalisedPolicyRules): NormalisedPolicyRules {
  const held = heldRules(policyId, version, policyHash);
  if (held !== undefined) return held.rules;
  rulesByPolicy.delete(policyId);
  if (rulesByPolicy.size >= RULES_CACHE_MAX_ENTRIES) rulesByPolicy.delete(rulesByPolicy.keys().next().value as string);
  rulesByPolicy.set(policyId, { version, policyHash, rules });
  return rules;
}

function sharedRules(row: CurrentPolicyRow): NormalisedPolicyRules {
  return holdRules(row.id, row.version, row.policy_hash, row.rules);
}

export async function currentPolicy(db: Db, policyId: string): Promise<PolicySnapshot | null> {
  const result = await db.query<CurrentPolicyRow>('SELECT * FROM policy.current_policy($1)', [policyId]);
  const row = result.rows[0];
  if (row === undefined) return null;
  return {
    policyId: row.id,
    version: row.version,
    status: row.status as PolicySnapshot['status'],
    policyHash: row.policy_hash as PolicySnapshot['policyHash'],
    rules: sharedRules(row),
    expiresAt: row.expires_at,
  };
}

export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** The engine's window from the day's sums and the approvals a rule may look at. */
function windowOf(
  sums: { settled: string; reserved: string; calls: string },
  recentApproved: RecentApproval[],
  lastApprovedAtMsByProvider: Record<string, number>,
): LedgerWindow {
  return {
    settledTodayAtomic: BigInt(sums.settled),
    reservedTodayAtomic: BigInt(sums.reserved),
    approvedCallsLastHour: Number(sums.calls),
    recentApproved,
    lastApprovedAtMsByProvider,
    // No vendor-score source yet: the policy's vendorRisk.onUnavailable decides.
    vendorScore: null,
  };
}

/** The policy's approved calls of the last `windowMinutes` before `now`, newest first (at most 100,000). */
export async function recentApprovals(db: Db, policyId: string, now: Date, windowMinutes: number): Promise<RecentApproval[]> {
  const recent = await db.query<{
    intent_hash: string; capability: string; recipient: string; amount: string; item_hash: string;
    provider: string; agent_id: string; endpoint: string; approved_at: Date;
  }>(
    `SELECT intent_hash, capability, recipient, amount::text AS amount, item_hash, provider, agent_id, endpoint, approved_at
       FROM intent.approved_calls
      WHERE policy_id = $1 AND approved_at > $2::timestamptz - make_interval(mins => $3)
      ORDER BY approved_at DESC, decision_id DESC
      LIMIT 100000`,
    [policyId, now, windowMinutes],
  );
  return recent.rows.map((row) => ({
    intentHash: row.intent_hash,
    capability: row.capability,
    recipient: row.recipient,
    amountAtomic: BigInt(row.amount),
    itemHash: row.item_hash,
    provider: row.provider,
    agentId: row.agent_id,
    endpoint: row.endpoint,
    approvedAtMs: row.approved_at.getTime(),
  }));
}

/**
 * The window slice the read-side tools show (get_ledger, detect_duplicate), without the decision
 * lock: the three sums from the running totals (intent.window_sums, the statements
 * intent.preflight_window runs) and, when the policy has a duplicate window, the approved calls
 * inside it, newest first. The last approval per provider (rule 9) is left out: no tool shows it.
 */
export async function readToolWindow(db: Db, policyId: string, policy: PolicySnapshot | null, now: Date): Promise<LedgerWindow> {
  const sums = await db.query<{ settled: string; reserved: string; calls: string }>(
    'SELECT settled, reserved, calls::text AS calls FROM intent.window_sums($1, $2::date, $3)',
    [policyId, utcDay(now), now],
  );
  const windowMinutes = policy?.rules.duplicates.windowMinutes ?? 0;
  const recentApproved = windowMinutes > 0 ? await recentApprovals(db, policyId, now, windowMinutes) : [];
  return windowOf(sums.rows[0]!, recentApproved, {});
}

// ---------------------------------------------------------------------------------------------
// create_spend_intent

interface StoredIntent {
  intent_hash: string;
  policy_id: string;
  policy_version: number;
  canonical: Json;
  created_at: Date;
}

async function storeIntent(db: Db, intent: SpendIntent, policyId: string, policyVersion: number, now: Date): Promise<StoredIntent> {
  await db.query(
    `INSERT INTO intent.spend_intents (intent_hash, policy_id, policy_version, agent_id, amount, canonical, created_at)
     VALUES ($1, $2::numeric, $3, $4, $5::numeric, $6, $7)
     ON CONFLICT (intent_hash) DO NOTHING`,
    [intent.intentHash, policyId, policyVersion, intent.agentId, intent.amountAtomic.toString(), JSON.stringify(spendIntentToWire(intent)), now],
  );
  const stored = await readStoredIntent(db, intent.intentHash);
  return stored!;
}

async function readStoredIntent(db: Db, intentHash: string): Promise<StoredIntent | null> {
  const result = await db.query<StoredIntent>(
    `SELECT intent_hash, policy_id::text AS policy_id, policy_version, canonical, created_at FROM intent.spend_intents WHERE intent_hash = $1`,
    [intentHash],
  );
  return result.rows[0] ?? null;
}

export async function createSpendIntent(ctx: SubgraphContext, policyIdRaw: unknown, raw: unknown): Promise<Json> {
  const now = ctx.now();
  const intent = validIntent(raw, now);
  const policyId = requirePolicyId(policyIdRaw);
  const policy = await currentPolicy(ctx.db, policyId);
  if (policy === null) throw new AppError('POLICY_NOT_FOUND', undefined, { policyId });
  const stored = await storeIntent(ctx.db, intent, policy.policyId, policy.version, now);
  return {
    intentHash: stored.intent_hash,
    canonicalIntent: stored.canonical,
    policyId: stored.policy_id,
    policyVersion: stored.policy_version,
    onchain: null,
  };
}

/** An intent from the body, or one stored earlier by its hash (404 INTENT_NOT_FOUND). */
export async function resolveIntent(ctx: Pick<SubgraphContext, 'db' | 'now'>, raw: unknown, intentHashRaw: unknown): Promise<SpendIntent> {
  if (raw !== undefined && raw !== null) return validIntent(raw, ctx.now());
  if (typeof intentHashRaw !== 'string' || intentHashRaw === '') {
    throw new AppError('REQUEST_INVALID', 'Give an intent or an intentHash.', [{ field: 'intent', reason: 'required (or intentHash)' }]);
  }
  const hash = intentHashRaw.toLowerCase();
  const stored = INTENT_HASH.test(hash) ? await readStoredIntent(ctx.db, hash) : null;
  if (stored === null) throw new AppError('INTENT_NOT_FOUND', undefined, { intentHash: intentHashRaw });
  // Re-validated at the instant it was stored, so a deadline that has passed since is the engine's
  // BLOCKED_DEADLINE, not a malformed intent.
  const result = validateSpendIntent(stored.canonical, stored.created_at);
  if (!result.ok) throw new AppError('INTERNAL_ERROR', 'A stored intent no longer validates.');
  return result.intent;
}

// ---------------------------------------------------------------------------------------------
// preflight_payment

interface PreflightWindowRow {
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
}

// Named statements: parsed and planned once per connection.
const PREFLIGHT_WINDOWS = { name: 'intent_preflight_windows_v1', text: 'SELECT * FROM intent.preflight_windows($1)' };
const PREFLIGHT_RECORDS = { name: 'intent_preflight_records_v1', text: 'SELECT * FROM intent.preflight_records($1)' };

interface PreflightReading {
  policy: PolicySnapshot | null;
  window: LedgerWindow;
  approval: OwnerApproval | null;
}

/**
 * The engine's inputs from one preflight_window row. `known` is what this process held of the
 * policy's rules when it asked (the row leaves the rules out when they matched).
 */
function readingOf(row: PreflightWindowRow, policyId: string, intent: SpendIntent, known: HeldRules | undefined): PreflightReading {
  let policy: PolicySnapshot | null = null;
  if (row.policy_found) {
    const version = row.version!;
    const policyHash = row.policy_hash!;
    let rules: NormalisedPolicyRules;
    if (row.rules !== null) {
      rules = holdRules(policyId, version, policyHash, row.rules);
    } else {
      // Withheld only when it matched what we passed; `known` is the object we passed.
      if (known === undefined || known.version !== version || known.policyHash !== policyHash) {
        throw new AppError('INTERNAL_ERROR', 'Policy rules were withheld for a version this process does not hold.');
      }
      rules = known.rules;
    }
    policy = {
      policyId,
      version,
      status: row.status as PolicySnapshot['status'],
      policyHash: policyHash as PolicySnapshot['policyHash'],
      rules,
      expiresAt: row.expires_at,
    };
  }
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
  if (row.provider_last_at !== null) lastApprovedAtMsByProvider[intent.provider] = row.provider_last_at.getTime();
  const window = windowOf(row, recentApproved, lastApprovedAtMsByProvider);
  const approval = row.approval === null ? null : { pollRef: row.approval, intentHash: intent.intentHash };
  return { policy, window, approval };
}

/** One element of intent.preflight_windows' argument; `known` is the rules this process holds. */
function windowItem(policyId: string, intent: SpendIntent, now: Date, known: HeldRules | undefined): Json {
  return {
    policyId,
    intentHash: intent.intentHash,
    now: now.toISOString(),
    day: utcDay(now),
    provider: intent.provider,
    knownVersion: known?.version ?? null,
    knownHash: known?.policyHash ?? null,
  };
}

/**
 * Takes the per-policy decision lock and reads, in one call, the policy, the window and an unused
 * owner approval of this intent (a one-item `intent.preflight_windows`, what a batch reads). The
 * window is the raw sums' (intent/test-support.ts rawWindow); the last approved call per provider is read only when rule 9
 * has a cooldown to check.
 */
export async function lockAndReadPreflight(db: Db, policyId: string, intent: SpendIntent, now: Date): Promise<PreflightReading> {
  const known = rulesByPolicy.get(policyId);
  const result = await db.query<PreflightWindowRow>({ ...PREFLIGHT_WINDOWS, values: [JSON.stringify([windowItem(policyId, intent, now, known)])] });
  return readingOf(result.rows[0]!, policyId, intent, known);
}

/** Raised by intent.preflight_record when the owner approval it was to use is gone. */
const APPROVAL_LOST = 'IN001';

/** One preflight waiting for its batch: validated, its policyId in its one spelling. */
interface PreflightRequest {
  /** The queue's key: a policy is in one batch at a time, and its preflights run in arrival order. */
  readonly policyId: string;
  readonly intent: SpendIntent;
  /** The intent came in the body (so it is bound as create_spend_intent binds it). */
  readonly given: boolean;
  /** The caller's clock when the request arrived: the decision's evaluatedAt. */
  readonly now: Date;
  readonly sealingKey: Buffer | undefined;
}

/** What one decision writes (intent.preflight_records' element) and how its answer is built. */
interface DecidedPreflight {
  readonly record: Json;
  respond(row: { escalation_poll_ref: string | null; escalation_expires_at: Date | null }): Json;
}

/** Runs the engine on one request's reading and prepares its writes and its answer. */
function decidePreflight(request: PreflightRequest, reading: PreflightReading): DecidedPreflight {
  const { intent, policyId, now } = request;
  const { policy, window, approval } = reading;
  const decision = evaluate({ intent, policy, window, now, approval });
  let escalation: EscalationToOpen | null = null;
  if (decision.outcome === 'ESCALATED' && policy !== null) {
    if (request.sealingKey === undefined) throw new AppError('INTERNAL_ERROR', 'No sealing key for escalation codes.');
    escalation = escalationToOpen({ policy, decision, sealingKey: request.sealingKey });
  }
  // An intent preflighted directly is bound as create_spend_intent would bind it (when its policy exists).
  const storeIntent = request.given && policy !== null;
  const canonical = storeIntent || escalation !== null ? spendIntentToWire(intent) : null;
  const approved = decision.outcome === 'APPROVED' && policy !== null;
  const reservationId = approved ? newReservationId() : null;
  const reservationExpiresAt = new Date(intent.deadlineUnixSeconds * 1000);
  const asset = policy === null ? null : `${policy.rules.asset.network}/erc20:${policy.rules.asset.token}`;
  const day = utcDay(now);
  const receiptId = newReceiptId();
  const record: Json = {
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
    now: now.toISOString(),
    receiptId,
    storeIntent,
    agentId: intent.agentId,
    amount: intent.amountAtomic.toString(),
    canonical,
    reservationId,
    asset,
    day,
    reservationExpiresAt: reservationExpiresAt.toISOString(),
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
  return {
    record,
    respond: (row) => ({
      decision: decision.decision,
      intentHash: intent.intentHash,
      policyId,
      policyHash: policy?.policyHash ?? null,
      policyVersion: policy?.version ?? null,
      evaluatedAt: now.toISOString(),
      engine: decision.engine,
      ruleTrace: decision.ruleTrace,
      reservation:
        reservationId === null
          ? null
          : {
              reservationId,
              state: 'ACTIVE',
              amountAtomic: intent.amountAtomic.toString(),
              asset,
              day,
              expiresAt: reservationExpiresAt.toISOString(),
            },
      escalation: escalation === null ? null : preflightEscalation(row.escalation_poll_ref!, row.escalation_expires_at!),
      receiptId,
    }),
  };
}

/**
 * An error PostgreSQL answered while the session lives on (severity ERROR): the transaction is
 * aborted or, for COMMIT, rolled back, so nothing of it committed. A lost connection, or a FATAL
 * or PANIC that ends the session, leaves a COMMIT's outcome unknown.
 */
function abortedByServer(error: unknown): boolean {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && severity === 'ERROR';
}

type WindowRow = PreflightWindowRow & { item: number };
type RecordRow = { item: number; escalation_poll_ref: string | null; escalation_expires_at: Date | null };

/** A batch's requests in rounds: round r holds the (r+1)-th request of each policy, by index. */
function roundsOf(requests: readonly PreflightRequest[]): number[][] {
  const seen = new Map<string, number>();
  const rounds: number[][] = [];
  requests.forEach((request, index) => {
    const round = seen.get(request.policyId) ?? 0;
    seen.set(request.policyId, round + 1);
    (rounds[round] ??= []).push(index);
  });
  return rounds;
}

function notCommitted(cause: unknown): BatchNotCommitted {
  const code = (cause as { code?: unknown } | null)?.code;
  return new BatchNotCommitted(code === APPROVAL_LOST ? new AppError('INTERNAL_ERROR', 'An owner approval was used concurrently.') : cause);
}

/**
 * A dollar-quoted literal of `text`: taken verbatim by PostgreSQL (no escapes to write or undo),
 * with a tag the text does not contain. pg's escapeLiteral walks the string in JavaScript, ~10 µs
 * per KiB on the event loop.
 */
export function dollarQuoted(text: string): string {
  let tag = '$json$';
  for (let attempt = 1; text.includes(tag); attempt += 1) tag = `$json${attempt}$`;
  return `${tag}${text}${tag}`;
}

/** A statement with its one JSON argument inlined as a literal (for a multi-statement simple query). */
const withJsonArgument = (fn: 'preflight_windows' | 'preflight_records', argument: Json[]): string =>
  `SELECT * FROM intent.${fn}(${dollarQuoted(JSON.stringify(argument))}::jsonb)`;

/**
 * One batch of preflights in one transaction on one connection. Round by round (the first
 * preflight of each policy, then the second, …, so a policy's later preflight reads the window its
 * earlier one wrote, in the same transaction): read the round's windows
 * (intent.preflight_windows, which takes the policies' locks in key order; a lock already held is
 * held again), run the engine, write the round's decisions (intent.preflight_records). Statements
 * travel together as one simple query, one round trip each: `BEGIN; windows(1)`, then
 * `records(r); windows(r+1)`, then `records(last); COMMIT`. PostgreSQL runs a simple query's
 * statements in order and skips the rest after a failure, so a refused write never reaches the
 * COMMIT behind it. A request the engine step refuses is left out of the write. Anything that fails
 * before the last round trip, or an ERROR in it, leaves nothing committed (BatchNotCommitted: the
 * queue runs each request again alone); a failure with an unknown outcome (the connection lost, a
 * FATAL) is every request's answer.
 */
async function runPreflightBatch(pool: SubgraphContext['db'], requests: readonly PreflightRequest[], signals: BatchSignals): Promise<Array<Settled<Json>>> {
  const rounds = roundsOf(requests);
  const settled: Array<Settled<Json>> = new Array(requests.length);
  const client = await pool.connect();
  let broken = false;
  /** Runs statements as one simple query; each statement's result, in order. */
  const run = async (statements: readonly string[]): Promise<QueryResult[]> => {
    const results = (await client.query(statements.join('; '))) as QueryResult | QueryResult[];
    return Array.isArray(results) ? results : [results];
  };
  const rollback = async (): Promise<void> => {
    broken = await client.query('ROLLBACK').then(() => false, () => true);
  };
  type Recording = { decided: Array<{ index: number; decision: DecidedPreflight }>; rows: RecordRow[] };
  const recordings: Recording[] = [];
  try {
    let lead: string[] = ['BEGIN']; // sent ahead of the next read: BEGIN, then the last round's write
    let leadRecording: Recording | null = null;
    try {
      for (const round of rounds) {
        const known = round.map((index) => rulesByPolicy.get(requests[index]!.policyId));
        const items = round.map((index, position) => windowItem(requests[index]!.policyId, requests[index]!.intent, requests[index]!.now, known[position]));
        const results = await run([...lead, withJsonArgument('preflight_windows', items)]);
        if (leadRecording !== null) leadRecording.rows = results[0]!.rows as RecordRow[];
        const decided: Recording['decided'] = [];
        for (const row of results[results.length - 1]!.rows as WindowRow[]) {
          const index = round[row.item]!;
          const request = requests[index]!;
          try {
            decided.push({ index, decision: decidePreflight(request, readingOf(row, request.policyId, request.intent, known[row.item])) });
          } catch (error) {
            settled[index] = { ok: false, error };
          }
        }
        lead = [];
        leadRecording = null;
        if (decided.length > 0) {
          leadRecording = { decided, rows: [] };
          recordings.push(leadRecording);
          lead = [withJsonArgument('preflight_records', decided.map((entry) => entry.decision.record))];
        }
      }
    } catch (error) {
      // Nothing was committed: COMMIT was never sent.
      await rollback();
      throw notCommitted(error);
    }
    if (recordings.length === 0) {
      await rollback();
      return settled;
    }

    try {
      const committing = run([...lead, 'COMMIT']);
      signals.committing(); // the next batch may read its windows while this one commits
      const results = await committing;
      if (leadRecording !== null) leadRecording.rows = results[0]!.rows as RecordRow[];
    } catch (error) {
      if (!abortedByServer(error)) {
        broken = true;
        throw error; // the connection failed or the session ended: the COMMIT's outcome is unknown
      }
      // The write was refused (PostgreSQL skipped the COMMIT behind it) or the COMMIT rolled back.
      await rollback();
      throw notCommitted(error);
    }
    for (const recording of recordings) {
      for (const row of recording.rows) {
        const entry = recording.decided[row.item]!;
        settled[entry.index] = { ok: true, value: entry.decision.respond(row) };
      }
    }
    return settled;
  } finally {
    client.release(broken);
  }
}

/**
 * A batch holds at most 64 preflights and 16 of one policy; a second batch starts once the first is
 * committing or has run 20 ms, never more than two at once (measured on bench:preflight, see
 * docs/engine.md).
 */
export const PREFLIGHT_BATCH_OPTIONS: BatchQueueOptions = Object.freeze({ maxItems: 64, maxInFlight: 2, maxPerKey: 16, spareAfterMs: 20 });

const preflightQueues = new WeakMap<SubgraphContext['db'], KeyedBatchQueue<PreflightRequest, Json>>();

/** The preflight queue of a pool (one per pool, so every context of a server shares it). */
export function preflightQueue(pool: SubgraphContext['db']): KeyedBatchQueue<PreflightRequest, Json> {
  let queue = preflightQueues.get(pool);
  if (queue === undefined) {
    queue = new KeyedBatchQueue((requests, signals) => runPreflightBatch(pool, requests, signals), PREFLIGHT_BATCH_OPTIONS, (request) => request.policyId);
    preflightQueues.set(pool, queue);
  }
  return queue;
}

/** What a preflight needs of its context: the pool, the clock, the key escalation codes are sealed with. */
export type PreflightDeps = Pick<SubgraphContext, 'db' | 'now' | 'sealingKey'>;

/**
 * preflight_payment: on the pool's decision thread when one is attached (the raw arguments cross
 * and the thread runs preflightPaymentHere), else here.
 */
export async function preflightPayment(ctx: PreflightDeps, policyIdRaw: unknown, raw: unknown, intentHashRaw: unknown): Promise<Json> {
  const thread = decisionThreadOf(ctx.db);
  if (thread === undefined) return preflightPaymentHere(ctx, policyIdRaw, raw, intentHashRaw);
  return thread.submit({ policyId: policyIdRaw, intent: raw, intentHash: intentHashRaw }, ctx.now(), ctx.sealingKey);
}

/** Validates, looks the intent up if need be, and queues the preflight for its batch on this thread. */
export async function preflightPaymentHere(ctx: PreflightDeps, policyIdRaw: unknown, raw: unknown, intentHashRaw: unknown): Promise<Json> {
  const now = ctx.now();
  // Validation first (INTENT_MALFORMED before anything else), then the policyId, then the lookup.
  const given = raw !== undefined && raw !== null ? validIntent(raw, now) : null;
  const policyId = requirePolicyId(policyIdRaw);
  const intent = given ?? (await resolveIntent(ctx, null, intentHashRaw));
  return preflightQueue(ctx.db).submit({ policyId, intent, given: given !== null, now, sealingKey: ctx.sealingKey });
}
