// The builder (launch pack) routes that rely on a catalog capability, and which one: the data
// behind Capability.builderTools. Paths and purposes are the spec's; a route that relies on no
// catalog capability is not listed here.
export interface BuilderToolEntry {
  readonly path: string;
  readonly method: 'GET' | 'POST';
  readonly purpose: string;
  readonly capabilityIds: readonly string[];
}

export const BUILDER_TOOLS: readonly BuilderToolEntry[] = [
  {
    path: '/builder/brand_pack',
    method: 'POST',
    purpose: 'One-call path: names, live RDAP domain checks, rank, SEO tips.',
    capabilityIds: ['domains.check'],
  },
  {
    path: '/builder/check_domains',
    method: 'POST',
    purpose: 'Live RDAP availability (AVAILABLE, TAKEN, UNKNOWN); not a purchase or reservation.',
    capabilityIds: ['domains.check'],
  },
];

export function builderToolsFor(capabilityId: string): BuilderToolEntry[] {
  return BUILDER_TOOLS.filter((tool) => tool.capabilityIds.includes(capabilityId));
}
