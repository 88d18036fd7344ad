// Whether `address` signed `message` (EIP-191 personal_sign): an EOA by local ECDSA recovery; a
// contract wallet (ERC-1271, or ERC-6492 for one not yet deployed) by asking the funding chain,
// when one is configured. Without a chain only EOAs can sign in.
import { type Address, type Hex, isAddressEqual, recoverMessageAddress } from 'viem';
import { createChainPublicClient } from '../../../platform/chain/clients';
import type { SubgraphChains } from '../../kit';

/** Long enough for an ERC-6492 wrapped signature (factory call data included), bounded all the same. */
export const MAX_SIGNATURE_HEX_CHARS = 16_384;
const SIGNATURE = /^0x(?:[0-9a-fA-F]{2})+$/;

export function isSignatureShape(signature: string): signature is Hex {
  return signature.length <= MAX_SIGNATURE_HEX_CHARS && SIGNATURE.test(signature);
}

async function signedByKey(address: Address, message: string, signature: Hex): Promise<boolean> {
  try {
    return isAddressEqual(await recoverMessageAddress({ message, signature }), address);
  } catch {
    return false;
  }
}

async function signedByContract(
  chains: SubgraphChains,
  address: Address,
  message: string,
  signature: Hex,
): Promise<boolean> {
  const client = createChainPublicClient(chains.funding);
  return client.verifyMessage({ address, message, signature });
}

/**
 * True when the signature is valid for `address`. Throws only when the chain needed for a
 * contract-wallet check does not answer (the caller reports the service unavailable).
 */
export async function isMessageSignedBy(
  chains: SubgraphChains | undefined,
  address: Address,
  message: string,
  signature: Hex,
): Promise<boolean> {
  if (await signedByKey(address, message, signature)) return true;
  if (chains === undefined) return false;
  return signedByContract(chains, address, message, signature);
}
