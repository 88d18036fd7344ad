// The treasury's signer: the one holder of the treasury key in a running service. It signs two
// things only. A merchant payment: an EIP-3009 TransferWithAuthorization that passes the payment
// capability's check (core/consumer/paymentCapability.ts authorizeTypedData), signing the checked
// copy, never its input. A refund: a TransferWithAuthorization from the treasury to the funding
// payer, with the nonce the refund job derives from the intent (one refund per intent on chain).
// Callers get signatures and the treasury's address; the key itself never leaves this closure
// (no getter, no export, redacted in logs and JSON).
import { inspect } from 'node:util';
import type { Address, Hex } from 'viem';
import {
  authorizeTypedData,
  type CapabilityRefusalReason,
  type CheckedTypedData,
  type PaymentCapability,
} from '../../core/consumer/paymentCapability';
import type { RoleKey } from './keys';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from './tokens';

/** The capability refused the typed data; nothing was signed. */
export class CapabilityRefusedError extends Error {
  constructor(
    readonly reason: CapabilityRefusalReason,
    readonly detail: string,
  ) {
    super(`the payment capability refused to sign: ${reason} (${detail})`);
    this.name = 'CapabilityRefusedError';
  }
}

export interface SignedCapabilityAuthorization {
  /** What was signed: the capability check's own copy. */
  readonly typedData: CheckedTypedData;
  readonly signature: Hex;
}

export interface RefundAuthorizationRequest {
  readonly chainId: number;
  readonly token: Address;
  /** The token's EIP-712 domain name and version. */
  readonly name: string;
  readonly version: string;
  readonly to: Address;
  readonly value: bigint;
  readonly validBefore: bigint;
  readonly nonce: Hex;
}

export interface TreasurySigner {
  readonly address: Address;
  /** Signs the typed data only when the capability allows it at `now`; CapabilityRefusedError otherwise. */
  signTransferAuthorization(
    capability: PaymentCapability,
    typedData: unknown,
    now: Date,
  ): Promise<SignedCapabilityAuthorization>;
  /** A refund: treasury → `to`, valid from now until `validBefore`, under the given nonce. */
  signRefundAuthorization(request: RefundAuthorizationRequest): Promise<Hex>;
}

export function createTreasurySigner(key: RoleKey): TreasurySigner {
  if (key.role !== 'treasury')
    throw new Error(`the treasury signer needs the treasury key, not ${key.role}`);
  const account = key.account;
  const address = key.address;
  const signer: TreasurySigner = {
    address,
    async signTransferAuthorization(capability, typedData, now) {
      if (capability.payer.toLowerCase() !== address.toLowerCase())
        throw new CapabilityRefusedError('PAYER_MISMATCH', 'the capability names another payer');
      const check = authorizeTypedData(capability, typedData, now);
      if (!check.ok) throw new CapabilityRefusedError(check.reason, check.detail);
      const signature = await account.signTypedData({
        domain: check.typedData.domain,
        types: TRANSFER_WITH_AUTHORIZATION_TYPES,
        primaryType: 'TransferWithAuthorization',
        message: check.typedData.message,
      });
      return { typedData: check.typedData, signature };
    },
    async signRefundAuthorization(request) {
      if (request.value <= 0n) throw new RangeError('a refund moves at least one unit');
      return account.signTypedData({
        domain: {
          name: request.name,
          version: request.version,
          chainId: request.chainId,
          verifyingContract: request.token,
        },
        types: TRANSFER_WITH_AUTHORIZATION_TYPES,
        primaryType: 'TransferWithAuthorization',
        message: {
          from: address,
          to: request.to,
          value: request.value,
          validAfter: 0n,
          validBefore: request.validBefore,
          nonce: request.nonce,
        },
      });
    },
  };
  const describe = () => `TreasurySigner(${address})`;
  Object.defineProperties(signer, {
    toJSON: { value: () => ({ treasurySigner: address }) },
    toString: { value: describe },
    [inspect.custom]: { value: describe },
  });
  return Object.freeze(signer);
}
