// Owner and consumer session bearers. The gateway owns credentials: after the policy subgraph has
// verified a sign-in, the gateway mints a bearer from its claims, HMAC-SHA256-signed with
// SESSION_SECRET, and later turns a presented bearer back into an Actor. The lifetime is 30 minutes
// and expiry is checked against the gateway's injected clock. Nothing is stored server-side.
//
// Token: `scs1.<base64url(JSON{typ, sub, pid?, iat, exp})>.<base64url(HMAC-SHA256(secret, "scs1." + payload))>`
// typ "consumer" (pid = the one policyId) or "owner"; sub = lowercase address; iat/exp unix seconds.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../core/errors';
import type { Actor } from '../../platform/actor';
import { bearerToken, type BearerVerifier } from './credentials';

export const SESSION_TOKEN_PREFIX = 'scs1';
export const SESSION_LIFETIME_SECONDS = 30 * 60;
/** HMAC keys shorter than the hash output weaken it. */
export const MIN_SESSION_SECRET_BYTES = 32;
/** A token issued slightly "later" than this gateway's clock (another replica) is still accepted. */
const ISSUED_AT_SKEW_SECONDS = 60;

const ADDRESS = /^0x[0-9a-f]{40}$/;
const POLICY_ID = /^(0|[1-9][0-9]{0,77})$/;

export type SessionKind = 'consumer' | 'owner';

/** What the policy subgraph proved at sign-in. */
export interface SessionClaims {
  readonly address: string;
  /** The one policy of a consumer session; null for an owner session. */
  readonly policyId: string | null;
  readonly expiresAt: Date;
}

/** The body of a sign-in answer. */
export interface IssuedSession {
  readonly accessToken: string;
  readonly tokenType: 'Bearer';
  readonly session: SessionKind;
  readonly address: string;
  readonly policyId: string | null;
  readonly expiresAt: string;
  readonly expiresInSeconds: number;
}

interface SessionPayload {
  typ: SessionKind;
  sub: string;
  pid?: string;
  iat: number;
  exp: number;
}

function mac(secret: Buffer, payload: string): Buffer {
  return createHmac('sha256', secret).update(`${SESSION_TOKEN_PREFIX}.${payload}`).digest();
}

function assertSecret(secret: Buffer): void {
  if (!Buffer.isBuffer(secret) || secret.length < MIN_SESSION_SECRET_BYTES) {
    throw new Error(
      `the session secret must be a Buffer of at least ${MIN_SESSION_SECRET_BYTES} bytes`,
    );
  }
}

/** Mints bearers; the lifetime is capped at 30 minutes from now whatever the claims say. */
export function sessionIssuer(
  secret: Buffer,
  now: () => Date,
): (claims: SessionClaims) => IssuedSession {
  assertSecret(secret);
  return (claims) => {
    const address = claims.address.toLowerCase();
    if (!ADDRESS.test(address)) throw new Error('session claims carry no valid address');
    if (claims.policyId !== null && !POLICY_ID.test(claims.policyId))
      throw new Error('session claims carry a malformed policyId');
    const iat = Math.floor(now().getTime() / 1000);
    const exp = Math.min(
      Math.floor(claims.expiresAt.getTime() / 1000),
      iat + SESSION_LIFETIME_SECONDS,
    );
    if (!(exp > iat)) throw new Error('session claims are already expired');
    const typ: SessionKind = claims.policyId === null ? 'owner' : 'consumer';
    const body: SessionPayload = {
      typ,
      sub: address,
      ...(claims.policyId !== null ? { pid: claims.policyId } : {}),
      iat,
      exp,
    };
    const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
    return {
      accessToken: `${SESSION_TOKEN_PREFIX}.${payload}.${mac(secret, payload).toString('base64url')}`,
      tokenType: 'Bearer',
      session: typ,
      address,
      policyId: claims.policyId,
      expiresAt: new Date(exp * 1000).toISOString(),
      expiresInSeconds: exp - iat,
    };
  };
}

function invalid(message: string): AppError {
  return new AppError('SESSION_INVALID', message);
}

function parsePayload(payload: string): SessionPayload {
  let decoded: Partial<SessionPayload>;
  try {
    decoded = JSON.parse(
      Buffer.from(payload, 'base64url').toString('utf8'),
    ) as Partial<SessionPayload>;
  } catch {
    throw invalid('The session token is malformed; sign in again.');
  }
  const shapeOk =
    (decoded.typ === 'consumer' || decoded.typ === 'owner') &&
    typeof decoded.sub === 'string' &&
    ADDRESS.test(decoded.sub) &&
    (decoded.typ === 'owner'
      ? decoded.pid === undefined
      : typeof decoded.pid === 'string' && POLICY_ID.test(decoded.pid)) &&
    Number.isSafeInteger(decoded.iat) &&
    Number.isSafeInteger(decoded.exp);
  if (!shapeOk) throw invalid('The session token is malformed; sign in again.');
  return decoded as SessionPayload;
}

/**
 * Recognises `scs1.` bearers (anything else is another verifier's: null). A token of this kind that
 * fails its MAC, its shape or its lifetime is SESSION_INVALID.
 */
export function sessionVerifier(secret: Buffer, now: () => Date): BearerVerifier {
  assertSecret(secret);
  return (token): Actor | null => {
    const parts = token.split('.');
    if (parts[0] !== SESSION_TOKEN_PREFIX) return null;
    if (parts.length !== 3) throw invalid('The session token is malformed; sign in again.');
    const [, payload, signature] = parts;
    const given = Buffer.from(signature, 'base64url');
    const expected = mac(secret, payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw invalid('The session token is not one this service issued; sign in again.');
    }
    const claims = parsePayload(payload);
    const nowSeconds = now().getTime() / 1000;
    if (
      claims.exp - claims.iat > SESSION_LIFETIME_SECONDS ||
      claims.iat > nowSeconds + ISSUED_AT_SKEW_SECONDS
    ) {
      throw invalid('The session token has an impossible lifetime; sign in again.');
    }
    if (nowSeconds >= claims.exp) throw invalid('The session expired; sign in again.');
    return claims.typ === 'consumer'
      ? { kind: 'consumer', address: claims.sub, policyId: claims.pid! }
      : { kind: 'owner', address: claims.sub };
  };
}

/**
 * When the session bearer in an Authorization value ends (its `exp`); null for any other
 * credential. Reads the token without checking it: only for a value sessionVerifier accepted.
 * The websocket server closes a socket at this instant (4403), since it outlives the request.
 */
export function sessionExpiresAt(authorization: string): Date | null {
  const token = bearerToken(authorization);
  const parts = token?.split('.') ?? [];
  if (parts[0] !== SESSION_TOKEN_PREFIX || parts.length !== 3) return null;
  return new Date(parsePayload(parts[1]).exp * 1000);
}
