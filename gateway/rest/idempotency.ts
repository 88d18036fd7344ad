// Idempotency-Key on REST POSTs, the way payment APIs do it (Stripe, ACP): the first request with a
// key claims it for its caller; the answer it gets (any 2xx or 4xx but 402, 409 in-flight and 429)
// is stored, and the same key with the same request answers that stored status, headers and body
// (`Idempotent-Replayed: true`) without running the route again. The same key with another request
// is 409 IDEMPOTENCY_KEY_REUSED; a key still running is 409 IDEMPOTENCY_KEY_IN_FLIGHT with
// Retry-After. Keys are scoped by principal and kept 24 hours (gateway.idempotency_keys).
// An anonymous paid call refuses the header: its payer is unknown until the payment is verified,
// and the payment itself is its key (the paywall replays an authorization it has seen).
import type { Request, Response } from 'express';
import type { Pool } from 'pg';
import { AppError } from '../../core/errors';
import type { Actor } from '../../platform/actor';
import { createPool } from '../../platform/db/pool';
import type { Logger } from '../../platform/log';
import type { RestResult } from './types';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const IDEMPOTENCY_KEEP_MS = 24 * 60 * 60 * 1000;
/** How long a claim holds its key without an answer; past it, a retry takes the key over. */
export const IDEMPOTENCY_LEASE_MS = 120_000;
const SWEEP_EVERY_MS = 10 * 60 * 1000;
const IN_FLIGHT_RETRY_SECONDS = 1;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** Answer headers worth replaying; the rest (correlation id, dates) belong to each answer. */
const REPLAYED_HEADERS = ['content-type', 'payment-response', 'location'] as const;

export interface IdempotencyRoute {
  readonly priced: boolean;
  /** The body field that is this route's own idempotency key (POST /consumer/intents). */
  readonly bodyKeyField?: string;
}

type Claim =
  | { outcome: 'CLAIMED' | 'IN_FLIGHT' | 'REUSED' }
  | { outcome: 'REPLAY'; status: number; headers: Record<string, string>; body: string };

/** Who a key belongs to: one admin scope, an owner's address, a consumer session's policy. */
export function principalOf(actor: Actor): string {
  switch (actor.kind) {
    case 'owner':
      return `owner:${actor.address.toLowerCase()}`;
    case 'consumer':
      return `consumer:${actor.address.toLowerCase()}:${actor.policyId}`;
    case 'channel':
      return `channel:${actor.channel}`;
    default:
      return actor.kind;
  }
}

function storable(status: number): boolean {
  return status >= 200 && status < 500 && status !== 402 && status !== 409 && status !== 429;
}

export class IdempotencyKeys {
  private lastSweepMs = 0;

  constructor(
    private readonly pool: Pool,
    private readonly ownsPool: boolean,
    private readonly log: Logger,
    private readonly now: () => Date,
  ) {}

  /** On its own small pool of `databaseUrl`. */
  static open(databaseUrl: string, log: Logger, now: () => Date): IdempotencyKeys {
    const pool = createPool(databaseUrl, { max: 4, applicationName: 'spend-control-idempotency' });
    return new IdempotencyKeys(pool, true, log, now);
  }

  /**
   * Before the route runs: null when it should (no key, or the key claimed: its answer will be
   * stored), else the stored answer to send instead. Throws the refusals as AppError.
   */
  async intercept(
    route: IdempotencyRoute,
    req: Request,
    res: Response,
    actor: Actor,
    requestDigest: () => string,
  ): Promise<RestResult | null> {
    const key = this.keyOf(route, req);
    if (key === null) return null;
    if (route.priced && actor.kind === 'anonymous')
      throw new AppError('IDEMPOTENCY_KEY_UNSUPPORTED');
    this.sweepNowAndThen();
    const principal = principalOf(actor);
    const claim = await this.claim(principal, key, requestDigest());
    switch (claim.outcome) {
      case 'REUSED':
        throw new AppError('IDEMPOTENCY_KEY_REUSED');
      case 'IN_FLIGHT':
        throw new AppError('IDEMPOTENCY_KEY_IN_FLIGHT', undefined, {
          retryAfterSeconds: IN_FLIGHT_RETRY_SECONDS,
        });
      case 'REPLAY':
        return {
          status: claim.status,
          headers: { ...claim.headers, 'idempotent-replayed': 'true' },
          body: claim.body,
        };
      default:
        this.storeAnswerOf(res, principal, key);
        return null;
    }
  }

  /**
   * The header's key. On a route with a body key the header stands for that field (set into the
   * body when absent, so the route's own record agrees); a body key alone keeps the route's own
   * behaviour.
   */
  private keyOf(route: IdempotencyRoute, req: Request): string | null {
    const header = req.get(IDEMPOTENCY_HEADER);
    if (header === undefined) return null;
    if (!KEY_PATTERN.test(header))
      throw new AppError(
        'IDEMPOTENCY_KEY_INVALID',
        'Idempotency-Key is 1–255 printable ASCII characters.',
      );
    const body = req.body as Record<string, unknown> | undefined;
    if (route.bodyKeyField === undefined || body === undefined || typeof body !== 'object')
      return header;
    const field = body[route.bodyKeyField];
    if (field === undefined || field === null) body[route.bodyKeyField] = header;
    else if (field !== header)
      throw new AppError(
        'IDEMPOTENCY_KEY_INVALID',
        `The header and the body's ${route.bodyKeyField} differ.`,
      );
    return header;
  }

  private async claim(principal: string, key: string, digest: string): Promise<Claim> {
    const result = await this.pool.query<{
      outcome: Claim['outcome'];
      status: number | null;
      headers: Record<string, string> | null;
      body: string | null;
    }>('SELECT * FROM gateway.claim_idempotency_key($1, $2, $3, $4, $5)', [
      principal,
      key,
      digest,
      IDEMPOTENCY_LEASE_MS,
      IDEMPOTENCY_KEEP_MS,
    ]);
    const row = result.rows[0]!;
    if (row.outcome !== 'REPLAY') return { outcome: row.outcome };
    return { outcome: 'REPLAY', status: row.status!, headers: row.headers!, body: row.body! };
  }

  /**
   * The route's answer is stored before it goes out (so a client that saw it always finds it on a
   * retry); an answer not worth storing frees the key for the retry instead.
   */
  private storeAnswerOf(res: Response, principal: string, key: string): void {
    const send = res.send.bind(res);
    res.send = ((body?: unknown) => {
      res.send = send;
      const text =
        typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('utf8') : '';
      this.settle(principal, key, res, text)
        .catch((error: unknown) => this.log.error({ err: error }, 'idempotency key not settled'))
        .finally(() => send(body));
      return res;
    }) as Response['send'];
  }

  private async settle(principal: string, key: string, res: Response, body: string): Promise<void> {
    if (!storable(res.statusCode)) {
      await this.pool.query(
        "DELETE FROM gateway.idempotency_keys WHERE principal = $1 AND idempotency_key = $2 AND state = 'IN_FLIGHT'",
        [principal, key],
      );
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = res.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    await this.pool.query(
      `UPDATE gateway.idempotency_keys SET state = 'DONE', status = $3, headers = $4, body = $5
        WHERE principal = $1 AND idempotency_key = $2 AND state = 'IN_FLIGHT'`,
      [principal, key, res.statusCode, JSON.stringify(headers), body],
    );
  }

  /** Keys past their 24 hours go at most once every ten minutes, off the request's path. */
  private sweepNowAndThen(): void {
    const nowMs = this.now().getTime();
    if (nowMs - this.lastSweepMs < SWEEP_EVERY_MS) return;
    this.lastSweepMs = nowMs;
    this.pool
      .query('SELECT gateway.sweep_idempotency_keys()')
      .catch((error: unknown) => this.log.error({ err: error }, 'idempotency sweep failed'));
  }

  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }
}
