// Admin tokens are configured as sha256 hashes only (ADMIN_TOKEN_HASHES); a presented token matches
// when its digest equals one of them, compared through platform/digest.ts in constant time.
import { matchesAnyDigest, sha256 } from '../digest';

export { sha256 };

/** True when sha256(token) equals one of `hashes`; compares against every hash, in constant time. */
export function adminTokenMatches(token: string, hashes: readonly Buffer[]): boolean {
  return matchesAnyDigest(sha256(token), hashes);
}
