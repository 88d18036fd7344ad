// The delivery of owner events: due deliveries claimed with FOR UPDATE SKIP LOCKED (any number of
// workers), each POSTed signed to its endpoint; a 2xx within 10 s is DELIVERED, anything else
// waits the next step of the retry schedule, and after the last the delivery is FAILED for the
// owner to see and redeliver. A claim leases the row, so a worker that dies mid-send frees it.
// Outside development a host whose name resolves to an internal address is refused at send time.
import type { Counter } from 'prom-client';
import { lookup } from 'node:dns/promises';
import { ChannelDeliveryError } from '../../../channels/errors';
import type { FetchLike } from '../../../channels/http';
import { postOwnerEvent } from '../../../channels/ownerEvents';
import { isInternalHost } from '../../../core/ownerEvents/endpointUrl';
import { type OwnerEventType, retryWaitMs } from '../../../core/ownerEvents/types';
import { type DbPool, withTransaction } from '../../../platform/db';
import type { Logger } from '../../../platform/log';
import { unseal } from '../../../platform/sealing';

/** Deliveries claimed per round (sent concurrently). */
export const WEBHOOK_BATCH = 20;
/** Longer than the 10 s answer limit, so a live worker never loses its claim mid-send. */
export const WEBHOOK_LEASE_MS = 60_000;

export interface WebhookDeliveryDeps {
  readonly db: DbPool;
  readonly sealingKey: Buffer;
  /** Waits before each retry (core/ownerEvents/types.ts DEFAULT_RETRY_SCHEDULE_MS unless configured). */
  readonly retryScheduleMs: readonly number[];
  /** Development: loopback and private hosts may be endpoints. */
  readonly allowInternalHosts: boolean;
  readonly fetch?: FetchLike;
  readonly log: Logger;
  /** Counts each attempt by outcome (delivered, retrying, failed); absent: none kept. */
  readonly attempts?: Pick<Counter<'outcome'>, 'inc'>;
}

interface ClaimedWebhook {
  delivery_id: string;
  attempts: number;
  event_id: string;
  type: OwnerEventType;
  occurred_at: Date;
  data: Record<string, unknown>;
  url: string;
  sealed_secret: Buffer;
  endpoint_id: string;
}

async function claim(db: DbPool, now: Date): Promise<ClaimedWebhook[]> {
  return withTransaction(db, async (client) => {
    const result = await client.query<ClaimedWebhook>(
      `WITH claimed AS (
         UPDATE policy.webhook_deliveries d
            SET attempts = d.attempts + 1, last_attempt_at = $1, updated_at = $1,
                next_attempt_at = $1::timestamptz + make_interval(secs => $3::double precision / 1000)
          WHERE d.delivery_id IN (
            SELECT w.delivery_id FROM policy.webhook_deliveries w
              JOIN policy.webhook_endpoints e ON e.endpoint_id = w.endpoint_id AND e.state = 'ACTIVE'
             WHERE w.state = 'PENDING' AND w.next_attempt_at <= $1
             ORDER BY w.next_attempt_at LIMIT $2
             FOR UPDATE OF w SKIP LOCKED)
         RETURNING d.delivery_id, d.attempts, d.event_id, d.endpoint_id
       )
       SELECT c.delivery_id, c.attempts, c.event_id, ev.type, ev.occurred_at, ev.data, e.url, e.sealed_secret, e.endpoint_id
         FROM claimed c
         JOIN policy.owner_events ev ON ev.event_id = c.event_id
         JOIN policy.webhook_endpoints e ON e.endpoint_id = c.endpoint_id`,
      [now, WEBHOOK_BATCH, WEBHOOK_LEASE_MS],
    );
    return result.rows;
  });
}

/** Refuses a name that resolves to an internal address (outside development). */
async function checkResolvedHost(url: string): Promise<void> {
  const { hostname } = new URL(url);
  let addresses: { address: string }[];
  try {
    addresses = await lookup(hostname.replace(/^\[|\]$/g, ''), { all: true });
  } catch {
    throw new ChannelDeliveryError('webhook', `could not resolve the endpoint's host`, {
      retryable: true,
      reason: 'NETWORK',
    });
  }
  if (addresses.length === 0 || addresses.some((entry) => isInternalHost(entry.address)))
    throw new ChannelDeliveryError('webhook', 'the endpoint resolves to an internal address', {
      retryable: true,
      reason: 'INVALID_INPUT',
    });
}

async function attempt(deps: WebhookDeliveryDeps, row: ClaimedWebhook, now: Date): Promise<number> {
  if (!deps.allowInternalHosts) await checkResolvedHost(row.url);
  const sent = await postOwnerEvent({
    url: row.url,
    secret: unseal(deps.sealingKey, row.sealed_secret),
    event: {
      id: row.event_id,
      type: row.type,
      occurredAt: row.occurred_at.toISOString(),
      data: row.data,
    },
    sentAt: now,
    fetch: deps.fetch,
  });
  return sent.status;
}

async function deliverOne(
  deps: WebhookDeliveryDeps,
  row: ClaimedWebhook,
  now: Date,
): Promise<void> {
  try {
    const status = await attempt(deps, row, now);
    await deps.db.query(
      `UPDATE policy.webhook_deliveries
          SET state = 'DELIVERED', delivered_at = $2, last_status = $3, last_error = NULL, updated_at = $2
        WHERE delivery_id = $1 AND state = 'PENDING' AND attempts = $4`,
      [row.delivery_id, now, status, row.attempts],
    );
    deps.attempts?.inc({ outcome: 'delivered' });
  } catch (error) {
    const failure = error instanceof ChannelDeliveryError ? error : null;
    if (failure === null)
      deps.log.error({ err: error, deliveryId: row.delivery_id }, 'webhook delivery threw');
    const waitMs = retryWaitMs(deps.retryScheduleMs, row.attempts);
    const message = failure?.message ?? 'the delivery failed unexpectedly';
    deps.log.warn(
      {
        deliveryId: row.delivery_id,
        endpointId: row.endpoint_id,
        attempt: row.attempts,
        reason: failure?.reason,
        final: waitMs === null,
      },
      'webhook not delivered',
    );
    await deps.db.query(
      `UPDATE policy.webhook_deliveries
          SET state = $2, last_status = $3, last_error = $4, updated_at = $5,
              next_attempt_at = coalesce($6, next_attempt_at)
        WHERE delivery_id = $1 AND state = 'PENDING' AND attempts = $7`,
      [
        row.delivery_id,
        waitMs === null ? 'FAILED' : 'PENDING',
        failure?.status ?? null,
        message.slice(0, 500),
        now,
        waitMs === null ? null : new Date(now.getTime() + waitMs),
        row.attempts,
      ],
    );
    deps.attempts?.inc({ outcome: waitMs === null ? 'failed' : 'retrying' });
  }
}

/** One round: claims due deliveries and sends them concurrently; returns how many it claimed. */
export async function deliverDueWebhooks(deps: WebhookDeliveryDeps, now: Date): Promise<number> {
  const claimed = await claim(deps.db, now);
  await Promise.all(claimed.map((row) => deliverOne(deps, row, now)));
  return claimed.length;
}
