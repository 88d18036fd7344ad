// Turns the credential a caller presents into an Actor: the admin bearer token (stored only as
// sha256 hashes, compared in constant time) here, owner and consumer sessions in sessions.ts, each a
// BearerVerifier. No credential is the anonymous actor; a credential nobody accepts is a 401.
import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../core/errors';
import { ANONYMOUS, type Actor } from '../../platform/actor';

/**
 * Returns the actor for a bearer token it recognises, or null when the token is not its kind; may
 * answer later (a session's JWS is checked by jose, whose verify is async).
 */
export type BearerVerifier = (token: string) => Actor | null | Promise<Actor | null>;

export const MAX_BEARER_LENGTH = 4096;

/** sha256(token) compared against every configured hash, with no early exit. */
export function adminTokenVerifier(adminTokenHashes: readonly Buffer[]): BearerVerifier {
  return (token) => {
    const digest = createHash('sha256').update(token, 'utf8').digest();
    let matched = false;
    for (const hash of adminTokenHashes) {
      if (hash.length === digest.length && timingSafeEqual(hash, digest)) matched = true;
    }
    return matched ? { kind: 'admin' } : null;
  };
}

export function bearerToken(authorization: string | undefined): string | null {
  if (authorization === undefined || authorization === '') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match)
    throw new AppError('SESSION_INVALID', 'The Authorization header must be "Bearer <token>".');
  if (match[1].length > MAX_BEARER_LENGTH)
    throw new AppError('SESSION_INVALID', 'The bearer token is too long.');
  return match[1];
}

export class Authenticator {
  constructor(private readonly verifiers: readonly BearerVerifier[]) {}

  /** The actor behind an Authorization header value; throws SESSION_INVALID for an unknown token. */
  async authenticate(authorization: string | undefined): Promise<Actor> {
    const token = bearerToken(authorization);
    if (token === null) return ANONYMOUS;
    for (const verify of this.verifiers) {
      const actor = await verify(token);
      if (actor) return actor;
    }
    throw new AppError('SESSION_INVALID');
  }
}
