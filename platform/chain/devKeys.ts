// The published development keys that must never hold or move real value: the accounts of the
// mnemonic that anvil, hardhat and ganache print on start, plus any extra keys an operator lists.
// Config validation and the key store refuse them in every environment. The addresses are listed
// rather than derived at run time (30 BIP-32 derivations cost seconds); a test re-derives them.
import { privateKeyToAccount } from 'viem/accounts';

export const PUBLISHED_DEV_MNEMONIC = 'test test test test test test test test test test test junk';

/** Accounts m/44'/60'/0'/0/0..29 of the mnemonic: anvil prints 10, hardhat 20; 30 covers `--accounts 30`. */
export const PUBLISHED_DEV_ADDRESSES: readonly string[] = Object.freeze([
  '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
  '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
  '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc',
  '0x90f79bf6eb2c4f870365e785982e1f101e93b906',
  '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65',
  '0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc',
  '0x976ea74026e726554db657fa54763abd0c3a0aa9',
  '0x14dc79964da2c08b23698b3d3cc7ca32193d9955',
  '0x23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f',
  '0xa0ee7a142d267c1f36714e4a8f75612f20a79720',
  '0xbcd4042de499d14e55001ccbb24a551f3b954096',
  '0x71be63f3384f5fb98995898a86b02fb2426c5788',
  '0xfabb0ac9d68b0b445fb7357272ff202c5651694a',
  '0x1cbd3b2770909d4e10f157cabc84c7264073c9ec',
  '0xdf3e18d64bc6a983f673ab319ccae4f1a57c7097',
  '0xcd3b766ccdd6ae721141f452c550ca635964ce71',
  '0x2546bcd3c84621e976d8185a91a922ae77ecec30',
  '0xbda5747bfd65f08deb54cb465eb87d40e51b197e',
  '0xdd2fd4581271e230360230f9337d5c0430bf44c0',
  '0x8626f6940e2eb28930efb4cef49b2d1f2c9c1199',
  '0x09db0a93b389bef724429898f539aeb7ac2dd55f',
  '0x02484cb50aac86eae85610d6f4bf026f30f6627d',
  '0x08135da0a343e492fa2d4282f2ae34c6c5cc1bbe',
  '0x5e661b79fe2d3f6ce70f5aac07d8cd9abb2743f1',
  '0x61097ba76cd906d2ba4fd106e757f7eb455fc295',
  '0xdf37f81daad2b0327a0a50003740e1c935c70913',
  '0x553bc17a05702530097c3677091c5bb47a3a7931',
  '0x87bdce72c06c21cd96219bd8521bdf1f42c78b5e',
  '0x40fc963a729c542424cd800349a7e4ecc4896624',
  '0x9dcce783b6464611f38631e6c851bf441907c710',
]);

const publishedAddresses = new Set(PUBLISHED_DEV_ADDRESSES);

function normaliseHex(value: string): string {
  const hex = value.trim().toLowerCase();
  return hex.startsWith('0x') ? hex : `0x${hex}`;
}

function addressOf(privateKey: string): string | null {
  try {
    return privateKeyToAccount(privateKey as `0x${string}`).address.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * True when the key belongs to a published development account or appears in `extraDenied`
 * (private keys or addresses, any case, with or without 0x).
 */
export function isPublishedDevKey(
  privateKey: string,
  extraDenied: readonly string[] = [],
): boolean {
  const key = normaliseHex(privateKey);
  const address = addressOf(key);
  if (address !== null && publishedAddresses.has(address)) return true;
  if (extraDenied.length === 0) return false;
  const denied = new Set(extraDenied.map(normaliseHex));
  return denied.has(key) || (address !== null && denied.has(address));
}

/** True when the address belongs to a published development account. */
export function isPublishedDevAddress(address: string): boolean {
  return publishedAddresses.has(normaliseHex(address));
}
