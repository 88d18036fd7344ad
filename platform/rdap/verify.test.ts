// serviceVerified for domains.check keeps the service's finding apart from the merchant's word:
// verified only when the registry answered and agrees; a contradiction is not verified and says so;
// a failed lookup is not verified and gives the reason. Other capabilities are labelled attestation only.
import net from 'node:net';
import { type DevnetRdapRegistry, startDevnetRdapRegistry } from '../../devnet/rdap/registry';
import { createRdapClient, type RdapClient } from './lookupDomain';
import { type DomainsCheckClaim, providerAttestationOnly, verifyDomainsCheck } from './verify';

const NOW = new Date('2026-03-14T09:00:00Z');
const now = () => NOW;

describe('verifyDomainsCheck', () => {
  let registry: DevnetRdapRegistry;
  let rdap: RdapClient;

  beforeAll(async () => {
    registry = await startDevnetRdapRegistry();
    rdap = createRdapClient({
      addressPolicy: 'development',
      bootstrapSource: registry.bootstrapUrl,
      now,
      lookupTimeoutMs: 300,
      transportRetries: 1,
    });
  });

  afterAll(async () => {
    await registry.stop();
  });

  afterEach(() => {
    registry.clearFaults();
  });

  it.each([
    [{ domain: 'taken.test', available: false }, 'taken'],
    [{ domain: 'free-name.test', available: true }, 'available'],
  ])('verifies %j when the registry agrees', async (claim, said) => {
    const result = await verifyDomainsCheck(claim, rdap, now);
    expect(result.finding).toBe('CONFIRMED');
    expect(result.serviceVerified).toEqual({
      verified: true,
      method: 'RDAP',
      source: `${registry.url}/domain/${claim.domain}`,
      checkedAt: NOW.toISOString(),
      detail: expect.stringMatching(
        new RegExp(
          `^the registry agrees with the merchant \\(the merchant said ${claim.domain} is ${said}\\): `,
        ),
      ),
    });
  });

  it.each([
    [
      { domain: 'taken.test', available: true },
      'the merchant said taken.test is available',
      'holds a domain object',
    ],
    [
      { domain: 'free-name.test', available: false },
      'the merchant said free-name.test is taken',
      'HTTP 404',
    ],
  ])(
    'does not verify %j: the registry contradicts the merchant',
    async (claim, said, registrySaid) => {
      const result = await verifyDomainsCheck(claim, rdap, now);
      expect(result.finding).toBe('CONTRADICTED');
      expect(result.serviceVerified.verified).toBe(false);
      expect(result.serviceVerified.method).toBe('RDAP');
      expect(result.serviceVerified.detail).toMatch(/^the registry contradicts the merchant/);
      expect(result.serviceVerified.detail).toContain(said);
      expect(result.serviceVerified.detail).toContain(registrySaid);
    },
  );

  it('does not verify when the registry is down, and gives the reason', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as net.AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const down = createRdapClient({
      addressPolicy: 'development',
      bootstrapSource: `http://127.0.0.1:${port}/dns.json`,
      now,
    });
    const result = await verifyDomainsCheck({ domain: 'taken.test', available: false }, down, now);
    expect(result.finding).toBe('UNVERIFIED');
    expect(result.serviceVerified).toEqual({
      verified: false,
      method: 'RDAP',
      source: `http://127.0.0.1:${port}/dns.json`,
      checkedAt: NOW.toISOString(),
      detail: expect.stringMatching(
        /^not verified: the RDAP lookup failed \(BOOTSTRAP_UNAVAILABLE\): .*ECONNREFUSED/,
      ),
    });
  });

  it.each([
    ['HTTP_500', 'SERVER_ERROR'],
    ['HTTP_429', 'RATE_LIMITED'],
    ['MALFORMED_JSON', 'MALFORMED_ANSWER'],
    ['RESET', 'NETWORK'],
  ] as const)(
    'does not verify when the registry fails (%s), even if it would agree',
    async (answer, reason) => {
      registry.setFaults({ answer });
      const result = await verifyDomainsCheck(
        { domain: 'taken.test', available: false },
        rdap,
        now,
      );
      expect(result).toMatchObject({
        finding: 'UNVERIFIED',
        serviceVerified: { verified: false, source: `${registry.url}/domain/taken.test` },
      });
      expect(result.serviceVerified.detail).toMatch(
        new RegExp(`^not verified: the RDAP lookup failed \\(${reason}\\)`),
      );
    },
  );

  it('does not verify when the registry is too slow', async () => {
    registry.setFaults({ delayMs: 2_000 });
    const result = await verifyDomainsCheck({ domain: 'taken.test', available: false }, rdap, now);
    expect(result.serviceVerified).toMatchObject({
      verified: false,
      detail: 'not verified: the RDAP lookup failed (TIMEOUT): no complete answer within 300 ms',
    });
  });

  it('does not verify a claim that names no valid domain or no yes/no, and asks no registry', async () => {
    registry.resetStats();
    const badName = await verifyDomainsCheck(
      { domain: 'taken.test/x', available: false },
      rdap,
      now,
    );
    expect(badName).toMatchObject({
      finding: 'UNVERIFIED',
      lookup: null,
      serviceVerified: { verified: false, source: registry.bootstrapUrl },
    });
    expect(badName.serviceVerified.detail).toMatch(
      /^not verified: the merchant's domain cannot be looked up/,
    );
    const noAnswer = await verifyDomainsCheck(
      { domain: 'taken.test', available: 'yes' } as unknown as DomainsCheckClaim,
      rdap,
      now,
    );
    expect(noAnswer.serviceVerified).toMatchObject({
      verified: false,
      detail: 'not verified: the merchant did not say whether the name is available',
    });
    expect(registry.stats.domainRequests).toBe(0);
  });

  it('checks the IDN A-label the merchant named in Unicode', async () => {
    const result = await verifyDomainsCheck(
      { domain: 'München.test', available: false },
      rdap,
      now,
    );
    expect(result.serviceVerified).toMatchObject({
      verified: true,
      source: `${registry.url}/domain/xn--mnchen-3ya.test`,
    });
  });
});

describe('providerAttestationOnly', () => {
  it("labels the result as the provider's word, never verified", () => {
    expect(
      providerAttestationOnly(
        { capability: 'gifts.order', attestedBy: 'https://merchant.example/x402' },
        now,
      ),
    ).toEqual({
      verified: false,
      method: 'PROVIDER_ATTESTATION',
      source: 'https://merchant.example/x402',
      checkedAt: NOW.toISOString(),
      detail:
        "not independently verified: gifts.order has no source other than the provider; this rests on the provider's attestation alone",
    });
  });

  it('takes every capability name the request validators take (one grammar, judged before any 402)', () => {
    for (const capability of ['shop.*', 'a.1b', 'gifts.order_2', 'x'])
      expect(providerAttestationOnly({ capability, attestedBy: 'm' }, now).method).toBe(
        'PROVIDER_ATTESTATION',
      );
  });

  it('refuses domains.check (it has an independent source) and malformed input', () => {
    expect(() => providerAttestationOnly({ capability: 'domains.check', attestedBy: 'm' })).toThrow(
      /RDAP/,
    );
    expect(() =>
      providerAttestationOnly({ capability: 'Not A Capability', attestedBy: 'm' }),
    ).toThrow(/capability/);
    expect(() => providerAttestationOnly({ capability: 'gifts.order', attestedBy: '' })).toThrow(
      /attestedBy/,
    );
  });
});
