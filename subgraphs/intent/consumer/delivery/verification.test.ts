// checkDelivery on the devnet RDAP registry (a real HTTP server on 127.0.0.1): the merchant's word
// in, the service's own finding out, never the one passed off as the other. Plus the retry bound.
import { type DevnetRdapRegistry, startDevnetRdapRegistry } from '../../../../devnet/rdap/registry';
import { createRdapClient, type RdapClient } from '../../../../platform/rdap';
import { afterUnverified, assertDeliveryRetryPolicy, DEFAULT_DELIVERY_RETRY } from './retry';
import { checkDelivery, type DeliverySubject, NO_RDAP_SOURCE } from './verification';

const NOW = new Date('2026-03-14T09:00:00Z');
const now = () => NOW;

function domainsCheck(asked: string, said: { domain: unknown; available: unknown } | null) {
  return {
    capability: 'domains.check',
    params: { domain: asked },
    providerAttested: said === null ? null : { status: 'ATTESTED', fields: said },
    attestedBy: 'spendctl-domains',
  } satisfies DeliverySubject;
}

describe('checkDelivery', () => {
  let registry: DevnetRdapRegistry;
  let rdap: RdapClient;

  beforeAll(async () => {
    registry = await startDevnetRdapRegistry();
    rdap = createRdapClient({
      addressPolicy: 'development',
      bootstrapSource: registry.bootstrapUrl,
      now,
      lookupTimeoutMs: 300,
    });
  });

  afterAll(async () => {
    await registry.stop();
  });

  afterEach(() => registry.clearFaults());

  it('CONFIRMED when the registry agrees with the merchant, with the registry URL asked as the source', async () => {
    const check = await checkDelivery(
      domainsCheck('taken.test', { domain: 'taken.test', available: false }),
      rdap,
      now,
    );
    expect(check.outcome).toBe('CONFIRMED');
    expect(check.serviceVerified).toMatchObject({
      verified: true,
      method: 'RDAP',
      source: `${registry.url}/domain/taken.test`,
      checkedAt: NOW.toISOString(),
    });
  });

  it('CONTRADICTED when the registry disagrees, and when the merchant answered about another name (no lookup)', async () => {
    const lie = await checkDelivery(
      domainsCheck('taken.test', { domain: 'taken.test', available: true }),
      rdap,
      now,
    );
    expect(lie.outcome).toBe('CONTRADICTED');
    expect(lie.serviceVerified.verified).toBe(false);
    const before = registry.stats.domainRequests;
    const other = await checkDelivery(
      domainsCheck('taken.test', { domain: 'free-one.test', available: true }),
      rdap,
      now,
    );
    expect(other).toEqual({
      outcome: 'CONTRADICTED',
      serviceVerified: {
        verified: false,
        method: 'RDAP',
        source: registry.bootstrapUrl,
        checkedAt: NOW.toISOString(),
        detail:
          'the merchant contradicts the purchase: the merchant answered for free-one.test, but taken.test was asked about',
      },
    });
    expect(registry.stats.domainRequests).toBe(before);
  });

  it('UNVERIFIED with the reason: the registry failing, no registry configured, no claim to check', async () => {
    registry.setFaults({ answer: 'HTTP_500' });
    const down = await checkDelivery(
      domainsCheck('taken.test', { domain: 'taken.test', available: false }),
      rdap,
      now,
    );
    expect(down.outcome).toBe('UNVERIFIED');
    expect(down.serviceVerified).toMatchObject({
      verified: false,
      detail: expect.stringMatching(/^not verified: the RDAP lookup failed \(SERVER_ERROR\)/),
    });
    const none = await checkDelivery(
      domainsCheck('taken.test', { domain: 'taken.test', available: false }),
      null,
      now,
    );
    expect(none).toEqual({
      outcome: 'UNVERIFIED',
      serviceVerified: {
        verified: false,
        method: 'RDAP',
        source: NO_RDAP_SOURCE,
        checkedAt: NOW.toISOString(),
        detail: 'not verified: no RDAP registry is configured on this instance',
      },
    });
    for (const said of [null, { domain: 'taken.test', available: 'no' }]) {
      const check = await checkDelivery(domainsCheck('taken.test', said), rdap, now);
      expect(check.outcome).toBe('UNVERIFIED');
      expect(check.serviceVerified.detail).toBe(
        'not verified: the merchant gave no {domain, available} to check',
      );
    }
  });

  it('ATTESTED_ONLY for any other capability: verified false, labelled PROVIDER_ATTESTATION, no registry asked', async () => {
    const before = registry.stats.domainRequests;
    const check = await checkDelivery(
      {
        capability: 'travel.book',
        params: {},
        providerAttested: { fields: { booked: true } },
        attestedBy: 'spendctl-travel',
      },
      rdap,
      now,
    );
    expect(check).toEqual({
      outcome: 'ATTESTED_ONLY',
      serviceVerified: {
        verified: false,
        method: 'PROVIDER_ATTESTATION',
        source: 'spendctl-travel',
        checkedAt: NOW.toISOString(),
        detail: expect.stringMatching(/^not independently verified: travel\.book/),
      },
    });
    expect(registry.stats.domainRequests).toBe(before);
  });
});

describe('afterUnverified', () => {
  const policy = { maxAttempts: 3, backoffMs: [1_000, 5_000] };

  it('waits the n-th backoff (the last one reused), then gives up at the bound', () => {
    expect(afterUnverified(0, policy, NOW)).toEqual({
      giveUp: false,
      attempts: 1,
      retryAt: new Date(NOW.getTime() + 1_000),
    });
    expect(afterUnverified(1, policy, NOW)).toEqual({
      giveUp: false,
      attempts: 2,
      retryAt: new Date(NOW.getTime() + 5_000),
    });
    expect(afterUnverified(2, policy, NOW)).toEqual({ giveUp: true, attempts: 3 });
    expect(afterUnverified(5, { maxAttempts: 10, backoffMs: [1_000, 5_000] }, NOW)).toMatchObject({
      retryAt: new Date(NOW.getTime() + 5_000),
    });
  });

  it('refuses a policy without a bound or with a negative wait; the default is 5 attempts', () => {
    expect(() => assertDeliveryRetryPolicy(DEFAULT_DELIVERY_RETRY)).not.toThrow();
    expect(DEFAULT_DELIVERY_RETRY.maxAttempts).toBe(5);
    for (const bad of [
      { maxAttempts: 0, backoffMs: [1] },
      { maxAttempts: 101, backoffMs: [1] },
      { maxAttempts: 2.5, backoffMs: [1] },
      { maxAttempts: 3, backoffMs: [] },
      { maxAttempts: 3, backoffMs: [-1] },
    ])
      expect(() => assertDeliveryRetryPolicy(bad)).toThrow(RangeError);
  });
});
