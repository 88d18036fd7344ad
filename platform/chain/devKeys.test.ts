import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { bytesToHex } from 'viem';
import {
  PUBLISHED_DEV_ADDRESSES,
  PUBLISHED_DEV_MNEMONIC,
  isPublishedDevAddress,
  isPublishedDevKey,
} from './devKeys';

describe('published development keys', () => {
  const derived = PUBLISHED_DEV_ADDRESSES.map((_address, index) =>
    mnemonicToAccount(PUBLISHED_DEV_MNEMONIC, { addressIndex: index }),
  );

  it('lists exactly the first 30 accounts of the published mnemonic', () => {
    expect(derived.map((account) => account.address.toLowerCase())).toEqual([
      ...PUBLISHED_DEV_ADDRESSES,
    ]);
  });

  it('refuses every one of their private keys, in any spelling', () => {
    for (const account of derived) {
      const key = bytesToHex(account.getHdKey().privateKey!);
      expect(isPublishedDevKey(key)).toBe(true);
      expect(isPublishedDevKey(key.slice(2).toUpperCase())).toBe(true);
      expect(isPublishedDevAddress(account.address)).toBe(true);
    }
  });

  it('accepts a fresh key unless an operator denies it by key or by address', () => {
    const fresh = generatePrivateKey();
    expect(isPublishedDevKey(fresh)).toBe(false);
    expect(isPublishedDevKey(fresh, [fresh.toUpperCase()])).toBe(true);
    expect(isPublishedDevKey(fresh, [privateKeyToAccount(fresh).address])).toBe(true);
    expect(isPublishedDevKey('not a key')).toBe(false);
  });
});
