// x402 v2 on the wire, for our terms: the PaymentRequirements a priced route offers, the 402
// challenge (body `{}`, the PaymentRequired as standard base64 JSON in `payment-required`), and
// the checks a presented PaymentPayload must pass before anything touches the chain. Types and
// decoding are the official @x402/core ones (encoding gives the library's bytes, headerCodec.ts);
// reasons use the protocol's vocabulary.
import { decodePaymentSignatureHeader } from '@x402/core/http';
import type {
  PaymentPayload,
  PaymentRequired,
  PaymentRequirements,
  ResourceInfo,
} from '@x402/core/types';
import { encodeRequiredHeader } from './headerCodec';
import type { Address } from 'viem';
import type { RestResult } from '../rest/types';

export const X402_VERSION = 2;
/** The authorization lifetime we ask for; the official client signs validBefore = now + this. */
export const MAX_TIMEOUT_SECONDS = 300;
/** A settlement needs this long to land before validBefore (the reference facilitator's margin). */
export const VALID_BEFORE_MARGIN_SECONDS = 6n;
/**
 * How far a client's clock may run ahead of ours: validBefore may be at most MAX_TIMEOUT_SECONDS
 * plus this beyond our now. The bound is what lets a parked payment expire (and its SUSPENSE
 * clear) within minutes instead of never.
 */
export const CLOCK_SKEW_ALLOWANCE_SECONDS = 60n;
export const PAYMENT_REQUIRED_HEADER = 'payment-required';
export const PAYMENT_RESPONSE_HEADER = 'payment-response';
/** v2 clients send PAYMENT-SIGNATURE; X-PAYMENT is accepted as an alias. */
export const PAYMENT_HEADERS = ['payment-signature', 'x-payment'] as const;

/** What the service charges in, fixed per deployment. */
export interface PaymentTerms {
  readonly network: `eip155:${number}`;
  readonly asset: Address;
  /** EIP-712 domain of the token (the client signs against it). */
  readonly assetName: string;
  readonly assetVersion: string;
  readonly payTo: Address;
}

export function requirementsFor(terms: PaymentTerms, amountAtomic: bigint): PaymentRequirements {
  return {
    scheme: 'exact',
    network: terms.network,
    amount: amountAtomic.toString(),
    asset: terms.asset,
    payTo: terms.payTo,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    extra: { name: terms.assetName, version: terms.assetVersion },
  };
}

export function paymentRequired(
  resource: ResourceInfo,
  requirements: PaymentRequirements,
  error?: string,
  extensions?: Record<string, unknown>,
): PaymentRequired {
  return {
    x402Version: X402_VERSION,
    ...(error ? { error } : {}),
    resource,
    accepts: [requirements],
    ...(extensions ? { extensions } : {}),
  };
}

/** HTTP 402, body exactly `{}`, the challenge in the header: the one answer without an error body. */
export function challenge(required: PaymentRequired): RestResult {
  return {
    status: 402,
    body: {},
    headers: {
      [PAYMENT_REQUIRED_HEADER]: encodeRequiredHeader(required),
      'cache-control': 'no-store',
    },
  };
}

/** The authorization inside an `exact` EIP-3009 payload, parsed. */
export interface Authorization {
  readonly from: Address;
  readonly to: Address;
  readonly value: bigint;
  readonly validAfter: bigint;
  readonly validBefore: bigint;
  readonly nonce: `0x${string}`;
}

export type PaymentCheck =
  | { readonly ok: true; readonly payload: PaymentPayload; readonly authorization: Authorization }
  | { readonly ok: false; readonly reason: string; readonly message: string };

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const NONCE = /^0x[0-9a-fA-F]{64}$/;
const UINT = /^[0-9]{1,78}$/;
const HEX = /^0x[0-9a-fA-F]*$/;

function refuse(reason: string, message: string): PaymentCheck {
  return { ok: false, reason, message };
}

function sameAddress(a: unknown, b: string): boolean {
  return typeof a === 'string' && a.toLowerCase() === b.toLowerCase();
}

function parseAuthorization(raw: unknown): Authorization | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const { from, to, value, validAfter, validBefore, nonce } = raw as Record<string, unknown>;
  if (
    typeof from !== 'string' ||
    !ADDRESS.test(from) ||
    typeof to !== 'string' ||
    !ADDRESS.test(to)
  )
    return null;
  for (const field of [value, validAfter, validBefore])
    if (typeof field !== 'string' || !UINT.test(field)) return null;
  if (typeof nonce !== 'string' || !NONCE.test(nonce)) return null;
  return {
    from: from as Address,
    to: to as Address,
    value: BigInt(value as string),
    validAfter: BigInt(validAfter as string),
    validBefore: BigInt(validBefore as string),
    nonce: nonce.toLowerCase() as `0x${string}`,
  };
}

/** The `accepted` echo must be exactly what we offered: scheme, network, asset, payee, price, window, domain. */
function checkAccepted(
  accepted: Partial<PaymentRequirements>,
  offered: PaymentRequirements,
): PaymentCheck | null {
  if (accepted.scheme !== offered.scheme)
    return refuse('invalid_scheme', `only the ${offered.scheme} scheme is accepted`);
  if (accepted.network !== offered.network)
    return refuse('invalid_network', `payments are taken on ${offered.network}`);
  if (!sameAddress(accepted.asset, offered.asset))
    return refuse('invalid_payment_requirements', `the asset must be ${offered.asset}`);
  if (!sameAddress(accepted.payTo, offered.payTo))
    return refuse('invalid_exact_evm_recipient_mismatch', `payTo must be ${offered.payTo}`);
  if (accepted.amount !== offered.amount) {
    return refuse(
      'invalid_exact_evm_payload_authorization_value_mismatch',
      `the price of this route is exactly ${offered.amount} atomic units`,
    );
  }
  if (accepted.maxTimeoutSeconds !== offered.maxTimeoutSeconds) {
    return refuse('invalid_payment_requirements', 'maxTimeoutSeconds differs from the offer');
  }
  const extra = (accepted.extra ?? {}) as Record<string, unknown>;
  if (extra.name !== offered.extra.name || extra.version !== offered.extra.version) {
    return refuse(
      'invalid_exact_evm_missing_eip712_domain',
      'extra.name and extra.version must be the token domain offered',
    );
  }
  return null;
}

/** The signed authorization must pay exactly the offer to us, inside a window we can settle in. */
function checkAuthorization(
  authorization: Authorization,
  offered: PaymentRequirements,
  nowS: bigint,
): PaymentCheck | null {
  if (!sameAddress(authorization.to, offered.payTo)) {
    return refuse(
      'invalid_exact_evm_recipient_mismatch',
      `the authorization must pay ${offered.payTo}`,
    );
  }
  if (authorization.value !== BigInt(offered.amount)) {
    return refuse(
      'invalid_exact_evm_payload_authorization_value_mismatch',
      `the authorization must be for exactly ${offered.amount}`,
    );
  }
  if (authorization.validBefore < nowS + VALID_BEFORE_MARGIN_SECONDS) {
    return refuse(
      'invalid_exact_evm_payload_authorization_valid_before',
      'the authorization has expired (or expires within seconds)',
    );
  }
  if (
    authorization.validBefore >
    nowS + BigInt(offered.maxTimeoutSeconds) + CLOCK_SKEW_ALLOWANCE_SECONDS
  ) {
    return refuse(
      'invalid_exact_evm_payload_authorization_valid_before',
      `validBefore is more than maxTimeoutSeconds (${offered.maxTimeoutSeconds} s) plus ${CLOCK_SKEW_ALLOWANCE_SECONDS} s of clock skew ahead`,
    );
  }
  if (authorization.validAfter > nowS) {
    return refuse(
      'invalid_exact_evm_payload_authorization_valid_after',
      'the authorization is not valid yet',
    );
  }
  return null;
}

/**
 * Everything that can be judged without the chain: the header decodes, it is v2, the `accepted`
 * echo is what we offered, and the signed authorization pays exactly that to us within its window.
 * The signature, balance and nonce are the facilitator's and the chain's to judge.
 */
export function checkPayment(
  header: string,
  offered: PaymentRequirements,
  nowS: bigint,
): PaymentCheck {
  let payload: PaymentPayload;
  try {
    payload = decodePaymentSignatureHeader(header);
  } catch {
    return refuse(
      'invalid_payload',
      'the payment header is not base64 JSON of an x402 PaymentPayload',
    );
  }
  if (typeof payload !== 'object' || payload === null)
    return refuse('invalid_payload', 'the payment header holds no object');
  if (payload.x402Version !== X402_VERSION)
    return refuse('invalid_x402_version', 'only x402Version 2 is accepted');
  const accepted = payload.accepted as Partial<PaymentRequirements> | undefined;
  if (typeof accepted !== 'object' || accepted === null)
    return refuse('invalid_payload', 'the payload has no `accepted` requirements');
  const refusedOffer = checkAccepted(accepted, offered);
  if (refusedOffer !== null) return refusedOffer;
  const inner = payload.payload as { authorization?: unknown; signature?: unknown } | undefined;
  const authorization = parseAuthorization(inner?.authorization);
  if (!authorization || typeof inner?.signature !== 'string' || !HEX.test(inner.signature)) {
    return refuse(
      'invalid_payload',
      'payload.authorization and payload.signature must be an EIP-3009 authorization',
    );
  }
  return checkAuthorization(authorization, offered, nowS) ?? { ok: true, payload, authorization };
}
