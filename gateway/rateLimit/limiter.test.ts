// Which buckets a request is charged to, and whose they are: the client address (IPv6 by /64)
// the payer an x402 payment header names, and the principal a valid bearer names.
import { encodePaymentSignatureHeader } from '@x402/core/http';
import { buildRoutes } from '../rest/routes';
import { routeMatcher } from '../rest/router';
import { clientBucketId, ipv6Groups } from './clientIp';
import { chargesFor, payerOf, principalKey, type RateLimits } from './limiter';

const LIMITS: RateLimits = {
  ip: { perMinute: 600, burst: 120 },
  challenge: { perMinute: 600, burst: 60 },
  principal: { perMinute: 600, burst: 120 },
  payer: { perMinute: 600, burst: 60 },
  paidIp: { perMinute: 6_000, burst: 600 },
  signIn: { perMinute: 10, burst: 10 },
  outbound: { perMinute: 10, burst: 5 },
};
const routeFor = routeMatcher(buildRoutes());
const PAYER = '0x00000000000000000000000000000000000000aB';

function header(payload: unknown): string {
  return encodePaymentSignatureHeader(payload as never);
}

describe('client bucket ids', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    [undefined, 'unknown'],
    ['not an address', 'unknown'],
  ])('%s counts as %s', (address, id) => {
    expect(clientBucketId(address)).toBe(id);
  });

  it('expands IPv6 with an embedded IPv4 tail', () => {
    expect(ipv6Groups('64:ff9b::192.0.2.33')).toEqual([0x64, 0xff9b, 0, 0, 0, 0, 0xc000, 0x0221]);
  });
});

describe('payerOf', () => {
  it('reads the authorization’s from, lowercase', () => {
    expect(
      payerOf(
        header({ x402Version: 2, payload: { authorization: { from: PAYER }, signature: '0x' } }),
      ),
    ).toBe(PAYER.toLowerCase());
  });

  it.each([
    ['not base64 json'],
    [header({ x402Version: 2 })],
    [header({ payload: { authorization: { from: '0x1234' } } })],
    [header(null)],
  ])('names nobody for %s', (value) => {
    expect(payerOf(value)).toBeNull();
  });
});

describe('chargesFor', () => {
  it('charges an anonymous free route and an unknown path to the client’s IP bucket', () => {
    for (const route of [routeFor('GET', '/catalog'), routeFor('GET', '/no/such/path')]) {
      expect(chargesFor({ client: '198.51.100.1', route, payer: null }, LIMITS)).toEqual([
        { key: 'ip:198.51.100.1', limit: LIMITS.ip },
      ]);
    }
  });

  it('charges the unpaid 402 of a priced route to the client’s challenge bucket, not its IP bucket', () => {
    for (const route of [
      routeFor('POST', '/preflight_payment'),
      routeFor('GET', '/ping_service'),
    ]) {
      expect(chargesFor({ client: '198.51.100.1', route, payer: null }, LIMITS)).toEqual([
        { key: 'challenge:198.51.100.1', limit: LIMITS.challenge },
      ]);
    }
  });

  it('charges a request with a valid bearer to its principal, not to its IP', () => {
    for (const route of [
      routeFor('GET', '/catalog'),
      routeFor('POST', '/generate_dispute_packet'),
    ]) {
      expect(
        chargesFor({ client: 'c', route, payer: null, principal: 'owner:0xab' }, LIMITS),
      ).toEqual([{ key: 'principal:owner:0xab', limit: LIMITS.principal }]);
    }
  });

  it('names one principal per admin, owner address and consumer session policy', () => {
    expect(principalKey({ kind: 'admin' })).toBe('admin');
    expect(principalKey({ kind: 'owner', address: '0xAB' })).toBe('owner:0xab');
    expect(principalKey({ kind: 'consumer', address: '0xAB', policyId: '7' })).toBe(
      'consumer:0xab:7',
    );
    expect(principalKey({ kind: 'anonymous' })).toBeNull();
  });

  it('charges a paid call to its payer and, beside it, the paid calls of its IP', () => {
    expect(
      chargesFor(
        { client: '198.51.100.1', route: routeFor('POST', '/preflight_payment'), payer: '0xab' },
        LIMITS,
      ),
    ).toEqual([
      { key: 'payer:0xab', limit: LIMITS.payer },
      { key: 'paid-ip:198.51.100.1', limit: LIMITS.paidIp },
    ]);
  });

  it('adds the sign-in bucket to nonce issuing and both verifications, matched as Express matches', () => {
    for (const [method, path] of [
      ['POST', '/consumer/auth/nonce'],
      ['POST', '/Consumer/Auth/Nonce/'],
      ['POST', '/consumer/auth/verify'],
      ['POST', '/owner/auth/verify'],
    ] as const) {
      expect(
        chargesFor({ client: 'c', route: routeFor(method, path), payer: null }, LIMITS),
      ).toEqual([
        { key: 'ip:c', limit: LIMITS.ip },
        { key: 'sign-in:c', limit: LIMITS.signIn },
      ]);
    }
  });

  it('adds the outbound bucket to routes that call a third party', () => {
    expect(
      chargesFor(
        { client: 'c', route: routeFor('POST', '/sync_policy_registration'), payer: null },
        LIMITS,
      ),
    ).toEqual([
      { key: 'ip:c', limit: LIMITS.ip },
      { key: 'outbound:ip:c', limit: LIMITS.outbound },
    ]);
  });

  it('serves HEAD by the GET route', () => {
    expect(routeFor('HEAD', '/ping_service')?.path).toBe('/ping_service');
    expect(routeFor('HEAD', '/preflight_payment')).toBeNull();
  });
});
