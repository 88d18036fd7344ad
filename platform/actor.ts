// Who is acting, as the gateway tells the subgraphs: the gateway turns each credential into an
// Actor and forwards it in one HMAC-signed header; subgraphs verify the signature and freshness
// and never trust an unsigned claim. The same signed value travels over HTTP and in-process.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type Actor =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'admin' }
  | { readonly kind: 'owner'; readonly address: string }
  | { readonly kind: 'consumer'; readonly address: string; readonly policyId: string }
  /** An outside messaging platform whose request the gateway verified (bot secret token, signing secret). */
  | { readonly kind: 'channel'; readonly channel: ChannelActorKind };

/** The platforms whose inbound requests the gateway verifies itself before acting for them. */
export const CHANNEL_ACTOR_KINDS = ['telegram', 'slack', 'webhook'] as const;
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

/** `<base64url(JSON{actor, iat})>.<base64url(HMAC-SHA256)>` */
export function signActor(actor: Actor, secret: Buffer, nowMs: number = Date.now()): string {
  const payload = Buffer.from(JSON.stringify({ actor, iat: Math.floor(nowMs / 1000) })).toString('base64url');
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
        typeof actor.policyId === 'string' &&
        /^[0-9]{1,78}$/.test(actor.policyId)
      );
    case 'channel':
      return (CHANNEL_ACTOR_KINDS as readonly unknown[]).includes(actor.channel);
    default:
      return false;
  }
}

/** Verifies a header made by signActor; a missing header is the anonymous actor. */
export function verifyActor(header: string | undefined, secret: Buffer, nowMs: number = Date.now()): Actor {
  if (header === undefined || header === '') return ANONYMOUS;
  const dot = header.indexOf('.');
  if (dot <= 0) throw new ActorSignatureError('malformed');
  const payload = header.slice(0, dot);
  const given = Buffer.from(header.slice(dot + 1), 'base64url');
  const expected = mac(secret, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new ActorSignatureError('bad signature');
  }
  let decoded: { actor?: unknown; iat?: unknown };
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw new ActorSignatureError('malformed payload');
  }
  if (typeof decoded.iat !== 'number' || Math.abs(nowMs / 1000 - decoded.iat) > ACTOR_MAX_AGE_SECONDS) {
    throw new ActorSignatureError('stale');
  }
  if (!isActor(decoded.actor)) throw new ActorSignatureError('unknown actor shape');
  return decoded.actor;
}
