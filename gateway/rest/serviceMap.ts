// GET /catalog: the machine-readable service map, generated from the route table so it can never
// disagree with what the gateway actually serves (every path, method, price and purpose).
import { formatAmount } from '../../core/money/amount';
import type { RestServiceInfo, RouteDefinition, RoutePrice } from './types';

export interface ServiceMapPrice {
  kind: RoutePrice['kind'];
  /** Dynamic prices: how the amount and payTo are set per request (the 402 names them). */
  basis?: string;
  amountAtomic?: string;
  amountDisplay?: string;
  asset?: string;
  network?: string;
}

export function describePrice(price: RoutePrice, service: RestServiceInfo): ServiceMapPrice {
  if (price.kind === 'dynamic') {
    return {
      kind: 'dynamic',
      basis: price.basis,
      asset: service.payment.assetSymbol,
      network: service.payment.network,
    };
  }
  if (price.kind !== 'paid') return { kind: price.kind };
  return {
    kind: 'paid',
    amountAtomic: price.amountAtomic.toString(),
    amountDisplay: formatAmount(price.amountAtomic, service.payment.assetDecimals),
    asset: service.payment.assetSymbol,
    network: service.payment.network,
  };
}

export function serviceMap(service: RestServiceInfo, routes: readonly RouteDefinition[]) {
  return {
    service: {
      name: service.serviceName,
      description: service.serviceDescription,
      version: service.version,
      baseUrl: service.publicUrl,
      docs: service.docsBaseUrl,
    },
    payment: {
      protocol: 'x402',
      x402Version: 2,
      scheme: 'exact',
      network: service.payment.network,
      asset: service.payment.asset,
      assetSymbol: service.payment.assetSymbol,
      payTo: service.payment.payTo,
      challengeHeader: 'payment-required',
    },
    graphql: { http: '/graphql', websocket: '/graphql', protocol: 'graphql-transport-ws' },
    openapi: '/openapi.json',
    routes: routes.map((route) => ({
      method: route.method,
      path: route.path,
      purpose: route.purpose,
      group: route.group,
      auth: route.auth,
      price: describePrice(route.price, service),
    })),
  };
}
