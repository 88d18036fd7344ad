// The key store: fresh keys, a 0600 key file that round-trips, refusal of published development keys
// (naming the role), refusal of loose permissions and edited files, and secrets that never print.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { mnemonicToAccount } from 'viem/accounts';
import { bytesToHex } from 'viem';
import { PUBLISHED_DEV_MNEMONIC } from './devKeys';
import {
  InvalidPrivateKeyError,
  KeyFileError,
  KeyFilePermissionsError,
  PublishedDevKeyError,
} from './errors';
import {
  KEY_ROLES,
  RoleKey,
  addMissingKeyRoles,
  devnetRelayer,
  generateKeyStore,
  loadKeyFile,
  saveKeyFile,
} from './keys';

const publishedKey = (index: number): string =>
  bytesToHex(
    mnemonicToAccount(PUBLISHED_DEV_MNEMONIC, { addressIndex: index }).getHdKey().privateKey!,
  );

describe('key store', () => {
  let tempDir: string;

  beforeEach(() => {
    tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keys-test-'));
  });

  afterEach(() => {
    fs.rmSync(tempDir, { recursive: true, force: true });
  });

  it('generates distinct fresh keys for every role, none of them published', () => {
    const store = generateKeyStore();
    const addresses = KEY_ROLES.map((role) => store[role].address);
    expect(new Set(addresses).size).toBe(KEY_ROLES.length);
    for (const role of KEY_ROLES) {
      expect(store[role].role).toBe(role);
      expect(store[role].account.address).toBe(store[role].address);
      expect(store[role].exportPrivateKey()).toMatch(/^0x[0-9a-f]{64}$/);
    }
  });

  it('saves a key file readable by its owner only and loads the same keys back', () => {
    const filePath = path.join(tempDir, 'keys.json');
    const store = generateKeyStore();
    saveKeyFile(filePath, store);

    expect(fs.statSync(filePath).mode & 0o777).toBe(0o600);
    const body = JSON.parse(fs.readFileSync(filePath, 'utf8'));
    expect(Object.keys(body)).toEqual([
      'deployer',
      'treasury',
      'relayer',
      'feeReceiver',
      'anchorWriter',
      'fleetRelayer1',
      'fleetRelayer2',
      'fleetRelayer3',
      'fleetRelayer4',
    ]);
    expect(body.treasury).toEqual({
      address: store.treasury.address,
      privateKey: store.treasury.exportPrivateKey(),
    });

    const loaded = loadKeyFile(filePath);
    for (const role of KEY_ROLES) {
      expect(loaded[role].address).toBe(store[role].address);
      expect(loaded[role].exportPrivateKey()).toBe(store[role].exportPrivateKey());
    }
    expect(fs.readdirSync(tempDir)).toEqual(['keys.json']); // no temporary file left behind
  });

  it('refuses to replace an existing key file unless told to', () => {
    const filePath = path.join(tempDir, 'keys.json');
    saveKeyFile(filePath, generateKeyStore());
    expect(() => saveKeyFile(filePath, generateKeyStore())).toThrow(KeyFileError);
    const replacement = generateKeyStore();
    saveKeyFile(filePath, replacement, { overwrite: true });
    expect(loadKeyFile(filePath).relayer.address).toBe(replacement.relayer.address);
  });

  it('refuses a published development key and names the role', () => {
    expect(() => RoleKey.fromPrivateKey('treasury', publishedKey(0))).toThrow(PublishedDevKeyError);
    expect(() => RoleKey.fromPrivateKey('treasury', publishedKey(0))).toThrow(
      /the treasury key is a published/,
    );

    const filePath = path.join(tempDir, 'keys.json');
    saveKeyFile(filePath, generateKeyStore());
    const body = JSON.parse(fs.readFileSync(filePath, 'utf8'));
    const devAccount = mnemonicToAccount(PUBLISHED_DEV_MNEMONIC, { addressIndex: 3 });
    body.relayer = { address: devAccount.address, privateKey: publishedKey(3) };
    fs.writeFileSync(filePath, JSON.stringify(body), { mode: 0o600 });

    const failure = (() => {
      try {
        loadKeyFile(filePath);
        return null;
      } catch (error) {
        return error;
      }
    })();
    expect(failure).toBeInstanceOf(PublishedDevKeyError);
    expect((failure as PublishedDevKeyError).role).toBe('relayer');
  });

  it('refuses keys on the operator deny list', () => {
    const leaked = generateKeyStore().deployer;
    expect(() =>
      RoleKey.fromPrivateKey('deployer', leaked.exportPrivateKey(), {
        extraDenied: [leaked.address],
      }),
    ).toThrow(PublishedDevKeyError);
  });

  it('refuses a key file that others can read', () => {
    const filePath = path.join(tempDir, 'keys.json');
    saveKeyFile(filePath, generateKeyStore());
    fs.chmodSync(filePath, 0o644);
    expect(() => loadKeyFile(filePath)).toThrow(KeyFilePermissionsError);
    expect(() => loadKeyFile(filePath)).toThrow(/0644/);
  });

  it('refuses a key file whose address does not match its key, or that lacks a role', () => {
    const filePath = path.join(tempDir, 'keys.json');
    const store = generateKeyStore();
    saveKeyFile(filePath, store);
    const body = JSON.parse(fs.readFileSync(filePath, 'utf8'));

    fs.writeFileSync(
      filePath,
      JSON.stringify({ ...body, treasury: { ...body.treasury, address: store.relayer.address } }),
    );
    expect(() => loadKeyFile(filePath)).toThrow(/treasury\.address does not match/);

    const { feeReceiver: _dropped, ...withoutFeeReceiver } = body;
    fs.writeFileSync(filePath, JSON.stringify(withoutFeeReceiver));
    expect(() => loadKeyFile(filePath)).toThrow(/missing feeReceiver/);
  });

  it('gives a key file written before anchorWriter existed a fresh anchorWriter, keeping the other keys', () => {
    const filePath = path.join(tempDir, 'keys.json');
    const store = generateKeyStore();
    saveKeyFile(filePath, store);
    const { anchorWriter: _later, ...older } = JSON.parse(fs.readFileSync(filePath, 'utf8'));
    fs.writeFileSync(filePath, JSON.stringify(older), { mode: 0o600 });
    expect(() => loadKeyFile(filePath)).toThrow(/missing anchorWriter/);

    expect(addMissingKeyRoles(filePath)).toEqual(['anchorWriter']);
    expect(fs.statSync(filePath).mode & 0o777).toBe(0o600);
    const loaded = loadKeyFile(filePath);
    expect(loaded.treasury.address).toBe(store.treasury.address);
    expect(loaded.anchorWriter.address).not.toBe(store.anchorWriter.address);
    expect(addMissingKeyRoles(filePath)).toEqual([]);
  });

  it('rejects malformed private keys with the role in the message', () => {
    expect(() => RoleKey.fromPrivateKey('relayer', '0x1234')).toThrow(InvalidPrivateKeyError);
    expect(() => RoleKey.fromPrivateKey('relayer', `0x${'0'.repeat(64)}`)).toThrow(
      /relayer private key is invalid/,
    );
  });

  it('never shows a private key through JSON, inspection or string conversion', () => {
    const store = generateKeyStore();
    const secrets = KEY_ROLES.map((role) => store[role].exportPrivateKey().slice(2));
    const renderings = [
      JSON.stringify(store),
      inspect(store, { depth: 10 }),
      String(store.treasury),
      `${store.relayer}`,
    ];
    for (const rendering of renderings) {
      for (const secret of secrets) expect(rendering).not.toContain(secret);
    }
    expect(JSON.parse(JSON.stringify(store.treasury))).toEqual({
      role: 'treasury',
      address: store.treasury.address,
      privateKey: '[redacted]',
    });
  });

  it("signs typed data as the role's viem account does, and its signer shows no key", async () => {
    const key = RoleKey.generate('feeReceiver');
    const signer = key.typedDataSigner();
    const typedData = {
      domain: { name: 'x402 receipt', version: '1', chainId: 8453 },
      types: {
        Receipt: [
          { name: 'payer', type: 'address' },
          { name: 'at', type: 'uint256' },
        ],
      },
      primaryType: 'Receipt',
      message: { payer: key.address, at: 1_764_000_000n },
    } as const;
    expect(signer.address).toBe(key.address);
    expect(await signer.signTypedData(typedData)).toBe(await key.account.signTypedData(typedData));
    const secret = key.exportPrivateKey().slice(2);
    expect(JSON.stringify(signer)).not.toContain(secret);
    expect(inspect(signer, { depth: 10 })).not.toContain(secret);
  });

  it('gives a key file written before the fleet relayers its four, and maps DEVNET_RELAYER_SLOT to them', () => {
    const filePath = path.join(tempDir, 'keys.json');
    const store = generateKeyStore();
    saveKeyFile(filePath, store);
    const fleet = ['fleetRelayer1', 'fleetRelayer2', 'fleetRelayer3', 'fleetRelayer4'];
    const older = JSON.parse(fs.readFileSync(filePath, 'utf8'));
    for (const role of fleet) delete older[role];
    fs.writeFileSync(filePath, JSON.stringify(older), { mode: 0o600 });
    expect(addMissingKeyRoles(filePath)).toEqual(fleet);
    const loaded = loadKeyFile(filePath);
    expect(loaded.relayer.address).toBe(store.relayer.address);

    expect(devnetRelayer(loaded, 0)).toBe(loaded.relayer);
    const slots = [1, 2, 3, 4].map((slot) => devnetRelayer(loaded, slot));
    expect(slots.map((key) => key.role)).toEqual(fleet);
    expect(new Set([loaded.relayer, ...slots].map((key) => key.address)).size).toBe(5);
    for (const slot of [-1, 5, 1.5]) expect(() => devnetRelayer(loaded, slot)).toThrow(RangeError);
  });
});
