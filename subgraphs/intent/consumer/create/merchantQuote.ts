// The merchant's own price: an unpaid request to the paid URL, answered 402 with an x402 v2
// `PAYMENT-REQUIRED` header (decoded with the official @x402/core helper), and the one `accepts`
// entry the service can pay: scheme `exact` on the settlement rail's network, in its token, with
// the token's EIP-712 name and version in `extra`. Anything else (no answer in time, a refusal, a
// 2xx, a v1 challenge, no payable entry) is 502 PROVIDER_UNAVAILABLE: nothing is paid or stored.
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { AppError } from '../../../../core/errors';
import type { ConsumerRailAsset } from '../../../kit';

/** How long the merchant has to answer the unpaid request. */
export const MERCHANT_QUOTE_TIMEOUT_MS = 5_000;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const ATOMIC = /^[1-9][0-9]{0,77}$/;

/** The chosen `accepts[]` entry verbatim and the 402's resource object. */
export interface MerchantChallenge {
  readonly requirements: Record<string, unknown>;
  readonly resource: Record<string, unknown>;
  /** requirements.amount as a bigint (≥ 1). */
  readonly amountAtomic: bigint;
  /** requirements.payTo, lowercase. */
  readonly payTo: string;
  readonly maxTimeoutSeconds: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unavailable(message: string, cause?: unknown): AppError {
  return new AppError(
    'PROVIDER_UNAVAILABLE',
    message,
    undefined,
    cause === undefined ? undefined : { cause },
  );
}

/** True for an entry the settlement rail can pay with an EIP-3009 authorization. */
function payable(entry: unknown, rail: ConsumerRailAsset): entry is Record<string, unknown> {
  if (!isRecord(entry) || !isRecord(entry.extra)) return false;
  return (
    entry.scheme === 'exact' &&
    entry.network === rail.network &&
    typeof entry.asset === 'string' &&
    entry.asset.toLowerCase() === rail.token.toLowerCase() &&
    typeof entry.amount === 'string' &&
    ATOMIC.test(entry.amount) &&
    typeof entry.payTo === 'string' &&
    ADDRESS.test(entry.payTo) &&
    typeof entry.maxTimeoutSeconds === 'number' &&
    Number.isInteger(entry.maxTimeoutSeconds) &&
    entry.maxTimeoutSeconds > 0 &&
    entry.extra.name === rail.name &&
    entry.extra.version === rail.version
  );
}

/**
 * The payable entry of a decoded v2 PaymentRequired (the first, in the merchant's order); null
 * when it is not v2, has no resource, or offers nothing the settlement rail can pay.
 */
export function chooseRequirements(
  paymentRequired: unknown,
  rail: ConsumerRailAsset,
): MerchantChallenge | null {
  if (!isRecord(paymentRequired) || paymentRequired.x402Version !== 2) return null;
  const { resource, accepts } = paymentRequired;
  if (!isRecord(resource) || typeof resource.url !== 'string' || !Array.isArray(accepts))
    return null;
  const entry = accepts.find((candidate) => payable(candidate, rail));
  if (entry === undefined) return null;
  return {
    requirements: entry,
    resource,
    amountAtomic: BigInt(entry.amount as string),
    payTo: (entry.payTo as string).toLowerCase(),
    maxTimeoutSeconds: entry.maxTimeoutSeconds as number,
  };
}

/** The challenge of an unpaid `response`: 402 with a decodable PAYMENT-REQUIRED, or PROVIDER_UNAVAILABLE. */
export function challengeOf(
  response: { status: number; headers: { get(name: string): string | null } },
  rail: ConsumerRailAsset,
): MerchantChallenge {
  if (response.status !== 402)
    throw unavailable(`The merchant answered ${response.status} instead of a 402 challenge.`);
  const header = response.headers.get('payment-required');
  if (header === null) throw unavailable('The merchant’s 402 carries no PAYMENT-REQUIRED header.');
  let decoded: unknown;
  try {
    decoded = decodePaymentRequiredHeader(header);
  } catch (error) {
    throw unavailable('The merchant’s PAYMENT-REQUIRED header does not decode.', error);
  }
  const challenge = chooseRequirements(decoded, rail);
  if (challenge === null)
    throw unavailable(
      `The merchant offers no x402 v2 exact payment in ${rail.network} ${rail.token}.`,
    );
  return challenge;
}

/** Asks the merchant for its price: one unpaid request, bounded by `timeoutMs`. */
export async function fetchMerchantChallenge(
  url: string,
  method: 'GET',
  rail: ConsumerRailAsset,
  timeoutMs: number = MERCHANT_QUOTE_TIMEOUT_MS,
): Promise<MerchantChallenge> {
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw unavailable('The merchant did not answer.', error);
  }
  // The body is not read: only the status and the header count; release the connection.
  await response.body?.cancel().catch(() => undefined);
  return challengeOf(response, rail);
}
