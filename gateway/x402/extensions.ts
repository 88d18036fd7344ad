// The x402 extensions (@x402/extensions) a priced route's answers carry beside payment-identifier
// (paywall.ts): `bazaar` discovery metadata in every 402 (and in /.well-known/x402), checked
// against the package's schema when the gateway starts; `offer-receipt`, when the fee receiver's
// key is at hand: every 402 carries an offer signed with EIP-712 (route, amount, payee, asset), and
// every paid answer a receipt signed the same way (route, payer, network, transaction) together
// with the signed offer of what was paid (the amount). A receipt is issued at the payment's
// settlement time, so the answer replayed to the same payment carries the very same receipt.
import {
  BAZAAR as BAZAAR_EXTENSION,
  declareDiscoveryExtension,
  validateDiscoveryExtension,
} from '@x402/extensions/bazaar';
import {
  OFFER_RECEIPT,
  type OfferPayload,
  type ReceiptPayload,
  type SignTypedDataFn,
  signOfferEIP712,
  signReceiptEIP712,
} from '@x402/extensions/offer-receipt';
import type { PaymentRequirements } from '@x402/core/types';
import { pathParamsOf, routeInputSchema } from '../rest/inputSchemas';
import { isPriced, type RestResult, type RouteDefinition } from '../rest/types';
import { MAX_TIMEOUT_SECONDS, PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER } from './protocol';
import { paidAnswerOf } from './answers';
import {
  decodeOwnRequiredHeader,
  encodeRequiredHeader,
  encodeSettlementHeader,
} from './headerCodec';

/** The bazaar extension's key (the package exports it as a facilitator extension object). */
export const BAZAAR = BAZAAR_EXTENSION.key;
/** Offer and receipt payload schema version of the extension. */
const OFFER_RECEIPT_VERSION = 1;

/** A route's input schema less its path parameters (those are in the URL, not the body). */
function bodySchemaOf(route: RouteDefinition): Record<string, unknown> {
  const {
    properties,
    required: _pathParams,
    ...schema
  } = routeInputSchema(route) as {
    properties: Record<string, unknown>;
    required?: string[];
  };
  const inPath = new Set(pathParamsOf(route.path));
  return {
    ...schema,
    properties: Object.fromEntries(
      Object.entries(properties).filter(([name]) => !inPath.has(name)),
    ),
  };
}

/** The `bazaar` discovery declaration of a priced route, valid against the package's schema. */
export function bazaarDeclaration(route: RouteDefinition): Record<string, unknown> {
  const declared =
    route.method === 'GET'
      ? declareDiscoveryExtension({})
      : declareDiscoveryExtension({ bodyType: 'json', inputSchema: bodySchemaOf(route) });
  const extension = declared[BAZAAR]!;
  (extension.info.input as { method?: string }).method = route.method;
  const validation = validateDiscoveryExtension(extension);
  if (!validation.valid)
    throw new Error(
      `bazaar metadata of ${route.method} ${route.path}: ${(validation.errors ?? []).join('; ')}`,
    );
  return extension as unknown as Record<string, unknown>;
}

/** Signs offers and receipts: the fee receiver's key. */
export interface OfferReceiptSigner {
  readonly signTypedData: SignTypedDataFn;
}

export interface X402ExtensionsOptions {
  readonly routes: readonly RouteDefinition[];
  /** null: no offers or receipts (the fee receiver's key is not configured). */
  readonly signer: OfferReceiptSigner | null;
}

function offerOf(
  resourceUrl: string,
  accepted: PaymentRequirements,
  validUntil: number,
): OfferPayload {
  return {
    version: OFFER_RECEIPT_VERSION,
    resourceUrl,
    scheme: accepted.scheme,
    network: accepted.network,
    asset: accepted.asset,
    payTo: accepted.payTo,
    amount: accepted.amount,
    validUntil,
  };
}

/** Offer signatures kept: a busy route signs the same offer (same second, amount, payee) over and over. */
const SIGNED_OFFERS_KEPT = 1024;

export class X402Extensions {
  private readonly bazaar = new Map<RouteDefinition, Record<string, unknown>>();
  /**
   * Signatures of offers already signed, by payload. ECDSA signing here is deterministic (RFC 6979),
   * so a kept signature is the very one signing again would give; only the CPU is saved.
   */
  private readonly signedOffers = new Map<string, Promise<string>>();

  constructor(private readonly options: X402ExtensionsOptions) {
    // Every priced route's metadata is built (and validated) once, before the first request.
    for (const route of options.routes)
      if (isPriced(route.price)) this.bazaar.set(route, bazaarDeclaration(route));
  }

  /** A priced route's answer with its extensions: bazaar and an offer on a 402, a receipt on a paid answer. */
  async enrich(
    route: RouteDefinition,
    resourceUrl: string,
    result: RestResult,
  ): Promise<RestResult> {
    const headers = result.headers ?? {};
    const required = headers[PAYMENT_REQUIRED_HEADER];
    if (required) return this.withChallengeExtensions(route, resourceUrl, result, required);
    if (headers[PAYMENT_RESPONSE_HEADER] && this.options.signer)
      return this.withReceipt(resourceUrl, result);
    return result;
  }

  private signOffer(payload: OfferPayload, signer: OfferReceiptSigner): Promise<string> {
    const key = JSON.stringify(payload);
    let signed = this.signedOffers.get(key);
    if (!signed) {
      signed = signOfferEIP712(payload, signer.signTypedData);
      this.signedOffers.set(key, signed);
      signed.catch(() => this.signedOffers.delete(key)); // a failed signature is never kept
      if (this.signedOffers.size > SIGNED_OFFERS_KEPT)
        this.signedOffers.delete(this.signedOffers.keys().next().value as string);
    }
    return signed;
  }

  private async withChallengeExtensions(
    route: RouteDefinition,
    resourceUrl: string,
    result: RestResult,
    header: string,
  ): Promise<RestResult> {
    const paymentRequired = decodeOwnRequiredHeader(header);
    const extensions: Record<string, unknown> = { ...(paymentRequired.extensions ?? {}) };
    const bazaar = this.bazaar.get(route);
    if (bazaar) extensions[BAZAAR] = bazaar;
    const { signer } = this.options;
    if (signer) {
      const validUntil = Math.floor(Date.now() / 1000) + MAX_TIMEOUT_SECONDS;
      const offers = await Promise.all(
        paymentRequired.accepts.map(async (accepted, acceptIndex) => {
          const payload = offerOf(resourceUrl, accepted, validUntil);
          const signature = await this.signOffer(payload, signer);
          return { format: 'eip712', acceptIndex, payload, signature };
        }),
      );
      extensions[OFFER_RECEIPT] = { info: { offers } };
    }
    return {
      ...result,
      headers: {
        ...result.headers,
        [PAYMENT_REQUIRED_HEADER]: encodeRequiredHeader({ ...paymentRequired, extensions }),
      },
    };
  }

  /**
   * A paid answer with its receipt, signed from the record the paywall answered with (its payment
   * and the settlement its header encodes). An answer that carries a PAYMENT-RESPONSE header the
   * paywall did not make here gets none: one transaction settles many payments of a group, several
   * of them perhaps one payer's, so the header alone does not name which payment it answers, and a
   * receipt must never state another payment's amount or time.
   */
  private async withReceipt(resourceUrl: string, result: RestResult): Promise<RestResult> {
    const paid = paidAnswerOf(result);
    const { signer } = this.options;
    if (!signer || !paid) return result;
    const { payment, settlement } = paid;
    if (!settlement.success || !settlement.payer || payment.settledAt === null) return result;
    const issuedAt = Math.floor(payment.settledAt.getTime() / 1000);
    const receipt: ReceiptPayload = {
      version: OFFER_RECEIPT_VERSION,
      network: settlement.network,
      resourceUrl,
      payer: settlement.payer,
      issuedAt,
      transaction: settlement.transaction,
    };
    // What was paid for, signed the same way: the offer names the amount (the receipt cannot).
    const offer = offerOf(
      resourceUrl,
      {
        scheme: 'exact',
        network: settlement.network,
        asset: payment.asset,
        payTo: payment.payTo,
        amount: payment.amountAtomic.toString(),
        maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
        extra: {},
      },
      issuedAt,
    );
    const [receiptSignature, offerSignature] = await Promise.all([
      signReceiptEIP712(receipt, signer.signTypedData),
      this.signOffer(offer, signer),
    ]);
    const extensions = {
      ...(settlement.extensions ?? {}),
      [OFFER_RECEIPT]: {
        info: {
          receipt: { format: 'eip712', payload: receipt, signature: receiptSignature },
          offer: { format: 'eip712', payload: offer, signature: offerSignature },
        },
      },
    };
    return {
      ...result,
      headers: {
        ...result.headers,
        [PAYMENT_RESPONSE_HEADER]: encodeSettlementHeader({ ...settlement, extensions }),
      },
    };
  }
}
