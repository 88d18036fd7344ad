// `npm start`'s RDAP wiring: on the embedded devnet the local registry answers lookups; a configured
// bootstrap is used as given and starts nothing; a devnet role without the registry says so.
import { loadConfig } from '../platform/config';
import { createRdapClient } from '../platform/rdap';
import { prepareRdap } from './rdap';

describe('prepareRdap', () => {
  it('starts the devnet registry when nothing is configured, and lookups reach it', async () => {
    const lines: string[] = [];
    const setup = await prepareRdap({
      config: loadConfig({}).rdap,
      standIn: true,
      out: (line) => lines.push(line),
    });
    try {
      expect(lines).toEqual([
        expect.stringMatching(
          /^rdap +devnet registry http:\/\/127\.0\.0\.1:\d+\/dns\.json \(registered: taken\.test, /,
        ),
      ]);
      expect(setup.client).toMatchObject({
        lookupTimeoutMs: 5_000,
        maxConcurrentLookups: 8,
        transportRetries: 2,
      });
      if (setup.client === null) throw new Error('the devnet registry gave no client settings');
      const rdap = createRdapClient(setup.client);
      expect((await rdap.lookupDomain('taken.test')).status).toBe('REGISTERED');
      expect((await rdap.lookupDomain('not-taken.example')).status).toBe('NOT_REGISTERED');
    } finally {
      await setup.stop();
    }
  });

  it('uses a configured bootstrap as given and starts no registry', async () => {
    const lines: string[] = [];
    const config = loadConfig({
      RDAP_BOOTSTRAP_URL: 'https://rdap.example/dns.json',
      RDAP_TRANSPORT_RETRIES: '1',
    }).rdap;
    const setup = await prepareRdap({ config, standIn: true, out: (line) => lines.push(line) });
    expect(setup.client).toEqual({
      bootstrapSource: 'https://rdap.example/dns.json',
      addressPolicy: 'development',
      lookupTimeoutMs: 5_000,
      maxConcurrentLookups: 8,
      transportRetries: 1,
    });
    expect(lines).toEqual(['rdap            bootstrap https://rdap.example/dns.json']);
  });

  it('has no bootstrap on a devnet role that does not run the registry', async () => {
    const lines: string[] = [];
    const setup = await prepareRdap({
      config: loadConfig({}).rdap,
      standIn: false,
      out: (line) => lines.push(line),
    });
    expect(setup.client).toBeNull();
    expect(lines).toEqual([expect.stringMatching(/^rdap +none: set RDAP_BOOTSTRAP_URL/)]);
  });
});
