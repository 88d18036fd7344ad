// sha256 digests and their comparison in constant time: the one place the codebase compares a
// secret-derived digest, so no caller hand-rolls an early exit or forgets the length check.
import { createHash, timingSafeEqual } from 'node:crypto';

export function sha256(value: string | Buffer): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Equal digests, in time independent of where they differ; digests of another length never match. */
export function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** True when `digest` equals one of `digests`; compares against every one, with no early exit. */
export function matchesAnyDigest(digest: Buffer, digests: readonly Buffer[]): boolean {
  let matched = false;
  for (const candidate of digests) matched = sameDigest(candidate, digest) || matched;
  return matched;
}
