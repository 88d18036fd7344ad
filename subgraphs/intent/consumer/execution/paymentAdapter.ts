// The payment adapter: pays one merchant request with the official x402 client (@x402/fetch
// wrapFetchWithPayment over an x402Client with the exact-EVM scheme). It holds no key: the scheme's
// ClientEvmSigner is the `sign` callback it is given (the capability-backed treasury signer plus
// the record of what was signed), so the only EIP-3009 authorization it can produce is one the
// capability allows. Spend controls allow exactly the settlement token, and a payment policy keeps
// only the terms the quote decided (exactly the capability's amount, to one of its recipients):
// a merchant asking anything else at execution is refused before a signature exists, and the
// outcome names what it asked (`termsAsked`). It reports what happened and decides nothing: whether the paid request left (a
// signature was handed over) is what separates a refusal before payment from an ambiguous one.
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { Hex } from 'viem';
import type { PaymentCapability } from '../../../../core/consumer/paymentCapability';
import { readBoundedText } from '../../../../platform/rdap/http';
import { CappedTimeoutScheme } from './cappedTimeout';

/** The merchant's answer is bounded: a domains check is a few hundred bytes. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface MerchantRequest {
  /** The full paid URL from the quote. */
  readonly url: string;
  readonly method: string;
}

export interface PaymentAdapterInput {
  readonly request: MerchantRequest;
  readonly capability: PaymentCapability;
  /**
   * Signs EIP-712 typed data for the treasury: refuses anything outside the capability, and
   * records the signed authorization before resolving (so a crash after signing is never invisible).
   */
  readonly sign: (typedData: {
    domain: Record<string, unknown>;
    types: Record<string, unknown>;
    primaryType: string;
    message: Record<string, unknown>;
  }) => Promise<Hex>;
  /** Called once, just before the request carrying the payment leaves. */
  readonly onPaidRequestLeaving?: () => Promise<void>;
  /** Called once the request carrying the payment has been handed to the transport. */
  readonly onPaidRequestSent?: () => void;
  readonly timeoutMs: number;
  readonly now?: () => Date;
  /** The transport; default the global fetch. */
  readonly fetch?: typeof globalThis.fetch;
}

export interface SettleAnswer {
  readonly success: boolean;
  readonly transaction: string;
  readonly network: string;
}

/** One payment option a merchant's 402 offered: what it asked, to whom. */
export interface AskedTerms {
  readonly amount: string;
  readonly payTo: string;
}

export type PaymentOutcome =
  /**
   * Nothing was signed: the merchant refused, or the client could not build a payment.
   * `termsAsked`: the merchant's 402 offered only terms other than the quote's (a changed amount
   * or payee), listed as it asked them.
   */
  | {
      readonly kind: 'NOT_PAID';
      readonly status: number | null;
      readonly detail: string;
      readonly termsAsked?: readonly AskedTerms[];
    }
  /** A signature was handed over and the merchant answered. */
  | {
      readonly kind: 'ANSWERED';
      readonly status: number;
      readonly settle: SettleAnswer | null;
      readonly body: unknown;
    }
  /** A signature was handed over and no usable answer came back (dropped, timed out, broken). */
  | { readonly kind: 'LOST'; readonly detail: string };

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function clientFor(
  input: PaymentAdapterInput,
  onSigned: () => void,
  onOtherTerms: (asked: AskedTerms[]) => void,
): x402Client {
  const { capability } = input;
  const signer = {
    address: capability.payer,
    async signTypedData(typedData: Parameters<PaymentAdapterInput['sign']>[0]): Promise<Hex> {
      const signature = await input.sign(typedData);
      onSigned();
      return signature;
    },
  };
  const scheme = new CappedTimeoutScheme(
    new ExactEvmScheme(signer),
    capability.expiresAt,
    input.now,
  );
  const client = new x402Client().register(capability.network as `${string}:${string}`, scheme);
  // The asset only: the amount is held to exactly the capability's by the policy below (a cap here
  // would drop a higher ask before the policy could name it).
  client.setSpendControls({
    allowedAssets: [
      { network: capability.network as `${string}:${string}`, asset: capability.asset.token },
    ],
  });
  client.registerPolicy((_version, requirements) => {
    const exact = requirements.filter(
      (requirement) =>
        requirement.amount === capability.ceilingAtomic.toString() &&
        capability.recipients.some((recipient) => same(recipient, requirement.payTo)),
    );
    if (exact.length === 0)
      onOtherTerms(requirements.map(({ amount, payTo }) => ({ amount, payTo })));
    return exact;
  });
  return client;
}

/** The answer as JSON; null when it is not JSON or longer than MAX_ANSWER_BYTES (reading stops there). */
async function readAnswer(response: Response): Promise<unknown> {
  try {
    return JSON.parse(await readBoundedText(response, MAX_ANSWER_BYTES)) as unknown;
  } catch {
    await response.body?.cancel().catch(() => undefined);
    return null;
  }
}

function settleOf(response: Response): SettleAnswer | null {
  const header = response.headers.get('payment-response');
  if (header === null) return null;
  try {
    const decoded = decodePaymentResponseHeader(header);
    return {
      success: decoded.success === true,
      transaction: String(decoded.transaction ?? ''),
      network: String(decoded.network ?? ''),
    };
  } catch {
    return null;
  }
}

/** One paid request; never throws (every failure is an outcome). */
export async function payMerchant(input: PaymentAdapterInput): Promise<PaymentOutcome> {
  let signed = false;
  let termsAsked: AskedTerms[] | null = null;
  const transport = input.fetch ?? globalThis.fetch;
  const signal = AbortSignal.timeout(input.timeoutMs);
  const watched: typeof globalThis.fetch = async (request, init) => {
    const outgoing = request instanceof Request ? request : new Request(request, init);
    const paid = outgoing.headers.has('payment-signature');
    if (paid) await input.onPaidRequestLeaving?.();
    // Never followed: a redirect would hand the payment signature to whatever origin it names.
    const answer = transport(outgoing, { signal, redirect: 'manual' });
    if (paid) input.onPaidRequestSent?.();
    return answer;
  };
  const paidFetch = wrapFetchWithPayment(
    watched,
    clientFor(
      input,
      () => {
        signed = true;
      },
      (asked) => {
        termsAsked = asked;
      },
    ),
  );
  try {
    const response = await paidFetch(input.request.url, { method: input.request.method, signal });
    const body = await readAnswer(response);
    if (!signed) {
      return {
        kind: 'NOT_PAID',
        status: response.status,
        detail: `the merchant answered ${response.status} without asking for a payment we signed`,
      };
    }
    return { kind: 'ANSWERED', status: response.status, settle: settleOf(response), body };
  } catch (error) {
    const detail = error instanceof Error ? error.message.slice(0, 300) : 'unknown failure';
    if (signed) return { kind: 'LOST', detail };
    return termsAsked === null
      ? { kind: 'NOT_PAID', status: null, detail }
      : { kind: 'NOT_PAID', status: null, detail, termsAsked };
  }
}
