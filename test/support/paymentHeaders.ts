// What a payment header carries, read the way anyone who saw it on the wire could: the signed
// EIP-3009 authorization inside an x402 `exact` payload, ready to submit on chain.
import { decodePaymentSignatureHeader } from '@x402/core/http';
import type { Address, Hex } from 'viem';
import type { ChainPublicClient } from '../../platform/chain/clients';
import { type SignedTransferAuthorization, readTokenDomain } from '../../platform/chain/tokens';

/** The authorization inside a payment header, as anyone who saw it could submit it. */
export async function signedAuthorizationOf(
  header: string,
  chain: ChainPublicClient,
  token: Address,
): Promise<SignedTransferAuthorization> {
  const payload = decodePaymentSignatureHeader(header).payload as {
    authorization: Record<string, string>;
    signature: Hex;
  };
  const { from, to, value, validAfter, validBefore, nonce } = payload.authorization;
  return {
    token,
    domain: await readTokenDomain(chain, token),
    message: {
      from: from as Address,
      to: to as Address,
      value: BigInt(value),
      validAfter: BigInt(validAfter),
      validBefore: BigInt(validBefore),
      nonce: nonce as Hex,
    },
    signature: payload.signature,
  };
}
