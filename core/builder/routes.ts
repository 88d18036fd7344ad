// The builder (launch pack) routes as data: method, exact path from the spec, price, purpose, the
// catalog capabilities each relies on, and whether it calls a third party. The one list both the
// gateway's REST route table (gateway/rest/routes/builder.ts) and Capability.builderTools read.

export type BuilderOperation =
  'suggestNames' | 'checkDomains' | 'rankOptions' | 'seoTips' | 'brandPack';

export interface BuilderRoute {
  readonly operation: BuilderOperation;
  readonly method: 'POST';
  readonly path: string;
  /** Display USDT0 ("0.05"); null for a free route. */
  readonly priceUsdt0: string | null;
  readonly purpose: string;
  /** Catalog capabilities the route relies on (Capability.builderTools lists it under each). */
  readonly capabilityIds: readonly string[];
  /** True when a call asks a registry over RDAP: the route takes the tighter outbound bucket. */
  readonly outbound: boolean;
}

export const BUILDER_ROUTES: readonly BuilderRoute[] = [
  {
    operation: 'brandPack',
    method: 'POST',
    path: '/builder/brand_pack',
    priceUsdt0: '0.05',
    purpose: 'One-call path: names, live RDAP domain checks, rank, SEO tips.',
    capabilityIds: ['domains.check'],
    outbound: true,
  },
  {
    operation: 'suggestNames',
    method: 'POST',
    path: '/builder/suggest_names',
    priceUsdt0: '0.01',
    purpose:
      'Names from a language model when a key is configured, structured fallback otherwise; says which answered.',
    capabilityIds: [],
    outbound: false,
  },
  {
    operation: 'checkDomains',
    method: 'POST',
    path: '/builder/check_domains',
    priceUsdt0: null,
    purpose: 'Live RDAP availability (AVAILABLE, TAKEN, UNKNOWN); not a purchase or reservation.',
    capabilityIds: ['domains.check'],
    outbound: true,
  },
  {
    operation: 'rankOptions',
    method: 'POST',
    path: '/builder/rank_options',
    priceUsdt0: null,
    purpose: 'Heuristic rank by length, charset and pronounceability.',
    capabilityIds: [],
    outbound: false,
  },
  {
    operation: 'seoTips',
    method: 'POST',
    path: '/builder/seo_tips',
    priceUsdt0: null,
    purpose: 'Launch checklist for a chosen name.',
    capabilityIds: [],
    outbound: false,
  },
];

export function builderRoute(operation: BuilderOperation): BuilderRoute {
  const route = BUILDER_ROUTES.find((entry) => entry.operation === operation);
  if (route === undefined) throw new RangeError(`no builder route for ${operation}`);
  return route;
}
