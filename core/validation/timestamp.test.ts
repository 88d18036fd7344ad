// Wire timestamps: strict ISO-8601 with an offset, whole seconds, real calendar dates.
import { formatIsoSeconds, parseIsoTimestamp } from './timestamp';

describe('parseIsoTimestamp', () => {
  it.each([
    ['2026-11-22T10:00:00Z', 1_795_341_600],
    ['2026-11-22T10:00:00.000Z', 1_795_341_600],
    ['2026-11-22T12:00:00+02:00', 1_795_341_600],
    ['2026-11-22T05:30:00-04:30', 1_795_341_600],
    ['2028-02-29T00:00:00Z', 1_835_395_200],
  ])('reads %s as unix second %d', (text, unixSeconds) => {
    expect(parseIsoTimestamp(text)).toEqual({ ok: true, unixSeconds });
  });

  it.each([
    '2026-11-22 10:00:00Z',
    '2026-11-22T10:00:00',
    '2026-11-22T10:00:00.5Z',
    '2026-02-30T00:00:00Z',
    '2027-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-11-22T24:00:00Z',
    '2026-11-22T10:00:60Z',
    '1969-12-31T23:59:59Z',
    '2026-11-22t10:00:00z',
    'tomorrow',
  ])('refuses %s', (text) => {
    expect(parseIsoTimestamp(text).ok).toBe(false);
  });

  it('refuses non-strings', () => {
    expect(parseIsoTimestamp(1_795_341_600).ok).toBe(false);
  });
});

describe('formatIsoSeconds', () => {
  it('writes whole-second UTC with a Z', () => {
    expect(formatIsoSeconds(1_795_341_600)).toBe('2026-11-22T10:00:00Z');
    expect(() => formatIsoSeconds(1.5)).toThrow(RangeError);
  });
});
