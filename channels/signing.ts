// The cryptographic checks every inbound channel shares: HMAC-SHA256 in hex, comparisons whose
// time does not depend on where two values differ (or on their lengths), and the replay window on
// signed timestamps. Callers get booleans; a missing or malformed input is simply false.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Signed requests older or newer than this are refused, unless the caller narrows it. */
export const DEFAULT_TOLERANCE_SECONDS = 300;
/** A wider window would make a captured request replayable for too long. */
export const MAX_TOLERANCE_SECONDS = 3_600;
/** Unix seconds as decimal digits; 12 digits reach the year 33658. */
const MAX_TIMESTAMP_DIGITS = 12;

export function hmacSha256Hex(key: string, data: string | Buffer): string {
  return createHmac('sha256', key).update(data).digest('hex');
}

/**
 * Constant-time equality of two strings of any length: both are hashed first, so neither the
 * position of the first difference nor the expected length leaks.
 */
export function constantTimeEqualText(expected: string, actual: string): boolean {
  const a = createHash('sha256').update(expected, 'utf8').digest();
  const b = createHash('sha256').update(actual, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** One header value, or null when it is absent or repeated (a repeated signature header is not trusted). */
export function singleHeaderValue(
  value: string | readonly string[] | null | undefined,
): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.length === 1 && typeof value[0] === 'string') return value[0];
  return null;
}

/** Unix seconds in `timestamp` lie within `toleranceSeconds` of `now`, in either direction. */
export function isFreshTimestamp(timestamp: string, now: Date, toleranceSeconds: number): boolean {
  if (
    !Number.isInteger(toleranceSeconds) ||
    toleranceSeconds < 0 ||
    toleranceSeconds > MAX_TOLERANCE_SECONDS
  ) {
    throw new RangeError(`toleranceSeconds must be an integer in 0..${MAX_TOLERANCE_SECONDS}`);
  }
  if (!(now instanceof Date) || Number.isNaN(now.getTime()))
    throw new RangeError('now must be a valid Date');
  if (!new RegExp(`^[0-9]{1,${MAX_TIMESTAMP_DIGITS}}$`).test(timestamp)) return false;
  const nowSeconds = Math.floor(now.getTime() / 1000);
  return Math.abs(nowSeconds - Number(timestamp)) <= toleranceSeconds;
}

export function unixSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}
