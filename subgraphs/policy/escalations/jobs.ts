// The background work of escalations, as jobs claimed from Postgres with FOR UPDATE SKIP LOCKED so
// any number of workers may run: the sweep that expires overdue escalations (fail closed: the
// default is deny), and the delivery of notices to the owner's bound channels with bounded
// retries and backoff. A failed channel is logged on the escalation; its clock runs regardless.
// A delivered (or abandoned) notice's sealed code is wiped: only the code's sha256 stays.
// The same job, with the same claim, bounds and backoff, delivers a consumer intent's outcome
// notice (migration 0012; built by ../notices/outcomes.ts): no code, nothing to wipe, and its
// failures stay on the delivery row (state, attempts, last_error) since there is no escalation.
import type {
  ChannelAdapter,
  ChannelKind,
  ChannelTarget,
  DeliveryResult,
  EscalationNotice,
  ResolutionNotice,
} from '../../../channels/types';
import { ChannelDeliveryError } from '../../../channels/errors';
import { formatAmount } from '../../../core/money/amount';
import type { Logger } from '../../../platform/log';
import { SealError, unseal } from '../../../platform/sealing';
import { type Db, type DbPool, withTransaction } from '../../../platform/db';
import { outcomeNoticeOf } from '../notices/outcomes';
import { insertEscalationEvent } from './writes';

/** Escalations expired per sweep statement; the sweep repeats until fewer are due. */
export const SWEEP_BATCH = 200;
/** Deliveries claimed per round. */
export const DELIVERY_BATCH = 20;
/** Attempts per delivery, and the wait before each retry (the last wait is reused). */
export const MAX_DELIVERY_ATTEMPTS = 5;
export const DELIVERY_BACKOFF_MS: readonly number[] = [1_000, 5_000, 30_000, 120_000];
/** A claimed delivery is invisible to other workers this long; a worker that dies mid-send frees it then. */
export const DELIVERY_LEASE_MS = 60_000;

/** Expires every overdue PENDING escalation once, whichever worker gets there; returns the pollRefs it expired. */
export async function sweepExpiredEscalations(db: Db, now: Date): Promise<string[]> {
  const expired: string[] = [];
  for (;;) {
    const result = await db.query<{ poll_ref: string }>(
      `WITH due AS (
         SELECT poll_ref FROM policy.escalations
          WHERE state = 'PENDING' AND expires_at <= $1
          ORDER BY expires_at LIMIT $2
          FOR UPDATE SKIP LOCKED
       ), expired AS (
         UPDATE policy.escalations e SET state = 'EXPIRED', resolved_at = e.expires_at
           FROM due WHERE e.poll_ref = due.poll_ref AND e.state = 'PENDING'
         RETURNING e.poll_ref, e.owner, e.expires_at
       )
       INSERT INTO policy.escalation_events (poll_ref, owner, kind, detail, at)
       SELECT poll_ref, owner, 'EXPIRED', 'no decision before the timeout: default deny', expires_at FROM expired
       RETURNING poll_ref`,
      [now, SWEEP_BATCH],
    );
    expired.push(...result.rows.map((row) => row.poll_ref));
    if (result.rows.length < SWEEP_BATCH) return expired;
  }
}

export interface DeliveryDeps {
  readonly db: DbPool;
  readonly sealingKey: Buffer;
  readonly adapters: Partial<Record<ChannelKind, ChannelAdapter>>;
  /** Base of the owner's dashboard links; a notice links to `<base>/escalations/<pollRef>`. */
  readonly dashboardBaseUrl: string;
  /** Where an email confirmation link points (the gateway's public URL); default the dashboard's origin. */
  readonly publicUrl?: string;
  readonly log: Logger;
}

/** A claimed delivery: the escalation's columns for an escalation notice, the outcome's for the other kind. */
interface ClaimedDelivery {
  delivery_id: string;
  notice_kind:
    'ESCALATION' | 'CONSUMER_INTENT_OUTCOME' | 'ESCALATION_RESOLVED' | 'EMAIL_CONFIRMATION';
  attempts: number;
  sealed_payload: Buffer | null;
  kind: ChannelKind;
  address: string | null;
  sealed_secret: Buffer | null;
  binding_id: string;
  owner: string;
  policy_id: string | null;
  poll_ref: string | null;
  amount: string | null;
  recipient: string | null;
  intent: { item?: { description?: unknown } } | null;
  deciding_rule: string | null;
  rule_reason: string | null;
  expires_at: Date | null;
  rules: { name?: string; asset: { symbol: string; decimals: number; network: string } } | null;
  intent_id: string | null;
  outcome: string | null;
  payload: Record<string, unknown> | null;
  escalation_state: 'PENDING' | 'APPROVED' | 'DENIED' | 'EXPIRED' | null;
  resolved_at: Date | null;
  resolved_via: string | null;
  link_expires_at: Date;
}

type EscalationDelivery = ClaimedDelivery & {
  poll_ref: string;
  amount: string;
  recipient: string;
  intent: { item?: { description?: unknown } };
  deciding_rule: string;
  rule_reason: string;
  expires_at: Date;
  rules: { name?: string; asset: { symbol: string; decimals: number; network: string } };
};

async function claimDeliveries(db: DbPool, now: Date): Promise<ClaimedDelivery[]> {
  return withTransaction(db, async (client) => {
    const result = await client.query<ClaimedDelivery>(
      `WITH claimed AS (
         UPDATE policy.channel_deliveries d
            SET attempts = d.attempts + 1, next_attempt_at = $1::timestamptz + make_interval(secs => $3::double precision / 1000), updated_at = $1
          WHERE d.delivery_id IN (
            SELECT delivery_id FROM policy.channel_deliveries
             WHERE state = 'PENDING' AND next_attempt_at <= $1
             ORDER BY next_attempt_at LIMIT $2
             FOR UPDATE SKIP LOCKED)
         RETURNING d.*
       )
       SELECT c.delivery_id::text, c.notice_kind, c.attempts, c.sealed_payload, b.kind, b.address, b.sealed_secret,
              b.binding_id, coalesce(e.owner, b.owner) AS owner, coalesce(e.policy_id, c.policy_id)::text AS policy_id,
              c.poll_ref, e.amount::text AS amount, e.recipient, e.intent, e.deciding_rule, e.rule_reason,
              e.expires_at, p.rules, c.intent_id, c.outcome, c.payload, e.state AS escalation_state,
              e.resolved_at, e.resolved_via, b.link_expires_at
         FROM claimed c
         JOIN policy.channel_bindings b ON b.binding_id = c.binding_id
         LEFT JOIN policy.escalations e ON e.poll_ref = c.poll_ref
         LEFT JOIN policy.policies p ON p.policy_id = e.policy_id AND p.version = e.policy_version`,
      [now, DELIVERY_BATCH, DELIVERY_LEASE_MS],
    );
    return result.rows;
  });
}

function noticeOf(
  row: EscalationDelivery,
  code: string,
  dashboardBaseUrl: string,
): EscalationNotice {
  const description = row.intent.item?.description;
  return {
    pollRef: row.poll_ref,
    code,
    policyId: row.policy_id ?? '',
    policyName: typeof row.rules.name === 'string' && row.rules.name !== '' ? row.rules.name : null,
    amountDisplay: formatAmount(BigInt(row.amount), row.rules.asset.decimals),
    assetSymbol: row.rules.asset.symbol,
    network: row.rules.asset.network,
    recipient: row.recipient,
    item:
      typeof description === 'string' && description !== '' ? description : 'no description given',
    ruleId: row.deciding_rule,
    ruleName: row.deciding_rule,
    ruleReason: row.rule_reason,
    expiresAt: row.expires_at,
    dashboardUrl: `${dashboardBaseUrl.replace(/\/+$/, '')}/escalations/${row.poll_ref}`,
  };
}

async function finish(
  db: Db,
  row: ClaimedDelivery,
  outcome: {
    state: 'SENT' | 'FAILED' | 'PENDING';
    externalId?: string | null;
    error?: string;
    retryAt?: Date;
  },
  now: Date,
): Promise<void> {
  const keepCode = outcome.state === 'PENDING';
  const updated = await db.query(
    `UPDATE policy.channel_deliveries
        SET state = $2, external_id = $3, last_error = $4, updated_at = $5,
            next_attempt_at = coalesce($6, next_attempt_at), sealed_payload = CASE WHEN $7 THEN sealed_payload END
      WHERE delivery_id = $1 AND state = 'PENDING'`,
    [
      row.delivery_id,
      outcome.state,
      outcome.externalId ?? null,
      outcome.error?.slice(0, 500) ?? null,
      now,
      outcome.retryAt ?? null,
      keepCode,
    ],
  );
  // Cancelled meanwhile (the escalation was decided or expired): nothing more to record. An
  // outcome notice has no escalation to log on: its row (state, attempts, last_error) is the record.
  if (updated.rowCount !== 1 || row.poll_ref === null || row.notice_kind !== 'ESCALATION') return;
  const kind =
    outcome.state === 'SENT'
      ? 'DELIVERY_SENT'
      : outcome.state === 'FAILED'
        ? 'DELIVERY_GAVE_UP'
        : 'DELIVERY_FAILED';
  const detail =
    outcome.state === 'SENT'
      ? `attempt ${row.attempts}`
      : `attempt ${row.attempts}: ${outcome.error}`;
  await insertEscalationEvent(db, {
    pollRef: row.poll_ref,
    owner: row.owner,
    kind,
    channel: row.kind,
    sender: row.binding_id,
    detail,
    at: now,
  });
}

function resolutionNoticeOf(row: ClaimedDelivery, dashboardBaseUrl: string): ResolutionNotice {
  const state = row.escalation_state;
  if (
    row.poll_ref === null ||
    row.rules === null ||
    row.amount === null ||
    row.resolved_at === null
  )
    throw new SealError('the delivery carries no resolved escalation');
  if (state !== 'APPROVED' && state !== 'DENIED' && state !== 'EXPIRED')
    throw new SealError('the escalation is not resolved');
  const description = row.intent?.item?.description;
  return {
    pollRef: row.poll_ref,
    outcome: state,
    policyId: row.policy_id ?? '',
    policyName: typeof row.rules.name === 'string' && row.rules.name !== '' ? row.rules.name : null,
    amountDisplay: formatAmount(BigInt(row.amount), row.rules.asset.decimals),
    assetSymbol: row.rules.asset.symbol,
    item:
      typeof description === 'string' && description !== '' ? description : 'no description given',
    resolvedAt: row.resolved_at,
    resolvedVia: row.resolved_via,
    dashboardUrl: `${dashboardBaseUrl.replace(/\/+$/, '')}/escalations/${row.poll_ref}`,
  };
}

/** The single-use link the gateway's GET /channels/email/confirm answers. */
function confirmationUrl(deps: DeliveryDeps, bindingId: string, code: string): string {
  const base = deps.publicUrl ?? new URL(deps.dashboardBaseUrl).origin;
  const url = new URL('/channels/email/confirm', base);
  url.searchParams.set('binding', bindingId);
  url.searchParams.set('code', code);
  return url.toString();
}

type Send = (adapter: ChannelAdapter, target: ChannelTarget) => Promise<DeliveryResult>;

/** What sending this row means: the escalation with its unsealed code, or the outcome notice. */
function senderOf(deps: DeliveryDeps, row: ClaimedDelivery): Send {
  if (row.notice_kind === 'CONSUMER_INTENT_OUTCOME') {
    const notice = outcomeNoticeOf(row, deps.dashboardBaseUrl);
    return (adapter, target) => adapter.sendOutcome(target, notice);
  }
  if (row.notice_kind === 'ESCALATION_RESOLVED') {
    const notice = resolutionNoticeOf(row, deps.dashboardBaseUrl);
    return (adapter, target) => adapter.sendResolution(target, notice);
  }
  if (row.notice_kind === 'EMAIL_CONFIRMATION') {
    if (row.sealed_payload === null) throw new SealError('nothing to deliver');
    const url = confirmationUrl(deps, row.binding_id, unseal(deps.sealingKey, row.sealed_payload));
    return (adapter, target) => {
      if (adapter.sendConfirmation === undefined)
        throw new SealError(`the ${adapter.kind} channel sends no confirmation`);
      return adapter.sendConfirmation(target, url, row.link_expires_at);
    };
  }
  if (row.sealed_payload === null || row.poll_ref === null || row.rules === null)
    throw new SealError('nothing to deliver');
  const code = unseal(deps.sealingKey, row.sealed_payload);
  const notice = noticeOf(row as EscalationDelivery, code, deps.dashboardBaseUrl);
  return (adapter, target) => adapter.send(target, notice);
}

async function deliverOne(deps: DeliveryDeps, row: ClaimedDelivery, now: Date): Promise<void> {
  const adapter = deps.adapters[row.kind];
  if (adapter === undefined) {
    await finish(
      deps.db,
      row,
      { state: 'FAILED', error: `the ${row.kind} channel is not configured on this instance` },
      now,
    );
    return;
  }
  let send: Send;
  let target: ChannelTarget;
  try {
    if (row.address === null) throw new SealError('nothing to deliver');
    send = senderOf(deps, row);
    target = {
      kind: row.kind,
      address: row.address,
      ...(row.sealed_secret === null ? {} : { secret: unseal(deps.sealingKey, row.sealed_secret) }),
    };
  } catch (error) {
    await finish(deps.db, row, { state: 'FAILED', error: (error as Error).message }, now);
    return;
  }
  try {
    const sent = await send(adapter, target);
    await finish(deps.db, row, { state: 'SENT', externalId: sent.externalId }, now);
  } catch (error) {
    const failure = error instanceof ChannelDeliveryError ? error : null;
    const message = failure?.message ?? 'the adapter failed unexpectedly';
    const about = { pollRef: row.poll_ref, intentId: row.intent_id, channel: row.kind };
    if (failure === null)
      deps.log.error({ err: error, ...about }, 'channel adapter threw a non-delivery error');
    else
      deps.log.warn(
        { ...about, notice: row.notice_kind, reason: failure.reason, attempt: row.attempts },
        'owner notice not delivered',
      );
    if (failure?.retryable === true && row.attempts < MAX_DELIVERY_ATTEMPTS) {
      const waitMs = Math.max(
        DELIVERY_BACKOFF_MS[Math.min(row.attempts - 1, DELIVERY_BACKOFF_MS.length - 1)]!,
        (failure.retryAfterSeconds ?? 0) * 1000,
      );
      await finish(
        deps.db,
        row,
        { state: 'PENDING', error: message, retryAt: new Date(now.getTime() + waitMs) },
        now,
      );
    } else {
      await finish(deps.db, row, { state: 'FAILED', error: message }, now);
    }
  }
}

/** One round: claims due deliveries and sends them; returns how many it claimed. */
export async function deliverDueNotices(deps: DeliveryDeps, now: Date): Promise<number> {
  const claimed = await claimDeliveries(deps.db, now);
  for (const row of claimed) await deliverOne(deps, row, now);
  return claimed.length;
}
