// The shared checks behind every inbound signature: constant-time equality that does not care
// about lengths, the timestamp window, and header values that are missing or repeated.
import { constantTimeEqualText, isFreshTimestamp, singleHeaderValue } from './signing';

describe('constantTimeEqualText', () => {
  it('is true for equal strings only, whatever their lengths', () => {
    expect(constantTimeEqualText('abc', 'abc')).toBe(true);
    expect(constantTimeEqualText('abc', 'abd')).toBe(false);
    expect(constantTimeEqualText('abc', 'abcd')).toBe(false);
    expect(constantTimeEqualText('', '')).toBe(true);
  });
});

describe('isFreshTimestamp', () => {
  const now = new Date('2026-03-14T09:00:00Z');
  const seconds = now.getTime() / 1000;

  it('accepts unix seconds within the tolerance either side, inclusive', () => {
    expect(isFreshTimestamp(String(seconds), now, 300)).toBe(true);
    expect(isFreshTimestamp(String(seconds - 300), now, 300)).toBe(true);
    expect(isFreshTimestamp(String(seconds + 300), now, 300)).toBe(true);
    expect(isFreshTimestamp(String(seconds - 301), now, 300)).toBe(false);
    expect(isFreshTimestamp(String(seconds + 301), now, 300)).toBe(false);
  });

  it.each(['', '-1', '1e9', ' 1773478800', '1773478800.0', '0x69b523d0', '9'.repeat(13)])(
    'refuses %j',
    (text) => {
      expect(isFreshTimestamp(text, now, 300)).toBe(false);
    },
  );

  it('refuses a window wider than an hour as a programming error', () => {
    expect(() => isFreshTimestamp(String(seconds), now, 3_601)).toThrow(RangeError);
  });
});

describe('singleHeaderValue', () => {
  it('takes one value and distrusts repeated headers', () => {
    expect(singleHeaderValue('a')).toBe('a');
    expect(singleHeaderValue(['a'])).toBe('a');
    expect(singleHeaderValue(['a', 'b'])).toBeNull();
    expect(singleHeaderValue(undefined)).toBeNull();
  });
});
