// The official exact-EVM client signs `validBefore = now + requirements.maxTimeoutSeconds`. A
// payment capability dies 5 minutes after minting, so a merchant asking for 300 s would make the
// client sign past the capability's expiry, which the capability refuses. This wrapper hands the
// inner scheme a copy of the requirements whose maxTimeoutSeconds is capped to the capability's
// remaining life (less a margin); the `accepted` echo the merchant checks is built by @x402/core's
// client from the selected requirements themselves, so it stays exactly what the merchant sent.
import type {
  PaymentPayloadContext,
  PaymentPayloadResult,
  PaymentRequirements,
  SchemeNetworkClient,
} from '@x402/core/types';

/** Seconds kept between the signed validBefore and the capability's expiry (clock reads, rounding). */
export const TIMEOUT_MARGIN_SECONDS = 2;
/** The merchant's facilitator refuses an authorization valid for less than 6 s more; keep one spare. */
export const MIN_TIMEOUT_SECONDS = 7;

export class CapabilityTooShortError extends Error {
  constructor(remainingSeconds: number) {
    super(
      `the payment capability has ${remainingSeconds} s left; a merchant needs at least ${MIN_TIMEOUT_SECONDS} s`,
    );
    this.name = 'CapabilityTooShortError';
  }
}

/** min(requested, whole seconds left before `expiresAt` − margin); throws below MIN_TIMEOUT_SECONDS. */
export function cappedTimeoutSeconds(requested: number, expiresAt: Date, now: Date): number {
  const expirySeconds = Math.floor(expiresAt.getTime() / 1000);
  const nowSeconds = Math.ceil(now.getTime() / 1000);
  const remaining = expirySeconds - nowSeconds - TIMEOUT_MARGIN_SECONDS;
  const capped = Math.min(requested, remaining);
  if (!Number.isSafeInteger(capped) || capped < MIN_TIMEOUT_SECONDS)
    throw new CapabilityTooShortError(remaining);
  return capped;
}

export class CappedTimeoutScheme implements SchemeNetworkClient {
  readonly scheme: string;

  constructor(
    private readonly inner: SchemeNetworkClient,
    private readonly expiresAt: Date,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.scheme = inner.scheme;
  }

  createPaymentPayload(
    x402Version: number,
    requirements: PaymentRequirements,
    context?: PaymentPayloadContext,
  ): Promise<PaymentPayloadResult> {
    const capped = {
      ...requirements,
      maxTimeoutSeconds: cappedTimeoutSeconds(
        requirements.maxTimeoutSeconds,
        this.expiresAt,
        this.now(),
      ),
    };
    return this.inner.createPaymentPayload(x402Version, capped, context);
  }
}
