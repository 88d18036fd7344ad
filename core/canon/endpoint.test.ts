// Endpoint canonicalisation: one spelling per endpoint, idempotent, http(s) only.
import fc from 'fast-check';
import { canonicalEndpoint, EndpointError } from './endpoint';

describe('canonicalEndpoint', () => {
  it.each([
    ['HTTPS://API.Vendor.EXAMPLE/candles', 'https://api.vendor.example/candles'],
    ['https://api.vendor.example:443/candles', 'https://api.vendor.example/candles'],
    ['http://api.vendor.example:80/x', 'http://api.vendor.example/x'],
    ['https://api.vendor.example:8443/x', 'https://api.vendor.example:8443/x'],
    ['https://api.vendor.example/x?b=2&a=1', 'https://api.vendor.example/x?a=1&b=2'],
    ['https://api.vendor.example/x?a=2&b=1&a=1', 'https://api.vendor.example/x?a=2&a=1&b=1'],
    ['https://api.vendor.example/x#section', 'https://api.vendor.example/x'],
    ['https://api.vendor.example/x?', 'https://api.vendor.example/x'],
    ['https://api.vendor.example', 'https://api.vendor.example/'],
    ['https://api.vendor.example/a/../Candles', 'https://api.vendor.example/Candles'],
  ])('%s → %s', (raw, canonical) => {
    expect(canonicalEndpoint(raw)).toBe(canonical);
  });

  it.each([
    ['ftp://api.vendor.example/x', 'other schemes'],
    ['/relative/path', 'relative URLs'],
    ['https://user:pw@api.vendor.example/', 'credentials'],
    [' https://api.vendor.example/', 'surrounding whitespace'],
    ['', 'the empty string'],
    [`https://api.vendor.example/${'a'.repeat(2048)}`, 'more than 2048 characters'],
  ])('refuses %j (%s)', (raw) => {
    expect(() => canonicalEndpoint(raw)).toThrow(EndpointError);
  });

  it('is idempotent and ignores query order', () => {
    const param = fc.tuple(fc.stringMatching(/^[a-z]{1,4}$/), fc.stringMatching(/^[a-z0-9]{0,4}$/));
    fc.assert(
      fc.property(
        fc.uniqueArray(param, { maxLength: 6, selector: ([key]) => key }),
        fc.boolean(),
        (params, upperHost) => {
          const query = params.map(([k, v]) => `${k}=${v}`);
          const host = upperHost ? 'API.VENDOR.EXAMPLE' : 'api.vendor.example';
          const forward = canonicalEndpoint(`https://${host}/p?${query.join('&')}`);
          const backward = canonicalEndpoint(
            `https://api.vendor.example:443/p?${[...query].reverse().join('&')}#f`,
          );
          expect(backward).toBe(forward);
          expect(canonicalEndpoint(forward)).toBe(forward);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
