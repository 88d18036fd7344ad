// A merchant's key file: created 0600 on first use and read back as the same identity; a published
// development key, a file others can read, or an address that does not match its key is refused.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  KeyFileError,
  KeyFilePermissionsError,
  PublishedDevKeyError,
} from '../../platform/chain/errors';
import { loadOrCreateMerchantKeys } from './keys';

// Account 0 of the published test mnemonic, which anvil prints on start.
const ANVIL_DEV_KEY_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

describe('merchant keys', () => {
  let dir: string;
  let file: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'merchant-keys-'));
    file = path.join(dir, 'merchants', 'domains-keys.json');
  });

  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('creates the file 0600 once and reads back the same relayer and payTo', () => {
    const created = loadOrCreateMerchantKeys(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const again = loadOrCreateMerchantKeys(file);
    expect(again.relayer.address).toBe(created.relayer.address);
    expect(again.payTo).toBe(created.payTo);
    expect(created.payTo).not.toBe(created.relayer.address);
    // What the merchant holds in memory never prints a secret.
    const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<
      string,
      { privateKey: string }
    >;
    const printed = JSON.stringify(created).toLowerCase();
    for (const entry of Object.values(stored))
      expect(printed).not.toContain(entry.privateKey.slice(2));
  });

  it('gives fresh keys without a file, different every time', () => {
    const first = loadOrCreateMerchantKeys(null);
    const second = loadOrCreateMerchantKeys(null);
    expect(first.relayer.address).not.toBe(second.relayer.address);
    expect(first.payTo).not.toBe(second.payTo);
  });

  it('refuses a published development key, a readable file and an edited address', () => {
    loadOrCreateMerchantKeys(file);
    const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<
      string,
      { address: string; privateKey: string }
    >;
    const rewrite = (body: unknown) =>
      fs.writeFileSync(file, JSON.stringify(body), { mode: 0o600 });

    rewrite({
      ...stored,
      relayer: {
        address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
        privateKey: ANVIL_DEV_KEY_0,
      },
    });
    expect(() => loadOrCreateMerchantKeys(file)).toThrow(PublishedDevKeyError);

    rewrite({ ...stored, payTo: { ...stored.payTo, address: stored.relayer.address } });
    expect(() => loadOrCreateMerchantKeys(file)).toThrow(KeyFileError);

    rewrite(stored);
    fs.chmodSync(file, 0o644);
    expect(() => loadOrCreateMerchantKeys(file)).toThrow(KeyFilePermissionsError);
  });
});
