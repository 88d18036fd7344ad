// The RDAP variables: the devnet leaves the bootstrap to `npm start` (its local registry), every
// other mode defaults to IANA's file; sources must be https (loopback http), file: or absolute paths.
import { ConfigError, loadConfig } from '.';

const REAL_CHAINS = {
  FUNDING_RPC_URL: 'https://rpc.funding.example',
  SETTLEMENT_RPC_URL: 'https://rpc.settle.example',
} as const;
const TOKENS = {
  FUNDING_TOKEN_ADDRESS: '0x779ded0c9e1022225f8e0630b35a9b54be713736',
  SETTLEMENT_TOKEN_ADDRESS: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
} as const;

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
}

describe('RDAP configuration', () => {
  it('on the devnet leaves the bootstrap to the devnet registry, with the named default limits', () => {
    expect(loadConfig({}).rdap).toEqual({
      bootstrapSource: null,
      addressPolicy: 'development',
      lookupTimeoutMs: 5_000,
      maxConcurrentLookups: 8,
      transportRetries: 2,
    });
  });

  it('off the devnet defaults to the IANA bootstrap file', () => {
    expect(loadConfig({ ...REAL_CHAINS, ...TOKENS }).rdap.bootstrapSource).toBe(
      'https://data.iana.org/rdap/dns.json',
    );
  });

  it.each([
    ['https://rdap.example/dns.json'],
    ['http://127.0.0.1:8080/dns.json'],
    ['file:///etc/rdap/dns.json'],
    ['/etc/rdap/dns.json'],
  ])('takes RDAP_BOOTSTRAP_URL=%s', (value) => {
    expect(loadConfig({ RDAP_BOOTSTRAP_URL: value }).rdap.bootstrapSource).toBe(value);
  });

  it.each([
    ['http://data.iana.org/rdap/dns.json'],
    ['dns.json'],
    ['ftp://x.example/dns.json'],
    ['https://user:pw@rdap.example/dns.json'],
  ])('refuses RDAP_BOOTSTRAP_URL=%s', (value) => {
    expect(problems({ RDAP_BOOTSTRAP_URL: value })).toEqual([
      expect.stringMatching(/^RDAP_BOOTSTRAP_URL: must be an https URL/),
    ]);
  });

  it('reads the limits within their bounds', () => {
    const config = loadConfig({
      RDAP_LOOKUP_TIMEOUT_MS: '2500',
      RDAP_MAX_CONCURRENT_LOOKUPS: '16',
      RDAP_TRANSPORT_RETRIES: '0',
    });
    expect(config.rdap).toMatchObject({
      lookupTimeoutMs: 2_500,
      maxConcurrentLookups: 16,
      transportRetries: 0,
    });
    expect(
      problems({
        RDAP_LOOKUP_TIMEOUT_MS: '10',
        RDAP_MAX_CONCURRENT_LOOKUPS: '65',
        RDAP_TRANSPORT_RETRIES: '6',
      }).map((problem) => problem.split(':')[0]),
    ).toEqual(['RDAP_LOOKUP_TIMEOUT_MS', 'RDAP_MAX_CONCURRENT_LOOKUPS', 'RDAP_TRANSPORT_RETRIES']);
  });
});
