// Owner and consumer session bearers. The gateway owns credentials: after the policy subgraph has
// verified a sign-in, the gateway mints a bearer from its claims, a JWS (HS256, jose) keyed with
// SESSION_SECRET, and later turns a presented bearer back into an Actor. The lifetime is 30 minutes
// and expiry is checked against the gateway's injected clock. Nothing is stored server-side.
//
// Token: JWS compact `<header>.<payload>.<HMAC-SHA256>`, header {alg: "HS256", typ: "session+jwt"},
// payload {typ, sub, pid?, iat, exp}: typ "consumer" (pid = the one policyId) or "owner"; sub =
// lowercase address; iat/exp unix seconds. Only HS256 verifies: no `none`, no RS/ES.
import { createHash, webcrypto } from 'node:crypto';
import { SignJWT, decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';
import { AppError } from '../../core/errors';
import type { Actor } from '../../platform/actor';
import { bearerToken, type BearerVerifier } from './credentials';

/** The JWS header `typ` that marks a bearer as this service's session (RFC 8725 §3.11). */
export const SESSION_TOKEN_TYPE = 'session+jwt';
export const SESSION_LIFETIME_SECONDS = 30 * 60;
/** HMAC keys shorter than the hash output weaken it. */
export const MIN_SESSION_SECRET_BYTES = 32;
/** A token issued slightly "later" than this gateway's clock (another replica) is still accepted. */
const ISSUED_AT_SKEW_SECONDS = 60;
const ALGORITHM = 'HS256';

const ADDRESS = /^0x[0-9a-f]{40}$/;
const POLICY_ID = /^(0|[1-9][0-9]{0,77})$/;

const MALFORMED = 'The session token is malformed; sign in again.';
const NOT_ISSUED = 'The session token is not one this service issued; sign in again.';
const IMPOSSIBLE_LIFETIME = 'The session token has an impossible lifetime; sign in again.';
const EXPIRED = 'The session expired; sign in again.';
/** jose's refusal of a claim, for a token whose claims passed our own checks (nbf, say). */
const CLAIM_REFUSALS: Readonly<Record<string, string>> = {
  exp: EXPIRED,
  iat: IMPOSSIBLE_LIFETIME,
  nbf: IMPOSSIBLE_LIFETIME,
};

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

function assertSecret(secret: Buffer): void {
  if (!Buffer.isBuffer(secret) || secret.length < MIN_SESSION_SECRET_BYTES) {
    throw new Error(
      `the session secret must be a Buffer of at least ${MIN_SESSION_SECRET_BYTES} bytes`,
    );
  }
}

/** Imported once per issuer or verifier: jose would import a raw secret again on every call. */
function hmacKey(secret: Buffer): Promise<webcrypto.CryptoKey> {
  return webcrypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ]);
}

/** Mints bearers; the lifetime is capped at 30 minutes from now whatever the claims say. */
export function sessionIssuer(
  secret: Buffer,
  now: () => Date,
): (claims: SessionClaims) => Promise<IssuedSession> {
  assertSecret(secret);
  const key = hmacKey(secret);
  return async (claims) => {
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
    const accessToken = await new SignJWT({
      typ,
      ...(claims.policyId !== null ? { pid: claims.policyId } : {}),
    })
      .setProtectedHeader({ alg: ALGORITHM, typ: SESSION_TOKEN_TYPE })
      .setSubject(address)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(await key);
    return {
      accessToken,
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

/** Ours when the JWS header names our `typ`; whether it is well-formed is jose's to judge. */
function isSessionToken(token: string): boolean {
  try {
    const header: unknown = JSON.parse(
      Buffer.from(token.split('.', 1)[0], 'base64url').toString('utf8'),
    );
    return (
      typeof header === 'object' &&
      header !== null &&
      (header as { typ?: unknown }).typ === SESSION_TOKEN_TYPE
    );
  } catch {
    return false;
  }
}

/** The payload's shape, stricter than JWT's (policyId pattern, one kind per shape). */
function sessionPayload(decoded: Partial<SessionPayload>): SessionPayload {
  const shapeOk =
    (decoded.typ === 'consumer' || decoded.typ === 'owner') &&
    typeof decoded.sub === 'string' &&
    ADDRESS.test(decoded.sub) &&
    (decoded.typ === 'owner'
      ? decoded.pid === undefined
      : typeof decoded.pid === 'string' && POLICY_ID.test(decoded.pid)) &&
    Number.isSafeInteger(decoded.iat) &&
    Number.isSafeInteger(decoded.exp);
  if (!shapeOk) throw invalid(MALFORMED);
  return decoded as SessionPayload;
}

/** Shape, then lifetime, then expiry: the order the refusals have always had. */
function checkedClaims(payload: JWTPayload, nowSeconds: number): SessionPayload {
  const claims = sessionPayload(payload as Partial<SessionPayload>);
  if (
    claims.exp - claims.iat > SESSION_LIFETIME_SECONDS ||
    claims.iat > nowSeconds + ISSUED_AT_SKEW_SECONDS
  ) {
    throw invalid(IMPOSSIBLE_LIFETIME);
  }
  if (nowSeconds >= claims.exp) throw invalid(EXPIRED);
  return claims;
}

/** jose's error classes as our refusals; anything else is not a verdict on the token. */
function refusal(error: unknown, nowSeconds: number): unknown {
  if (error instanceof errors.JWTClaimValidationFailed || error instanceof errors.JWTExpired) {
    // The signature held: our own checks speak first, as they did before jose.
    checkedClaims(error.payload, nowSeconds);
    return invalid(CLAIM_REFUSALS[error.claim] ?? MALFORMED);
  }
  if (
    error instanceof errors.JWSSignatureVerificationFailed ||
    error instanceof errors.JOSEAlgNotAllowed
  ) {
    return invalid(NOT_ISSUED);
  }
  if (error instanceof errors.JOSEError) return invalid(MALFORMED);
  return error;
}

/** How many verified session tokens a verifier remembers (oldest verified first out). */
export const VERIFIED_TOKENS_KEPT = 10_000;

/**
 * Session tokens whose signature held, by their sha256 (so no lookup ever compares a caller's text
 * with a real token's): a token presented again (each socket of one sign-in, every request of an
 * agent) is not verified again, which is WebCrypto HMAC through jose, about 0.13 ms of the main
 * thread each here. Only the signature is remembered: the claims are checked against the clock at
 * every presentation, so an expired token is refused as before. A verifier's memory is its own, so
 * a new SESSION_SECRET (a restart) starts empty.
 */
class VerifiedTokens {
  private readonly payloads = new Map<string, JWTPayload>();

  static digest(token: string): string {
    return createHash('sha256').update(token, 'utf8').digest('base64');
  }

  get(digest: string): JWTPayload | undefined {
    return this.payloads.get(digest);
  }

  add(digest: string, payload: JWTPayload): void {
    if (this.payloads.size >= VERIFIED_TOKENS_KEPT)
      this.payloads.delete(this.payloads.keys().next().value as string);
    this.payloads.set(digest, Object.freeze(payload));
  }

  forget(digest: string): void {
    this.payloads.delete(digest);
  }
}

/**
 * Recognises session bearers by their header (anything else is another verifier's: null). A token
 * of this kind that fails its signature, its shape or its lifetime is SESSION_INVALID.
 */
export function sessionVerifier(secret: Buffer, now: () => Date): BearerVerifier {
  assertSecret(secret);
  const key = hmacKey(secret);
  const verified = new VerifiedTokens();
  return async (token): Promise<Actor | null> => {
    const at = now();
    const nowSeconds = at.getTime() / 1000;
    const digest = VerifiedTokens.digest(token);
    const known = verified.get(digest);
    if (known !== undefined) {
      try {
        return actorOf(checkedClaims(known, nowSeconds));
      } catch (error) {
        verified.forget(digest);
        throw error;
      }
    }
    if (!isSessionToken(token)) return null;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, await key, {
        algorithms: [ALGORITHM],
        currentDate: at,
      }));
    } catch (error) {
      throw refusal(error, nowSeconds);
    }
    const claims = checkedClaims(payload, nowSeconds);
    verified.add(digest, payload);
    return actorOf(claims);
  };
}

function actorOf(claims: SessionPayload): Actor {
  return claims.typ === 'consumer'
    ? { kind: 'consumer', address: claims.sub, policyId: claims.pid! }
    : { kind: 'owner', address: claims.sub };
}

/**
 * When the session bearer in an Authorization value ends (its `exp`); null for any other
 * credential. Reads the token without checking it: only for a value sessionVerifier accepted.
 * The websocket server closes a socket at this instant (4403), since it outlives the request.
 */
export function sessionExpiresAt(authorization: string): Date | null {
  const token = bearerToken(authorization);
  if (token === null || !isSessionToken(token) || token.split('.').length !== 3) return null;
  let decoded: JWTPayload;
  try {
    decoded = decodeJwt(token);
  } catch {
    throw invalid(MALFORMED);
  }
  return new Date(sessionPayload(decoded as Partial<SessionPayload>).exp * 1000);
}
