// The provider registry variables: PROVIDER_DOMAINS_URL read as a URL (unset: none, the devnet
// starts its own merchant), refused when it is not http(s), and printed without its password.
import { inspect } from 'node:util';
import { ConfigError, loadConfig } from '.';

describe('provider URLs', () => {
  it('has no domains merchant configured by default', () => {
    expect(loadConfig({}).providerUrls).toEqual({ domains: null });
  });

  it('reads PROVIDER_DOMAINS_URL without its trailing slash and never prints its password', () => {
    const config = loadConfig({
      PROVIDER_DOMAINS_URL: 'https://buyer:merchant-password-value@domains.example/v1/',
    });
    expect(config.providerUrls.domains).toBe(
      'https://buyer:merchant-password-value@domains.example/v1',
    );
    expect(JSON.stringify(config)).not.toContain('merchant-password-value');
    expect(inspect(config, { depth: 5 })).not.toContain('merchant-password-value');
    expect(JSON.stringify(config)).toContain('domains.example/v1');
  });

  it.each(['ftp://domains.example', 'not a url'])('refuses %j, naming the variable', (value) => {
    expect(() => loadConfig({ PROVIDER_DOMAINS_URL: value })).toThrow(ConfigError);
    try {
      loadConfig({ PROVIDER_DOMAINS_URL: value });
    } catch (error) {
      expect((error as ConfigError).problems).toEqual([
        expect.stringMatching(/^PROVIDER_DOMAINS_URL: /),
      ]);
    }
  });
});
