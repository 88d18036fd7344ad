// The rate-limit step at the edge, before any body is read: which buckets a request is charged to
// (docs/operations.md#rate-limits) and one store check for all of them; over a limit is
// 429 RATE_LIMITED with Retry-After. A paid call is charged to its payer once a payment header
// names one; a request with a valid owner, consumer or admin bearer to its principal; the unpaid
// 402 of a priced route to a challenge bucket per IP at the payer rate (every x402 client asks
// unpaid first); everything else anonymous to the client IP's bucket.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { decodePaymentSignatureHeader } from '@x402/core/http';
import { AppError } from '../../core/errors';
import type { Actor } from '../../platform/actor';
import type { Logger } from '../../platform/log';
import { paymentHeader, routeMatcher } from '../rest/router';
import { isPriced, type RouteDefinition } from '../rest/types';
import { type BucketLimit, MAX_BUCKET_SETTING, retryAfterSeconds } from './bucket';
import { clientBucketId } from './clientIp';
import type { BucketCharge, RateLimitStore } from './store';

export interface RateLimits {
  /** Anonymous requests that are not paid calls nor challenges: free routes, GraphQL over HTTP, docs. */
  readonly ip: BucketLimit;
  /** The unpaid 402 of a priced route, per client IP, at the payer rate. */
  readonly challenge: BucketLimit;
  /** Requests with a valid owner, consumer or admin bearer (and no payment), per principal. */
  readonly principal: BucketLimit;
  /** Paid calls, per payer address. */
  readonly payer: BucketLimit;
  /**
   * Paid calls again, per client IP: the payer a header names is unverified until settlement, so
   * without this one client could name a fresh payer per request and never be limited.
   */
  readonly paidIp: BucketLimit;
  /** Nonce issuing and SIWE verification, per client IP, beside the usual bucket. */
  readonly signIn: BucketLimit;
  /** Routes that make outbound requests, per caller, beside the usual bucket. */
  readonly outbound: BucketLimit;
}

/** The same limit for every bucket: tests and benchmarks that must not be limited use the largest. */
export function uniformLimits(
  limit: BucketLimit = { perMinute: MAX_BUCKET_SETTING, burst: MAX_BUCKET_SETTING },
): RateLimits {
  return {
    ip: limit,
    challenge: limit,
    principal: limit,
    payer: limit,
    paidIp: limit,
    signIn: limit,
    outbound: limit,
  };
}

/** Who is asking, as far as the limits care. */
export interface ChargedRequest {
  /** clientBucketId of the client address. */
  readonly client: string;
  readonly route: RouteDefinition | null;
  /** The lowercase payer of a paid call whose payment header names one; null otherwise. */
  readonly payer: string | null;
  /** The principal a valid bearer names (`owner:0x…`, `consumer:0x…:<policyId>`, `admin`); null otherwise. */
  readonly principal?: string | null;
}

/** The caller's own bucket: payer, principal, challenge (a priced route, unpaid) or client IP. */
function subjectOf(request: ChargedRequest, limits: RateLimits): BucketCharge {
  if (request.payer !== null) return { key: `payer:${request.payer}`, limit: limits.payer };
  if (request.principal) return { key: `principal:${request.principal}`, limit: limits.principal };
  if (request.route && isPriced(request.route.price))
    return { key: `challenge:${request.client}`, limit: limits.challenge };
  return { key: `ip:${request.client}`, limit: limits.ip };
}

/** The buckets a request takes a token from (all of them, or none). */
export function chargesFor(request: ChargedRequest, limits: RateLimits): BucketCharge[] {
  const own = subjectOf(request, limits);
  const subject = own.key;
  const charges: BucketCharge[] =
    request.payer === null
      ? [own]
      : [own, { key: `paid-ip:${request.client}`, limit: limits.paidIp }];
  if (request.route?.rateLimit === 'sign-in')
    charges.push({ key: `sign-in:${request.client}`, limit: limits.signIn });
  if (request.route?.rateLimit === 'outbound')
    charges.push({ key: `outbound:${subject}`, limit: limits.outbound });
  return charges;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The `from` of the EIP-3009 authorization in an x402 payment header, lowercase; null when it names none. */
export function payerOf(header: string): string | null {
  try {
    const payload = decodePaymentSignatureHeader(header) as {
      payload?: { authorization?: { from?: unknown } };
    };
    const from = payload?.payload?.authorization?.from;
    return typeof from === 'string' && ADDRESS.test(from) ? from.toLowerCase() : null;
  } catch {
    return null;
  }
}

export interface RateLimiterOptions {
  readonly store: RateLimitStore;
  readonly limits: RateLimits;
  readonly routes: readonly RouteDefinition[];
  /** x402 is on: a payment header on a priced route makes the request a paid call. */
  readonly payments: boolean;
  /** The principal a valid bearer names; null for none or an invalid one (the route refuses that). */
  readonly principalOf?: (authorization: string | undefined) => Promise<string | null>;
  readonly log: Logger;
}

/** How often a failing store is reported while requests are let through. */
const STORE_ERROR_LOG_INTERVAL_MS = 60_000;

/**
 * The limiter middleware. When the store cannot answer (the database is down) the request is let
 * through and the failure logged: the limiter must not turn a database blip into a total outage
 * of routes that do not need the database.
 */
export function rateLimiter(options: RateLimiterOptions): RequestHandler {
  const routeFor = routeMatcher(options.routes);
  let lastErrorLogMs = 0;
  return (req: Request, _res: Response, next: NextFunction) => {
    const route = routeFor(req.method, req.path);
    const header =
      options.payments && route && isPriced(route.price) && req.method !== 'HEAD'
        ? paymentHeader(req)
        : null;
    const payer = header === null ? null : payerOf(header);
    const principal =
      payer === null && options.principalOf
        ? options.principalOf(req.headers.authorization)
        : Promise.resolve(null);
    principal
      .then((named) =>
        options.store.take(
          chargesFor(
            { client: clientBucketId(req.ip), route, payer, principal: named },
            options.limits,
          ),
        ),
      )
      .then(
        (waitMs) => {
          if (waitMs === 0) {
            next();
            return;
          }
          const seconds = retryAfterSeconds(waitMs);
          next(
            new AppError('RATE_LIMITED', `Too many requests; retry in ${seconds} s.`, {
              retryAfterSeconds: seconds,
            }),
          );
        },
        (error: unknown) => {
          if (Date.now() - lastErrorLogMs >= STORE_ERROR_LOG_INTERVAL_MS) {
            lastErrorLogMs = Date.now();
            options.log.error(
              { err: error },
              'rate-limit store failed; requests pass unchecked until it answers',
            );
          }
          next();
        },
      );
  };
}

/** The rate-limit principal of a verified actor; null for an anonymous one. */
export function principalKey(actor: Actor): string | null {
  switch (actor.kind) {
    case 'admin':
      return 'admin';
    case 'owner':
      return `owner:${actor.address.toLowerCase()}`;
    case 'consumer':
      return `consumer:${actor.address.toLowerCase()}:${actor.policyId}`;
    default:
      return null;
  }
}

/**
 * For POST /graphql operations that ask a third party (graphql/outboundFields.ts): a token from the
 * caller's outbound bucket, the same bucket the REST routes take, so neither door multiplies the
 * other. Rejects with RATE_LIMITED when empty; a failing store lets the call through, as above.
 */
export function outboundTokenTaker(
  store: RateLimitStore,
  limits: RateLimits,
): (req: Request) => Promise<void> {
  return async (req) => {
    const key = `outbound:ip:${clientBucketId(req.ip)}`;
    const waitMs = await store.take([{ key, limit: limits.outbound }]).catch(() => 0);
    if (waitMs === 0) return;
    const seconds = retryAfterSeconds(waitMs);
    throw new AppError('RATE_LIMITED', `Too many requests; retry in ${seconds} s.`, {
      retryAfterSeconds: seconds,
    });
  };
}
