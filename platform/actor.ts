// Who is acting, as the gateway tells the subgraphs: the gateway turns each credential into an
// Actor and forwards it in one HMAC-signed header; subgraphs verify the signature and freshness
// and never trust an unsigned claim. The same signed value travels over HTTP and in-process.
// A header may also carry a paid-call claim: the priced REST route the gateway took payment for.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isPolicyId } from '../core/canon/id-shapes';

export type Actor =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'admin' }
  | { readonly kind: 'owner'; readonly address: string }
  | { readonly kind: 'consumer'; readonly address: string; readonly policyId: string }
  /** An outside messaging platform whose request the gateway verified (bot secret token, signing secret). */
  | { readonly kind: 'channel'; readonly channel: ChannelActorKind };

/** The platforms whose inbound requests the gateway verifies itself before acting for them. */
export const CHANNEL_ACTOR_KINDS = ['telegram', 'slack', 'webhook', 'email'] as const;
export type ChannelActorKind = (typeof CHANNEL_ACTOR_KINDS)[number];

export const ACTOR_HEADER = 'x-spend-control-actor';
/** Carries the gateway's correlation id (`cor_` + 16 hex) to the subgraphs, for logs and error bodies. */
export const CORRELATION_HEADER = 'x-correlation-id';
/** A signed actor is good for one request; a little slack covers clock skew between processes. */
export const ACTOR_MAX_AGE_SECONDS = 60;

export const ANONYMOUS: Actor = Object.freeze({ kind: 'anonymous' });

export class ActorSignatureError extends Error {
  constructor(reason: string) {
    super(`actor header rejected: ${reason}`);
    this.name = 'ActorSignatureError';
  }
}

function mac(secret: Buffer, payload: string): Buffer {
  return createHmac('sha256', secret).update(payload).digest();
}

/** A priced route as the route table and the paywall name it: `POST /preflight_payment`. */
const PAID_ROUTE = /^(GET|POST) \/[\x21-\x7e]{0,200}$/;

/** What one signed header says: who acts, and the priced route this call was paid on (else null). */
export interface SignedClaims {
  readonly actor: Actor;
  /** Set only by the gateway's REST layer, after the paywall, on a priced route's own operation. */
  readonly paidRoute: string | null;
}

/**
 * `<base64url(JSON{actor, iat, paidRoute?})>.<base64url(HMAC-SHA256)>`. `paidRoute` marks a paid
 * call: the fields priced routes run refuse every header without it.
 */
export function signActor(
  actor: Actor,
  secret: Buffer,
  nowMs: number = Date.now(),
  paidRoute: string | null = null,
): string {
  if (paidRoute !== null && !PAID_ROUTE.test(paidRoute))
    throw new Error(`not a route: ${paidRoute}`);
  const iat = Math.floor(nowMs / 1000);
  const claims = paidRoute === null ? { actor, iat } : { actor, iat, paidRoute };
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${mac(secret, payload).toString('base64url')}`;
}

function isActor(value: unknown): value is Actor {
  if (typeof value !== 'object' || value === null) return false;
  const actor = value as Record<string, unknown>;
  switch (actor.kind) {
    case 'anonymous':
    case 'admin':
      return true;
    case 'owner':
      return typeof actor.address === 'string' && /^0x[0-9a-f]{40}$/.test(actor.address);
    case 'consumer':
      return (
        typeof actor.address === 'string' &&
        /^0x[0-9a-f]{40}$/.test(actor.address) &&
        isPolicyId(actor.policyId)
      );
    case 'channel':
      return (CHANNEL_ACTOR_KINDS as readonly unknown[]).includes(actor.channel);
    default:
      return false;
  }
}

/** Verifies a header made by signActor; a missing header is the anonymous actor. */
export function verifyActor(
  header: string | undefined,
  secret: Buffer,
  nowMs: number = Date.now(),
): Actor {
  return verifyClaims(header, secret, nowMs).actor;
}

/** Verifies a header made by signActor and returns all it claims; a missing header is anonymous and unpaid. */
export function verifyClaims(
  header: string | undefined,
  secret: Buffer,
  nowMs: number = Date.now(),
): SignedClaims {
  if (header === undefined || header === '') return { actor: ANONYMOUS, paidRoute: null };
  const dot = header.indexOf('.');
  if (dot <= 0) throw new ActorSignatureError('malformed');
  const payload = header.slice(0, dot);
  const given = Buffer.from(header.slice(dot + 1), 'base64url');
  const expected = mac(secret, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new ActorSignatureError('bad signature');
  }
  let decoded: { actor?: unknown; iat?: unknown; paidRoute?: unknown };
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw new ActorSignatureError('malformed payload');
  }
  if (
    typeof decoded.iat !== 'number' ||
    Math.abs(nowMs / 1000 - decoded.iat) > ACTOR_MAX_AGE_SECONDS
  ) {
    throw new ActorSignatureError('stale');
  }
  if (!isActor(decoded.actor)) throw new ActorSignatureError('unknown actor shape');
  const paidRoute = decoded.paidRoute ?? null;
  if (paidRoute !== null && (typeof paidRoute !== 'string' || !PAID_ROUTE.test(paidRoute))) {
    throw new ActorSignatureError('unknown paid route shape');
  }
  return { actor: decoded.actor, paidRoute };
}
