// Reads of an owner's webhook endpoints and of their deliveries (newest first, keyset pages). The
// sealed secret is never read here: only the delivery job opens it. Every read is scoped to the
// owner, so another owner's endpoint or delivery reads as not found.
import { AppError } from '../../../core/errors';
import type { Db } from '../../../platform/db';

export type EndpointState = 'ACTIVE' | 'DISABLED';
export type DeliveryState = 'PENDING' | 'DELIVERED' | 'FAILED';

/** Bounds the active endpoints of one owner. */
export const MAX_ENDPOINTS_PER_OWNER = 10;

export interface EndpointRow {
  readonly endpointId: string;
  readonly owner: string;
  readonly url: string;
  readonly events: string[];
  readonly policyIds: string[];
  readonly state: EndpointState;
  readonly createdAt: Date;
  readonly secretRotatedAt: Date | null;
  readonly disabledAt: Date | null;
}

interface EndpointRecord {
  endpoint_id: string;
  owner: string;
  url: string;
  events: string[];
  policy_ids: string[];
  state: EndpointState;
  created_at: Date;
  secret_rotated_at: Date | null;
  disabled_at: Date | null;
}

export const ENDPOINT_COLUMNS =
  'endpoint_id, owner, url, events, policy_ids::text[] AS policy_ids, state, created_at, secret_rotated_at, disabled_at';

export function toEndpoint(record: EndpointRecord): EndpointRow {
  return {
    endpointId: record.endpoint_id,
    owner: record.owner,
    url: record.url,
    events: record.events,
    policyIds: record.policy_ids,
    state: record.state,
    createdAt: record.created_at,
    secretRotatedAt: record.secret_rotated_at,
    disabledAt: record.disabled_at,
  };
}

export type { EndpointRecord };

/** The owner's endpoints, active and disabled, oldest first. */
export async function readEndpoints(db: Db, owner: string): Promise<EndpointRow[]> {
  const result = await db.query<EndpointRecord>(
    `SELECT ${ENDPOINT_COLUMNS} FROM policy.webhook_endpoints WHERE owner = $1
      ORDER BY created_at, endpoint_id LIMIT 200`,
    [owner],
  );
  return result.rows.map(toEndpoint);
}

export async function readEndpoint(
  db: Db,
  owner: string,
  endpointId: string,
): Promise<EndpointRow | null> {
  const result = await db.query<EndpointRecord>(
    `SELECT ${ENDPOINT_COLUMNS} FROM policy.webhook_endpoints WHERE endpoint_id = $1 AND owner = $2`,
    [endpointId, owner],
  );
  return result.rows[0] === undefined ? null : toEndpoint(result.rows[0]);
}

export interface DeliveryRow {
  readonly deliveryId: string;
  readonly endpointId: string;
  readonly eventId: string;
  readonly type: string;
  readonly occurredAt: Date;
  readonly data: Record<string, unknown>;
  readonly state: DeliveryState;
  readonly attempts: number;
  readonly nextAttemptAt: Date | null;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  readonly lastAttemptAt: Date | null;
  readonly deliveredAt: Date | null;
  readonly createdAt: Date;
}

interface DeliveryRecord {
  delivery_id: string;
  endpoint_id: string;
  event_id: string;
  type: string;
  occurred_at: Date;
  data: Record<string, unknown>;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: Date;
  last_status: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
}

export const DELIVERY_COLUMNS = `d.delivery_id, d.endpoint_id, d.event_id, ev.type, ev.occurred_at, ev.data, d.state,
  d.attempts, d.next_attempt_at, d.last_status, d.last_error, d.last_attempt_at, d.delivered_at, d.created_at`;

export function toDelivery(record: DeliveryRecord): DeliveryRow {
  return {
    deliveryId: record.delivery_id,
    endpointId: record.endpoint_id,
    eventId: record.event_id,
    type: record.type,
    occurredAt: record.occurred_at,
    data: record.data,
    state: record.state,
    attempts: record.attempts,
    nextAttemptAt: record.state === 'PENDING' ? record.next_attempt_at : null,
    lastStatus: record.last_status,
    lastError: record.last_error,
    lastAttemptAt: record.last_attempt_at,
    deliveredAt: record.delivered_at,
    createdAt: record.created_at,
  };
}

export type { DeliveryRecord };

export interface DeliveryPage {
  readonly nodes: DeliveryRow[];
  readonly endCursor: string | null;
  readonly hasNextPage: boolean;
}

const CURSOR = /^whd:([0-9]+):(whd_[0-9a-f]{24})$/;

function encodeCursor(row: DeliveryRow): string {
  return Buffer.from(`whd:${row.createdAt.getTime()}:${row.deliveryId}`, 'utf8').toString(
    'base64url',
  );
}

function decodeCursor(cursor: string): { createdAt: Date; deliveryId: string } {
  const match = CURSOR.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (match === null)
    throw new AppError('REQUEST_INVALID', 'The cursor is not one this list handed out.', [
      { field: 'after', reason: 'unknown cursor' },
    ]);
  return { createdAt: new Date(Number(match[1])), deliveryId: match[2]! };
}

/** One endpoint's deliveries, newest first; the caller has checked the endpoint is the owner's. */
export async function readDeliveryPage(
  db: Db,
  options: { endpointId: string; first: number; after: string | null },
): Promise<DeliveryPage> {
  const after = options.after === null ? null : decodeCursor(options.after);
  const result = await db.query<DeliveryRecord>(
    `SELECT ${DELIVERY_COLUMNS}
       FROM policy.webhook_deliveries d JOIN policy.owner_events ev ON ev.event_id = d.event_id
      WHERE d.endpoint_id = $1
        AND ($2::timestamptz IS NULL OR (d.created_at, d.delivery_id) < ($2::timestamptz, $3::text))
      ORDER BY d.created_at DESC, d.delivery_id DESC
      LIMIT $4`,
    [options.endpointId, after?.createdAt ?? null, after?.deliveryId ?? null, options.first + 1],
  );
  const rows = result.rows.map(toDelivery);
  const hasNextPage = rows.length > options.first;
  const nodes = hasNextPage ? rows.slice(0, options.first) : rows;
  const last = nodes[nodes.length - 1];
  return { nodes, hasNextPage, endCursor: last === undefined ? null : encodeCursor(last) };
}
