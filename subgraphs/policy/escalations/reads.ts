// SQL reads of escalations. Expiry is checked on every read: a single escalation is expired in
// place first (so the change is stored and published), and lists derive EXPIRED from expires_at
// in the same statement, so no reader ever sees a PENDING escalation whose time is up.
import { AppError } from '../../../core/errors';
import type { Db } from '../../../platform/db';

import type { EscalationState } from '../../../core/escalations/outcome';

export { ESCALATION_STATES, type EscalationState } from '../../../core/escalations/outcome';

export interface EscalationRow {
  readonly pollRef: string;
  readonly intentHash: string;
  readonly policyId: string;
  readonly policyVersion: number;
  readonly owner: string;
  readonly decision: string;
  readonly decidingRule: string;
  readonly ruleReason: string;
  readonly amountAtomic: string;
  readonly recipient: string;
  /** The canonical wire intent. */
  readonly intent: Record<string, unknown>;
  readonly state: EscalationState;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  readonly resolvedAt: Date | null;
  readonly resolvedVia: string | null;
  readonly resolvedBy: string | null;
  readonly ownerSigned: boolean;
  readonly approvalUsedAt: Date | null;
}

interface EscalationRecord {
  poll_ref: string;
  intent_hash: string;
  policy_id: string;
  policy_version: number;
  owner: string;
  decision: string;
  deciding_rule: string;
  rule_reason: string;
  amount: string;
  recipient: string;
  intent: Record<string, unknown>;
  state: EscalationState;
  created_at: Date;
  expires_at: Date;
  resolved_at: Date | null;
  resolved_via: string | null;
  resolved_by: string | null;
  owner_signed: boolean;
  approval_used_at: Date | null;
}

/** `$now` is the statement's parameter holding the reader's clock: EXPIRED is derived, never missed. */
function columns(now: string): string {
  return `e.poll_ref, e.intent_hash, e.policy_id::text AS policy_id, e.policy_version, e.owner, e.decision, e.deciding_rule,
          e.rule_reason, e.amount::text AS amount, e.recipient, e.intent,
          CASE WHEN e.state = 'PENDING' AND e.expires_at <= ${now} THEN 'EXPIRED' ELSE e.state END AS state,
          e.created_at, e.expires_at,
          CASE WHEN e.state = 'PENDING' AND e.expires_at <= ${now} THEN e.expires_at ELSE e.resolved_at END AS resolved_at,
          e.resolved_via, e.resolved_by, e.owner_signature IS NOT NULL AS owner_signed, e.approval_used_at`;
}

function toRow(record: EscalationRecord): EscalationRow {
  return {
    pollRef: record.poll_ref,
    intentHash: record.intent_hash,
    policyId: record.policy_id,
    policyVersion: record.policy_version,
    owner: record.owner,
    decision: record.decision,
    decidingRule: record.deciding_rule,
    ruleReason: record.rule_reason,
    amountAtomic: record.amount,
    recipient: record.recipient,
    intent: record.intent,
    state: record.state,
    createdAt: record.created_at,
    expiresAt: record.expires_at,
    resolvedAt: record.resolved_at,
    resolvedVia: record.resolved_via,
    resolvedBy: record.resolved_by,
    ownerSigned: record.owner_signed,
    approvalUsedAt: record.approval_used_at,
  };
}

/** Expires this escalation if its time is up (stored and published); true when this call did it. */
export async function expireIfDue(db: Db, pollRef: string, now: Date): Promise<boolean> {
  const result = await db.query<{ n: number }>(
    'SELECT policy.expire_due_escalations(NULL, $1, $2) AS n',
    [pollRef, now],
  );
  return (result.rows[0]?.n ?? 0) > 0;
}

/** One escalation after the lazy expiry check, or null; `lock` takes its row lock (inside a transaction). */
export async function readEscalation(
  db: Db,
  pollRef: string,
  now: Date,
  options: { lock?: boolean } = {},
): Promise<EscalationRow | null> {
  await expireIfDue(db, pollRef, now);
  const result = await db.query<EscalationRecord>(
    `SELECT ${columns('$2::timestamptz')} FROM policy.escalations e WHERE e.poll_ref = $1${options.lock ? ' FOR UPDATE' : ''}`,
    [pollRef, now],
  );
  const record = result.rows[0];
  return record === undefined ? null : toRow(record);
}

/** The escalation whose code has this sha256, locked, after the lazy expiry check; null for none. */
export async function readEscalationByCode(
  db: Db,
  digest: Buffer,
  now: Date,
): Promise<(EscalationRow & { codeDigest: Buffer; codeUsedAt: Date | null }) | null> {
  const found = await db.query<{ poll_ref: string }>(
    'SELECT poll_ref FROM policy.escalations WHERE code_sha256 = $1',
    [digest],
  );
  const pollRef = found.rows[0]?.poll_ref;
  if (pollRef === undefined) return null;
  await expireIfDue(db, pollRef, now);
  const result = await db.query<
    EscalationRecord & { code_sha256: Buffer; code_used_at: Date | null }
  >(
    `SELECT ${columns('$2::timestamptz')}, e.code_sha256, e.code_used_at FROM policy.escalations e WHERE e.poll_ref = $1 FOR UPDATE`,
    [pollRef, now],
  );
  const record = result.rows[0]!;
  return { ...toRow(record), codeDigest: record.code_sha256, codeUsedAt: record.code_used_at };
}

export interface EscalationPage {
  readonly nodes: EscalationRow[];
  readonly endCursor: string | null;
  readonly hasNextPage: boolean;
}

const CURSOR = /^esc:([0-9]+):(esc_[0-9a-f]{24})$/;

function encodeCursor(row: EscalationRow): string {
  return Buffer.from(`esc:${row.createdAt.getTime()}:${row.pollRef}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: Date; pollRef: string } {
  const match = CURSOR.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (match === null)
    throw new AppError('REQUEST_INVALID', 'The cursor is not one this list handed out.', [
      { field: 'after', reason: 'unknown cursor' },
    ]);
  return { createdAt: new Date(Number(match[1])), pollRef: match[2] };
}

/** Newest first; `owner` null for every owner (admin). State filters apply to the derived state. */
export async function readEscalationPage(
  db: Db,
  options: {
    owner: string | null;
    policyId: string | null;
    state: EscalationState | null;
    first: number;
    after: string | null;
  },
  now: Date,
): Promise<EscalationPage> {
  const after = options.after === null ? null : decodeCursor(options.after);
  const result = await db.query<EscalationRecord>(
    `SELECT * FROM (
       SELECT ${columns('$1::timestamptz')}
         FROM policy.escalations e
        WHERE ($2::text IS NULL OR e.owner = $2)
          AND ($3::numeric IS NULL OR e.policy_id = $3::numeric)
          AND ($5::timestamptz IS NULL OR (e.created_at, e.poll_ref) < ($5::timestamptz, $6::text))
     ) page
      WHERE $4::text IS NULL OR page.state = $4
      ORDER BY page.created_at DESC, page.poll_ref DESC
      LIMIT $7`,
    [
      now,
      options.owner,
      options.policyId,
      options.state,
      after?.createdAt ?? null,
      after?.pollRef ?? null,
      options.first + 1,
    ],
  );
  const rows = result.rows.map(toRow);
  const hasNextPage = rows.length > options.first;
  const nodes = hasNextPage ? rows.slice(0, options.first) : rows;
  const last = nodes[nodes.length - 1];
  return { nodes, hasNextPage, endCursor: last === undefined ? null : encodeCursor(last) };
}

export interface EscalationEventRow {
  readonly seq: string;
  readonly pollRef: string | null;
  readonly kind: string;
  readonly channel: string | null;
  readonly sender: string | null;
  readonly detail: string | null;
  readonly at: Date;
}

export const MAX_EVENTS_PER_READ = 200;

export async function readEscalationEvents(
  db: Db,
  where: { pollRef: string } | { ownerUnattributed: string },
): Promise<EscalationEventRow[]> {
  const byRef = 'pollRef' in where;
  const result = await db.query<{
    seq: string;
    poll_ref: string | null;
    kind: string;
    channel: string | null;
    sender: string | null;
    detail: string | null;
    at: Date;
  }>(
    `SELECT seq::text, poll_ref, kind, channel, sender, detail, at FROM policy.escalation_events
      WHERE ${byRef ? 'poll_ref = $1' : 'owner = $1 AND poll_ref IS NULL'}
      ORDER BY seq ${byRef ? 'ASC' : 'DESC'} LIMIT ${MAX_EVENTS_PER_READ}`,
    [byRef ? where.pollRef : where.ownerUnattributed],
  );
  return result.rows.map((row) => ({
    seq: row.seq,
    pollRef: row.poll_ref,
    kind: row.kind,
    channel: row.channel,
    sender: row.sender,
    detail: row.detail,
    at: row.at,
  }));
}
