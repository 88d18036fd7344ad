// The address policy every RDAP hop is held to: development takes the devnet registry on loopback
// http; outside it (public) only https to hosts that are, and resolve to, public addresses.
import { addressProblem, isNonPublicAddress } from './urlPolicy';

const resolving =
  (...addresses: string[]) =>
  async () =>
    addresses;

describe('isNonPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fd00::1',
    'fe80::1',
    '::ffff:192.168.1.1',
    'not an address',
  ])('%s is not public', (address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });

  it.each(['93.184.216.34', '2606:2800:220:1::1', '::ffff:93.184.216.34'])(
    '%s is public',
    (address) => {
      expect(isNonPublicAddress(address)).toBe(false);
    },
  );
});

describe('addressProblem', () => {
  it('development: https anywhere and plain http on loopback (the devnet registry)', async () => {
    expect(await addressProblem(new URL('http://127.0.0.1:9/x'), 'development')).toBeNull();
    expect(await addressProblem(new URL('https://10.0.0.1/x'), 'development')).toBeNull();
    expect(await addressProblem(new URL('http://registry.example/x'), 'development')).toBe(
      'not https (or loopback http)',
    );
  });

  it('public: plain http is refused, loopback included', async () => {
    expect(await addressProblem(new URL('http://127.0.0.1:9/x'), 'public')).toBe(
      'plain http outside development',
    );
  });

  it('public: an address literal or a name resolving to a non-public address is refused', async () => {
    expect(await addressProblem(new URL('https://10.0.0.1/x'), 'public')).toBe(
      '10.0.0.1 is not a public address',
    );
    expect(await addressProblem(new URL('https://[::1]/x'), 'public')).toBe(
      '::1 is not a public address',
    );
    expect(
      await addressProblem(
        new URL('https://rdap.example/x'),
        'public',
        resolving('93.184.216.34', '192.168.0.7'),
      ),
    ).toBe('rdap.example is not a public address');
    expect(await addressProblem(new URL('https://rdap.example/x'), 'public', resolving())).toBe(
      'rdap.example does not resolve',
    );
  });

  it('public: https to a name that resolves only to public addresses is asked', async () => {
    expect(
      await addressProblem(
        new URL('https://rdap.example/x'),
        'public',
        resolving('93.184.216.34', '2606:2800:220:1::1'),
      ),
    ).toBeNull();
  });
});
