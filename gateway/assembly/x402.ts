// x402 as the gateway assembles it: the deployment's payment terms, the fee asset registered in
// the ledger before the first payment, the paywall on priced routes and the reconciler of parked
// payments (on a timer unless disabled). Without x402, priced routes are served unpaid.
import type { Pool } from 'pg';
import type { Logger } from '../../platform/log';
import type { BusinessCounters } from '../../platform/metrics';
import { registerAsset } from '../../subgraphs/ledger';
import type { RestServiceInfo, RouteDefinition } from '../rest/types';
import { type OfferReceiptSigner, X402Extensions } from '../x402/extensions';
import { Paywall } from '../x402/paywall';
import type { PaymentTerms } from '../x402/protocol';
import type { SettlementRail } from '../x402/rail';
import { Reconciler } from '../x402/parkedPayments';

export interface X402GatewayOptions {
  /** The funding chain: the official facilitator settling from the relayer key, plus chain reads. */
  readonly rail: SettlementRail;
  /** The ledger's database: payment records and fee postings. */
  readonly db: Pool;
  /** How long one replica may hold a payment (settling, then running the call) before another may resume it. */
  readonly leaseMs: number;
  /** How often parked payments are checked against the chain; 0 disables the timer. */
  readonly reconcileIntervalMs: number;
  /** The fee receiver's key, signing offer-receipt offers and receipts; absent: none are issued. */
  readonly receiptSigner?: OfferReceiptSigner | null;
}

function paymentTermsOf(service: RestServiceInfo): PaymentTerms {
  const { payment } = service;
  if (!payment.asset || !payment.payTo)
    throw new Error('x402 needs the payment asset and the fee receiver (payTo) address');
  if (!/^eip155:[0-9]+$/.test(payment.network))
    throw new Error(`x402 network ${payment.network} is not eip155:<chainId>`);
  return {
    network: payment.network as PaymentTerms['network'],
    asset: payment.asset as PaymentTerms['asset'],
    assetName: payment.assetName,
    assetVersion: payment.assetVersion,
    payTo: payment.payTo as PaymentTerms['payTo'],
  };
}

export async function startX402(
  x402: X402GatewayOptions | null,
  service: RestServiceInfo,
  routes: readonly RouteDefinition[],
  log: Logger,
  counters?: BusinessCounters,
): Promise<{
  paywall: Paywall | null;
  reconciler: Reconciler | null;
  extensions: X402Extensions | null;
}> {
  if (!x402) return { paywall: null, reconciler: null, extensions: null };
  const { rail, db, leaseMs, reconcileIntervalMs } = x402;
  const terms = paymentTermsOf(service);
  // Fees are booked in the funding asset; the ledger must know it before the first payment.
  await registerAsset(db, {
    chain: terms.network,
    token: terms.asset.toLowerCase(),
    symbol: service.payment.assetSymbol,
    decimals: service.payment.assetDecimals,
  });
  const reconciler = new Reconciler({ rail, db, log, counters });
  const paywall = new Paywall({ terms, rail, db, reconciler, log, leaseMs, counters });
  if (reconcileIntervalMs > 0) reconciler.start(reconcileIntervalMs);
  const extensions = new X402Extensions({ routes, signer: x402.receiptSigner ?? null });
  return { paywall, reconciler, extensions };
}
