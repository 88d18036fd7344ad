// One paid call through the official x402 client (@x402/fetch over @x402/core and @x402/evm's
// exact scheme), with the spend controls preset: only the service's asset on its network, at most
// the caller's cap per payment. Every payment carries a payment-identifier (the x402 extension)
// and the signed payment is kept: when the answer is lost after it was sent, the SDK presents the
// very same payment again, which the service answers from its record (the paywall replays an
// authorization it has seen, and a service speaking payment-identifier replays by id), so a retry
// never pays twice.
import { ExactEvmScheme } from '@x402/evm/exact/client';
import type { ClientEvmSigner } from '@x402/evm';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { generatePaymentId, isValidPaymentId } from '@x402/extensions/payment-identifier';
import { SpendControlError } from './errors';

const PAYMENT_IDENTIFIER = 'payment-identifier';
const PAYMENT_HEADER = 'payment-signature';
/** Presentations of one signed payment after the first answer was lost. */
export const MAX_PAYMENT_RESENDS = 3;

export interface Payer {
  /** A viem LocalAccount (privateKeyToAccount) or any signer the exact EVM scheme takes. */
  readonly signer: ClientEvmSigner;
  /** The most one payment may take, in the asset's atomic units. */
  readonly maxAmountPerPaymentAtomic: bigint;
}

export interface PaymentAsset {
  /** CAIP-2, e.g. eip155:196. */
  readonly network: `${string}:${string}`;
  readonly asset: string;
}

export interface PaidRequest {
  readonly url: string;
  readonly init: RequestInit & { body?: string };
  /** 16–128 of A–Z a–z 0–9 _ -; default: a fresh one. */
  readonly paymentId?: string;
  /**
   * The PAYMENT-SIGNATURE already signed under this paymentId (a caller's retry): presented as it
   * is, never replaced by a new payment, since a new payload under the same id is refused.
   */
  readonly signature?: string;
  /** Told the signed payment the moment it is sent, before any answer (so a retry can reuse it). */
  readonly onSigned?: (paymentId: string, signature: string) => void;
}

export interface PaidAnswer {
  readonly response: Response;
  readonly paymentId: string;
  /** The PAYMENT-SIGNATURE sent, null when the service asked no payment. */
  readonly paymentSignature: string | null;
}

/** The x402 client for one call: one scheme, one asset, one cap, this call's identifier. */
function clientFor(payer: Payer, asset: PaymentAsset, cap: bigint, paymentId: string): x402Client {
  const client = new x402Client().register(asset.network, new ExactEvmScheme(payer.signer));
  client.setSpendControls({
    allowedAssets: [
      { network: asset.network, asset: asset.asset, maxAmountPerPayment: cap.toString() },
    ],
  });
  // Sent whether or not the 402 declared the extension: a service that knows it replays by id, one
  // that does not ignores an extension it never offered.
  client.registerExtension({
    key: PAYMENT_IDENTIFIER,
    enrichPaymentPayload: async (payload) => ({
      ...payload,
      extensions: {
        ...payload.extensions,
        [PAYMENT_IDENTIFIER]: { info: { required: false, id: paymentId } },
      },
    }),
  });
  return client;
}

export async function paidRequest(
  fetchImpl: typeof fetch,
  payer: Payer,
  asset: PaymentAsset,
  request: PaidRequest,
  capAtomic: bigint = payer.maxAmountPerPaymentAtomic,
): Promise<PaidAnswer> {
  const paymentId = request.paymentId ?? generatePaymentId();
  if (!isValidPaymentId(paymentId))
    throw new SpendControlError('REQUEST_INVALID', 'paymentId must be 16–128 of A–Z a–z 0–9 _ -.');
  if (request.signature !== undefined) {
    const response = await resend(fetchImpl, request, paymentId, request.signature);
    return { response, paymentId, paymentSignature: request.signature };
  }
  let paymentSignature: string | null = null;
  let unanswered = false;
  const recording: typeof fetch = async (input, init) => {
    const sent = new Request(input, init);
    const signed = sent.headers.get(PAYMENT_HEADER);
    if (signed !== null) {
      paymentSignature = signed;
      request.onSigned?.(paymentId, signed);
    }
    try {
      return await fetchImpl(sent);
    } catch (error) {
      unanswered = true;
      throw error;
    }
  };
  const payingFetch = wrapFetchWithPayment(
    recording,
    clientFor(payer, asset, capAtomic, paymentId),
  );
  try {
    const response = await payingFetch(request.url, request.init);
    return { response, paymentId, paymentSignature };
  } catch (error) {
    if (!unanswered) {
      throw new SpendControlError(
        'PAYMENT_NOT_MADE',
        `The x402 client refused: ${(error as Error).message}`,
      );
    }
    if (paymentSignature === null) throw lost(error, 'before any payment was sent', paymentId);
    const response = await resend(fetchImpl, request, paymentId, paymentSignature);
    return { response, paymentId, paymentSignature };
  }
}

/** Presents the same signed payment again (never a new one) until an answer comes back. */
async function resend(
  fetchImpl: typeof fetch,
  request: PaidRequest,
  paymentId: string,
  signature: string,
): Promise<Response> {
  let lastError: unknown = null;
  for (let attempt = 0; attempt < MAX_PAYMENT_RESENDS; attempt += 1) {
    const headers = new Headers(request.init.headers);
    headers.set(PAYMENT_HEADER, signature);
    try {
      return await fetchImpl(request.url, { ...request.init, headers });
    } catch (error) {
      lastError = error;
    }
  }
  const when = `after the payment was sent and presented ${MAX_PAYMENT_RESENDS} more times`;
  throw lost(lastError, when, paymentId);
}

/**
 * Retryable; `details.paymentId` is the id to retry with: the SDK that signed under it presents
 * that same payment again.
 */
function lost(error: unknown, when: string, paymentId: string): SpendControlError {
  return new SpendControlError(
    'NETWORK_ERROR',
    `No answer ${when}: ${(error as Error)?.message ?? String(error)}`,
    { retryable: true, details: { paymentId } },
  );
}
