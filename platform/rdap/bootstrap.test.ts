// The RFC 9224 bootstrap: parsed and checked, the longest matching suffix wins, https is preferred,
// and a fetched copy is kept exactly as long as its caching headers say (within the bounds), then
// fetched again; a failed reload leaves the last good copy in use for a bounded while.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type DevnetRdapRegistry, startDevnetRdapRegistry } from '../../devnet/rdap/registry';
import {
  bootstrapTtlMs,
  BootstrapFormatError,
  findRdapBaseUrl,
  parseDnsBootstrap,
} from './bootstrap';
import { BootstrapCache, BootstrapUnavailableError } from './bootstrapCache';
import {
  BOOTSTRAP_RETRY_AFTER_FAILURE_MS,
  DEFAULT_BOOTSTRAP_TTL_MS,
  MAX_BOOTSTRAP_TTL_MS,
  MIN_BOOTSTRAP_TTL_MS,
} from './limits';

const IANA_LIKE = {
  version: '1.0',
  publication: '2026-03-01T00:00:00Z',
  description: 'RDAP bootstrap file for Domain Name System registrations',
  services: [
    [
      ['com', 'net'],
      ['http://rdap.verisign.example/com/v1/', 'https://rdap.verisign.com/com/v1/'],
    ],
    [['uk'], ['https://rdap.nominet.uk/uk/']],
    [['co.uk'], ['https://rdap.nominet.uk/co.uk']],
    [['XN--P1AI', 'рф'], ['https://rdap.tcinet.ru/']],
    [['plain'], ['http://rdap.plain.example/']],
    [['local'], ['http://127.0.0.1:9/', 'https://rdap.local.example/']],
  ],
};

describe('parseDnsBootstrap and findRdapBaseUrl', () => {
  const bootstrap = parseDnsBootstrap(IANA_LIKE);

  it('picks the registry by the longest matching suffix', () => {
    expect(findRdapBaseUrl(bootstrap, 'example.com')).toBe('https://rdap.verisign.com/com/v1/');
    expect(findRdapBaseUrl(bootstrap, 'shop.example.co.uk')).toBe('https://rdap.nominet.uk/co.uk/');
    expect(findRdapBaseUrl(bootstrap, 'example.org.uk')).toBe('https://rdap.nominet.uk/uk/');
    expect(findRdapBaseUrl(bootstrap, 'example.org')).toBeNull();
  });

  it('prefers https, keeps loopback http, drops other plain http, and adds the missing "/"', () => {
    expect(findRdapBaseUrl(bootstrap, 'a.local')).toBe('https://rdap.local.example/');
    expect(findRdapBaseUrl(bootstrap, 'a.plain')).toBeNull();
    expect(
      findRdapBaseUrl(
        parseDnsBootstrap({ version: '1.0', services: [[['test'], ['http://127.0.0.1:4/']]] }),
        'a.test',
      ),
    ).toBe('http://127.0.0.1:4/');
  });

  it('matches labels as A-labels, whatever case or script the file uses', () => {
    expect(findRdapBaseUrl(bootstrap, 'xn--e1afmkfd.xn--p1ai')).toBe('https://rdap.tcinet.ru/');
  });

  it.each([
    [[], 'not a JSON object'],
    [{ version: '2.0', services: [] }, 'version'],
    [{ version: '1.0' }, 'services is not an array'],
    [{ version: '1.0', services: [['com', ['https://x/']]] }, 'services[0]'],
  ])('refuses a malformed file (%j)', (json, message) => {
    expect(() => parseDnsBootstrap(json)).toThrow(BootstrapFormatError);
    expect(() => parseDnsBootstrap(json)).toThrow(message);
  });
});

describe('bootstrapTtlMs', () => {
  const now = new Date('2026-03-14T09:00:00Z');
  const ttl = (headers: Record<string, string>) => bootstrapTtlMs(new Headers(headers), now);

  it('reads max-age less Age, then Expires against Date, else the default', () => {
    expect(ttl({ 'cache-control': 'public, max-age=7200' })).toBe(7_200_000);
    expect(ttl({ 'cache-control': 'max-age=7200', age: '600' })).toBe(6_600_000);
    expect(
      ttl({ expires: 'Sat, 14 Mar 2026 12:00:00 GMT', date: 'Sat, 14 Mar 2026 10:00:00 GMT' }),
    ).toBe(7_200_000);
    expect(ttl({ expires: 'Sat, 14 Mar 2026 12:00:00 GMT' })).toBe(3 * 3_600_000);
    expect(ttl({ 'cache-control': 'max-age=100', expires: 'Sat, 14 Mar 2026 12:00:00 GMT' })).toBe(
      MIN_BOOTSTRAP_TTL_MS + 40_000,
    );
    expect(ttl({})).toBe(DEFAULT_BOOTSTRAP_TTL_MS);
  });

  it('never goes below the minimum (no-cache, no-store, past or broken Expires) or above the maximum', () => {
    expect(ttl({ 'cache-control': 'no-cache' })).toBe(MIN_BOOTSTRAP_TTL_MS);
    expect(ttl({ 'cache-control': 'no-store, max-age=9999' })).toBe(MIN_BOOTSTRAP_TTL_MS);
    expect(ttl({ 'cache-control': 'max-age=0' })).toBe(MIN_BOOTSTRAP_TTL_MS);
    expect(ttl({ expires: '0' })).toBe(MIN_BOOTSTRAP_TTL_MS);
    expect(ttl({ 'cache-control': 'max-age=999999999' })).toBe(MAX_BOOTSTRAP_TTL_MS);
  });
});

describe('BootstrapCache', () => {
  let registry: DevnetRdapRegistry;
  let clock: Date;
  const now = () => clock;
  const advance = (ms: number) => {
    clock = new Date(clock.getTime() + ms);
  };

  beforeAll(async () => {
    registry = await startDevnetRdapRegistry({ bootstrapMaxAgeSeconds: 600 });
  });

  afterAll(async () => {
    await registry.stop();
  });

  beforeEach(() => {
    clock = new Date('2026-03-14T09:00:00Z');
    registry.resetStats();
  });

  it('fetches once for many concurrent readers, keeps the copy until max-age runs out, then fetches again', async () => {
    const cache = new BootstrapCache(registry.bootstrapUrl, now);
    const copies = await Promise.all([cache.current(), cache.current(), cache.current()]);
    expect(findRdapBaseUrl(copies[0], 'taken.test')).toBe(`${registry.url}/`);
    expect(registry.stats.bootstrapRequests).toBe(1);
    advance(599_999);
    await cache.current();
    expect(registry.stats.bootstrapRequests).toBe(1);
    advance(1);
    await cache.current();
    expect(registry.stats.bootstrapRequests).toBe(2);
  });

  it('keeps using the last good copy when a reload fails, retries after the pause, and gives up past the bound', async () => {
    const other = await startDevnetRdapRegistry({ bootstrapMaxAgeSeconds: 600 });
    const cache = new BootstrapCache(other.bootstrapUrl, now);
    await cache.current();
    await other.stop();
    advance(600_000);
    expect(findRdapBaseUrl(await cache.current(), 'taken.test')).toBe(`${other.url}/`);
    advance(BOOTSTRAP_RETRY_AFTER_FAILURE_MS - 1);
    await cache.current();
    advance(MAX_BOOTSTRAP_TTL_MS);
    await expect(cache.current()).rejects.toThrow(BootstrapUnavailableError);
    await expect(cache.current()).rejects.toThrow(/could not connect \(ECONNREFUSED\)/);
  });

  it('answers BootstrapUnavailableError when the first load fails, and loads once the pause is over', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rdap-bootstrap-'));
    try {
      const file = path.join(dir, 'dns.json');
      const cache = new BootstrapCache(file, now);
      // Answers (and so public receipts) name the file, never the server's path to it.
      expect(cache.source).toBe('file:dns.json');
      await expect(cache.current()).rejects.toThrow(
        'the RDAP bootstrap from file:dns.json is unavailable: could not read the file (ENOENT)',
      );
      writeFileSync(file, JSON.stringify(IANA_LIKE));
      await expect(cache.current()).rejects.toThrow(BootstrapUnavailableError);
      advance(BOOTSTRAP_RETRY_AFTER_FAILURE_MS);
      expect(findRdapBaseUrl(await cache.current(), 'a.com')).toBe(
        'https://rdap.verisign.com/com/v1/',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads a file (path or file: URL), re-reading it after the default TTL, and refuses malformed JSON', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rdap-bootstrap-'));
    try {
      const file = path.join(dir, 'dns.json');
      writeFileSync(file, JSON.stringify(IANA_LIKE));
      const cache = new BootstrapCache(pathToFileURL(file).href, now);
      expect(findRdapBaseUrl(await cache.current(), 'a.net')).toBe(
        'https://rdap.verisign.com/com/v1/',
      );
      writeFileSync(
        file,
        JSON.stringify({ version: '1.0', services: [[['net'], ['https://other.example/']]] }),
      );
      advance(DEFAULT_BOOTSTRAP_TTL_MS - 1);
      expect(findRdapBaseUrl(await cache.current(), 'a.net')).toBe(
        'https://rdap.verisign.com/com/v1/',
      );
      advance(1);
      expect(findRdapBaseUrl(await cache.current(), 'a.net')).toBe('https://other.example/');
      writeFileSync(file, '{"version": "1.0", ');
      await expect(new BootstrapCache(file, now).current()).rejects.toThrow('not valid JSON');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a plain-http source off loopback and a relative path', () => {
    expect(() => new BootstrapCache('http://data.iana.org/rdap/dns.json')).toThrow(/https/);
    expect(() => new BootstrapCache('dns.json')).toThrow(/absolute path/);
  });
});
