// Webhook endpoint writes, each scoped to the signed-in owner: create (the secret is made here,
// returned this once and kept sealed), rotate the secret, disable (its pending deliveries end
// FAILED), and queue a delivery again. An endpoint URL must pass core/ownerEvents/endpointUrl.ts
// for this deployment (https and public outside development).
import { randomBytes } from 'node:crypto';
import {
  isPolicyId,
  isWebhookDeliveryId,
  isWebhookEndpointId,
  newWebhookEndpointId,
} from '../../../core/canon/ids';
import { AppError } from '../../../core/errors';
import { checkEndpointUrl, isDevelopmentPublicUrl } from '../../../core/ownerEvents/endpointUrl';
import { isOwnerEventType } from '../../../core/ownerEvents/types';
import { type DbPool, withTransaction } from '../../../platform/db';
import { seal } from '../../../platform/sealing';
import { settingsOf, type SubgraphContext } from '../../kit';
import { requireSealingKey } from '../channels/writes';
import {
  DELIVERY_COLUMNS,
  type DeliveryRecord,
  type DeliveryRow,
  ENDPOINT_COLUMNS,
  type EndpointRecord,
  type EndpointRow,
  MAX_ENDPOINTS_PER_OWNER,
  toDelivery,
  toEndpoint,
} from './reads';
import { EVENT_SECRET_BYTES } from '../../../channels/ownerEvents';

export const MAX_ENDPOINT_POLICIES = 100;

export interface EndpointInput {
  readonly url: string;
  readonly events: readonly string[];
  readonly policyIds: readonly string[];
}

export interface EndpointWithSecret {
  readonly endpoint: EndpointRow;
  /** Shown this once; the service keeps it sealed to sign deliveries. */
  readonly secret: string;
}

function invalid(field: string, reason: string): AppError {
  return new AppError('REQUEST_INVALID', undefined, [{ field, reason }]);
}

function endpointNotFound(endpointId: string): AppError {
  return new AppError('WEBHOOK_ENDPOINT_NOT_FOUND', undefined, { endpointId });
}

function checkedInput(ctx: SubgraphContext, input: EndpointInput): EndpointInput {
  const checked = checkEndpointUrl(input.url, {
    development: isDevelopmentPublicUrl(settingsOf(ctx).publicUrl),
  });
  if ('problem' in checked) throw invalid('url', checked.problem);
  const events = [...new Set(input.events)];
  if (events.length === 0) throw invalid('events', 'at least one event type');
  for (const type of events)
    if (!isOwnerEventType(type))
      throw invalid('events', `${String(type).slice(0, 64)} is not an event type`);
  const policyIds = [...new Set(input.policyIds)];
  if (policyIds.length > MAX_ENDPOINT_POLICIES)
    throw invalid('policyIds', `at most ${MAX_ENDPOINT_POLICIES} policies`);
  for (const policyId of policyIds)
    if (!isPolicyId(policyId)) throw invalid('policyIds', 'uint256 decimal strings');
  return { url: checked.url, events, policyIds };
}

function newSecret(): string {
  return randomBytes(EVENT_SECRET_BYTES).toString('hex');
}

export async function createWebhookEndpoint(
  ctx: SubgraphContext,
  owner: string,
  input: EndpointInput,
): Promise<EndpointWithSecret> {
  const key = requireSealingKey(ctx);
  const checked = checkedInput(ctx, input);
  const secret = newSecret();
  const now = ctx.now();
  return withTransaction(ctx.db, async (client) => {
    const owned = await client.query<{ policy_id: string }>(
      `SELECT DISTINCT policy_id::text AS policy_id FROM policy.policies
        WHERE owner = $1 AND policy_id = ANY ($2::numeric[])`,
      [owner, checked.policyIds],
    );
    if (owned.rows.length !== checked.policyIds.length)
      throw invalid('policyIds', 'only policies of the signed-in owner');
    // Serialises creates of one owner, so the bound below holds under concurrency.
    await client.query('SELECT pg_advisory_xact_lock(32363, hashtext($1))', [owner]);
    const count = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM policy.webhook_endpoints WHERE owner = $1 AND state = 'ACTIVE'`,
      [owner],
    );
    if (count.rows[0]!.n >= MAX_ENDPOINTS_PER_OWNER)
      throw new AppError(
        'REQUEST_INVALID',
        `An owner keeps at most ${MAX_ENDPOINTS_PER_OWNER} active webhook endpoints; disable one first.`,
      );
    const inserted = await client.query<EndpointRecord>(
      `INSERT INTO policy.webhook_endpoints (endpoint_id, owner, url, events, policy_ids, sealed_secret, state, created_at)
       VALUES ($1, $2, $3, $4, $5::numeric[], $6, 'ACTIVE', $7) RETURNING ${ENDPOINT_COLUMNS}`,
      [
        newWebhookEndpointId(),
        owner,
        checked.url,
        checked.events,
        checked.policyIds,
        seal(key, secret),
        now,
      ],
    );
    return { endpoint: toEndpoint(inserted.rows[0]!), secret };
  });
}

/** A new secret for an active endpoint; deliveries sent from now on are signed with it. */
export async function rotateWebhookSecret(
  ctx: SubgraphContext,
  owner: string,
  endpointId: string,
): Promise<EndpointWithSecret> {
  if (!isWebhookEndpointId(endpointId)) throw endpointNotFound(endpointId);
  const key = requireSealingKey(ctx);
  const secret = newSecret();
  const result = await ctx.db.query<EndpointRecord>(
    `UPDATE policy.webhook_endpoints SET sealed_secret = $3, secret_rotated_at = $4
      WHERE endpoint_id = $1 AND owner = $2 AND state = 'ACTIVE' RETURNING ${ENDPOINT_COLUMNS}`,
    [endpointId, owner, seal(key, secret), ctx.now()],
  );
  if (result.rows[0] === undefined) throw endpointNotFound(endpointId);
  return { endpoint: toEndpoint(result.rows[0]), secret };
}

/** Stops an endpoint: no new deliveries, and the pending ones end FAILED, in one transaction. */
export async function disableWebhookEndpoint(
  db: DbPool,
  owner: string,
  endpointId: string,
  now: Date,
): Promise<EndpointRow> {
  if (!isWebhookEndpointId(endpointId)) throw endpointNotFound(endpointId);
  return withTransaction(db, async (client) => {
    const result = await client.query<EndpointRecord>(
      `UPDATE policy.webhook_endpoints SET state = 'DISABLED', disabled_at = coalesce(disabled_at, $3)
        WHERE endpoint_id = $1 AND owner = $2 RETURNING ${ENDPOINT_COLUMNS}`,
      [endpointId, owner, now],
    );
    if (result.rows[0] === undefined) throw endpointNotFound(endpointId);
    await client.query(
      `UPDATE policy.webhook_deliveries SET state = 'FAILED', last_error = 'the endpoint was disabled', updated_at = $2
        WHERE endpoint_id = $1 AND state = 'PENDING'`,
      [endpointId, now],
    );
    return toEndpoint(result.rows[0]);
  });
}

/**
 * Queues a delivery of the owner's active endpoint again, due now, with a fresh schedule. A
 * delivery still pending is answered as it stands.
 */
export async function redeliverWebhook(
  db: DbPool,
  owner: string,
  deliveryId: string,
  now: Date,
): Promise<DeliveryRow> {
  const notFound = new AppError('WEBHOOK_DELIVERY_NOT_FOUND', undefined, { deliveryId });
  if (!isWebhookDeliveryId(deliveryId)) throw notFound;
  return withTransaction(db, async (client) => {
    const found = await client.query<{ state: string; endpoint_state: string }>(
      `SELECT d.state, e.state AS endpoint_state
         FROM policy.webhook_deliveries d JOIN policy.webhook_endpoints e ON e.endpoint_id = d.endpoint_id
        WHERE d.delivery_id = $1 AND e.owner = $2 FOR UPDATE OF d`,
      [deliveryId, owner],
    );
    const row = found.rows[0];
    if (row === undefined) throw notFound;
    if (row.endpoint_state !== 'ACTIVE')
      throw invalid('deliveryId', 'the endpoint is disabled; create a new one');
    await client.query(
      `UPDATE policy.webhook_deliveries
          SET state = 'PENDING', attempts = 0, next_attempt_at = $2, delivered_at = NULL, updated_at = $2
        WHERE delivery_id = $1 AND state <> 'PENDING'`,
      [deliveryId, now],
    );
    const read = await client.query<DeliveryRecord>(
      `SELECT ${DELIVERY_COLUMNS}
         FROM policy.webhook_deliveries d JOIN policy.owner_events ev ON ev.event_id = d.event_id
        WHERE d.delivery_id = $1`,
      [deliveryId],
    );
    return toDelivery(read.rows[0]!);
  });
}
