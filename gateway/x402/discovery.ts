// GET /.well-known/x402: every paid resource with its method, price and network, and the exact
// PaymentRequirements a client will be offered, generated from the route table so it cannot
// disagree with the 402s the gateway sends. A route priced per request (`pricing: "dynamic"`)
// lists how it is priced; its amount and payTo are null here and named by its own 402.
import { formatAmount } from '../../core/money/amount';
import type { RestServiceInfo, RouteDefinition } from '../rest/types';
import { BAZAAR, bazaarDeclaration } from './extensions';
import {
  MAX_TIMEOUT_SECONDS,
  PAYMENT_HEADERS,
  PAYMENT_REQUIRED_HEADER,
  PAYMENT_RESPONSE_HEADER,
  X402_VERSION,
} from './protocol';

/** A route priced per request: how it is priced; the amount and payTo are the ones its own 402 offers. */
function dynamicResource(service: RestServiceInfo, route: RouteDefinition, basis: string) {
  const { payment } = service;
  return {
    resource: `${service.publicUrl}${route.path}`,
    method: route.method,
    path: route.path,
    description: route.purpose,
    mimeType: 'application/json',
    extensions: { [BAZAAR]: bazaarDeclaration(route) },
    pricing: 'dynamic',
    price: { dynamic: true, basis, asset: payment.assetSymbol, network: payment.network },
    accepts: [
      {
        scheme: 'exact',
        network: payment.network,
        amount: null,
        asset: payment.asset,
        payTo: null,
        maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
        extra: { name: payment.assetName, version: payment.assetVersion },
      },
    ],
  };
}

export function x402Discovery(service: RestServiceInfo, routes: readonly RouteDefinition[]) {
  const { payment } = service;
  const resources = routes.flatMap<Record<string, unknown>>((route) => {
    if (route.price.kind === 'dynamic') return [dynamicResource(service, route, route.price.basis)];
    if (route.price.kind !== 'paid') return [];
    const amount = route.price.amountAtomic.toString();
    return [
      {
        resource: `${service.publicUrl}${route.path}`,
        method: route.method,
        path: route.path,
        description: route.purpose,
        mimeType: 'application/json',
        extensions: { [BAZAAR]: bazaarDeclaration(route) },
        price: {
          amountAtomic: amount,
          amountDisplay: formatAmount(route.price.amountAtomic, payment.assetDecimals),
          asset: payment.assetSymbol,
          network: payment.network,
        },
        accepts: [
          {
            scheme: 'exact',
            network: payment.network,
            amount,
            asset: payment.asset,
            payTo: payment.payTo,
            maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
            extra: { name: payment.assetName, version: payment.assetVersion },
          },
        ],
      },
    ];
  });
  return {
    x402Version: X402_VERSION,
    service: {
      name: service.serviceName,
      baseUrl: service.publicUrl,
      docs: service.docsBaseUrl ? `${service.docsBaseUrl}/x402.md` : null,
    },
    transport: {
      challengeHeader: PAYMENT_REQUIRED_HEADER,
      challengeBody: {},
      paymentHeaders: [...PAYMENT_HEADERS],
      receiptHeader: PAYMENT_RESPONSE_HEADER,
    },
    network: payment.network,
    asset: {
      address: payment.asset,
      symbol: payment.assetSymbol,
      decimals: payment.assetDecimals,
      eip712: { name: payment.assetName, version: payment.assetVersion },
    },
    payTo: payment.payTo,
    resources,
  };
}
