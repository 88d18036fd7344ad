import {
  effectiveMaturity,
  isExecutable,
  isMaturityLevel,
  MATURITY_ORDER,
  type MaturityLevel,
  providersExecutableToday,
  refusalCode,
} from './maturity';

const LEVELS: MaturityLevel[] = ['experimental', 'sandbox', 'verified'];

describe('maturity order', () => {
  test('is experimental < sandbox < verified', () => {
    expect(MATURITY_ORDER).toEqual(['experimental', 'sandbox', 'verified']);
  });

  test('recognises exactly the three stored words', () => {
    for (const level of LEVELS) expect(isMaturityLevel(level)).toBe(true);
    for (const other of ['VERIFIED', 'production', '', null, 2])
      expect(isMaturityLevel(other)).toBe(false);
  });
});

describe('effective maturity', () => {
  test.each([
    ['verified', 'verified', 'verified'],
    ['verified', 'sandbox', 'sandbox'],
    ['verified', 'experimental', 'experimental'],
    ['sandbox', 'verified', 'sandbox'],
    ['sandbox', 'sandbox', 'sandbox'],
    ['sandbox', 'experimental', 'experimental'],
    ['experimental', 'verified', 'experimental'],
    ['experimental', 'sandbox', 'experimental'],
    ['experimental', 'experimental', 'experimental'],
  ] as const)('provider %s with capability %s is %s', (provider, capability, expected) => {
    expect(effectiveMaturity(provider, capability)).toBe(expected);
  });

  test('never exceeds the capability’s own maturity, whatever the provider', () => {
    for (const capability of LEVELS) {
      for (const provider of LEVELS) {
        expect(MATURITY_ORDER.indexOf(effectiveMaturity(provider, capability))).toBeLessThanOrEqual(
          MATURITY_ORDER.indexOf(capability),
        );
      }
    }
  });
});

describe('refusal code', () => {
  test('a gated capability refuses with its gate even when everything is verified', () => {
    const standing = {
      providerMaturity: 'verified',
      maturity: 'verified',
      gateCode: 'SHOPPING_GATED',
    } as const;
    expect(refusalCode(standing)).toBe('SHOPPING_GATED');
    expect(isExecutable(standing)).toBe(false);
  });

  test('an ungated capability below verified refuses with CAPABILITY_NOT_VERIFIED', () => {
    expect(refusalCode({ providerMaturity: 'verified', maturity: 'sandbox', gateCode: null })).toBe(
      'CAPABILITY_NOT_VERIFIED',
    );
    expect(refusalCode({ providerMaturity: 'sandbox', maturity: 'verified', gateCode: null })).toBe(
      'CAPABILITY_NOT_VERIFIED',
    );
  });

  test('a verified, ungated capability of a verified provider has no refusal and executes', () => {
    const standing = {
      providerMaturity: 'verified',
      maturity: 'verified',
      gateCode: null,
    } as const;
    expect(refusalCode(standing)).toBeNull();
    expect(isExecutable(standing)).toBe(true);
  });
});

describe('providers executable today', () => {
  const providers = [
    { id: 'spendctl-domains', maturity: 'verified' },
    { id: 'spendctl-travel', maturity: 'verified' },
    { id: 'spendctl-gifts', maturity: 'sandbox' },
  ] as const;

  test('lists a provider only when one of its capabilities is verified and ungated', () => {
    const capabilities = [
      { providerId: 'spendctl-domains', maturity: 'verified', gateCode: null },
      { providerId: 'spendctl-domains', maturity: 'sandbox', gateCode: null },
      { providerId: 'spendctl-travel', maturity: 'verified', gateCode: 'TRAVEL_BOOKING_GATED' },
      { providerId: 'spendctl-gifts', maturity: 'verified', gateCode: null },
    ] as const;
    expect(providersExecutableToday(providers, capabilities)).toEqual(['spendctl-domains']);
  });

  test('is empty when no capability is verified', () => {
    expect(
      providersExecutableToday(providers, [
        { providerId: 'spendctl-domains', maturity: 'sandbox', gateCode: null },
      ]),
    ).toEqual([]);
  });

  test('refuses a capability whose provider is unknown', () => {
    expect(() =>
      providersExecutableToday(providers, [
        { providerId: 'nobody', maturity: 'verified', gateCode: null },
      ]),
    ).toThrow(/unknown provider nobody/);
  });
});
