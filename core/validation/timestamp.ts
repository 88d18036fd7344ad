// ISO-8601 timestamps as they appear on the wire, to and from unix seconds (the unit used
// wherever a time is hashed). Strict: a real calendar date, an explicit offset, whole seconds,
// years 1970–9999; a sub-second part is accepted only when it is zero, so nothing is rounded away.

const ISO_TIMESTAMP =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(Z|([+-])([0-9]{2}):([0-9]{2}))$/;

export type TimestampParse = { ok: true; unixSeconds: number } | { ok: false; reason: string };

export function parseIsoTimestamp(text: unknown): TimestampParse {
  if (typeof text !== 'string')
    return { ok: false, reason: 'must be an ISO-8601 timestamp string' };
  const m = ISO_TIMESTAMP.exec(text);
  if (m === null)
    return { ok: false, reason: 'must be an ISO-8601 timestamp like 2026-11-22T10:00:00Z' };
  const [, y, mo, d, h, mi, s, fraction, , sign, offH, offM] = m;
  if (fraction !== undefined && !/^0+$/.test(fraction))
    return { ok: false, reason: 'must be whole seconds' };
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  // 1969 is allowed locally: 1969-12-31T19:00:00-05:00 is the 1970 epoch; the instant is checked below.
  if (
    year < 1969 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    return { ok: false, reason: 'is not a valid date and time' };
  }
  const utcMs = Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC rolls 31 February into March; a round trip catches dates that do not exist.
  if (new Date(utcMs).getUTCDate() !== day)
    return { ok: false, reason: 'is not a valid date and time' };
  let offsetMinutes = 0;
  if (sign !== undefined) {
    if (Number(offH) > 23 || Number(offM) > 59)
      return { ok: false, reason: 'has an invalid UTC offset' };
    offsetMinutes = (Number(offH) * 60 + Number(offM)) * (sign === '-' ? -1 : 1);
  }
  const unixSeconds = utcMs / 1000 - offsetMinutes * 60;
  if (unixSeconds < 0) return { ok: false, reason: 'is before 1970' };
  return { ok: true, unixSeconds };
}

/** 1700000000 → "2023-11-14T22:13:20Z": whole seconds, always UTC, one spelling per instant. */
export function formatIsoSeconds(unixSeconds: number): string {
  if (!Number.isSafeInteger(unixSeconds)) throw new RangeError('unixSeconds must be an integer');
  return new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z');
}
