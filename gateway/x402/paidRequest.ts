// What the paywall works on: one paid request as the router hands it over, and one presentation of
// its payment as the paywall carries it from the checks through the claim to the answer.
import type { PaymentPayload, PaymentRequirements, ResourceInfo } from '@x402/core/types';
import type { Address } from 'viem';
import type { AppError } from '../../core/errors';
import type { FundingTarget } from '../../subgraphs/ledger';
import type { RestResult } from '../rest/types';
import type { Authorization } from './protocol';

/** One paid request as the router hands it over. */
export interface PaidRequest {
  /** `METHOD /path` as the route table writes it. */
  readonly route: string;
  readonly resource: ResourceInfo;
  readonly amountAtomic: bigint;
  readonly requestDigest: string;
  /** PAYMENT-SIGNATURE (or X-PAYMENT); null when absent. */
  readonly paymentHeader: string | null;
  /** A route priced per request pays here instead of the fee receiver. */
  readonly payTo?: Address;
  /** The asset a route priced per request names: it must be the one this paywall settles. */
  readonly asset?: string;
  /** Set when the payment funds a consumer intent (booked as FUNDING, not as the route's fee). */
  readonly funding?: FundingTarget;
  /** The route takes no new payment now; one it already took is still replayed. */
  readonly refusal?: AppError;
}

/** Runs the paid call; answers (2xx and 4xx) are recorded, a thrown error is not. */
export type RunPaidCall = () => Promise<RestResult>;

/** One presentation of a payment, checked and decoded, as the paywall carries it. */
export interface Attempt {
  readonly request: PaidRequest;
  readonly offered: PaymentRequirements;
  readonly payload: PaymentPayload;
  readonly authorization: Authorization;
  readonly refuse: (reason: string) => RestResult;
  readonly run: RunPaidCall;
  /** The claim was taken over from a holder whose lease lapsed (it may have sent it already). */
  readonly takenOver?: boolean;
}
