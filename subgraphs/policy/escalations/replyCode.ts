// The reply code of an escalation and the link code of a channel binding: 12 random bytes as 24
// lowercase hex, handed out once (in a notice, or to the owner who asked for a link) and stored
// only as sha256. Comparing digests in constant time keeps a lookup from leaking how close a guess was.
import { createHash, timingSafeEqual } from 'node:crypto';
import { defaultRandomBytes, type RandomBytesSource } from '../../../core/canon/ids';

export const REPLY_CODE_BYTES = 12;
export const REPLY_CODE = /^[0-9a-f]{24}$/;

export function newReplyCode(randomBytes: RandomBytesSource = defaultRandomBytes): string {
  const bytes = randomBytes(REPLY_CODE_BYTES);
  if (bytes.length !== REPLY_CODE_BYTES)
    throw new RangeError(`random source returned ${bytes.length} bytes`);
  return Buffer.from(bytes).toString('hex');
}

/** sha256 of the code's lowercase form: replies are case-insensitive. */
export function codeDigest(code: string): Buffer {
  return createHash('sha256').update(code.toLowerCase(), 'utf8').digest();
}

export function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
