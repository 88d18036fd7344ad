// A paying agent, the outside peer of our x402 routes, for end-to-end tests and the x402 bench: the
// challenge of a paid route and a v2 PAYMENT-SIGNATURE header with a real EIP-3009 signature over
// exactly what the challenge asks. No jest here: bench/x402.ts runs it from dist/.
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { Address } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import {
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  randomAuthorizationNonce,
} from '../../platform/chain/tokens';

/** The PaymentRequired of a 402 answer; throws when the answer is not a challenge. */
export function challengeOf(response: Response): PaymentRequired {
  const header = response.headers.get('payment-required');
  if (response.status !== 402 || header === null)
    throw new Error(`expected a 402 challenge, got ${response.status}`);
  return decodePaymentRequiredHeader(header);
}

/** A header paying the challenge's first offer from `payer`, valid for five minutes unless told. */
export async function signedPaymentHeader(
  required: PaymentRequired,
  payer: PrivateKeyAccount,
  validBefore: bigint = BigInt(Math.floor(Date.now() / 1000) + 300),
): Promise<string> {
  const accepted = required.accepts[0] as PaymentRequirements;
  const nonce = randomAuthorizationNonce();
  const signature = await payer.signTypedData({
    domain: {
      name: String(accepted.extra.name),
      version: String(accepted.extra.version),
      chainId: Number(accepted.network.split(':')[1]),
      verifyingContract: accepted.asset as Address,
    },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: payer.address,
      to: accepted.payTo as Address,
      value: BigInt(accepted.amount),
      validAfter: 0n,
      validBefore,
      nonce,
    },
  });
  const authorization = {
    from: payer.address,
    to: accepted.payTo,
    value: accepted.amount,
    validAfter: '0',
    validBefore: validBefore.toString(),
    nonce,
  };
  return encodePaymentSignatureHeader({
    x402Version: 2,
    resource: required.resource,
    accepted,
    payload: { authorization, signature },
  });
}
