// The builder (launch pack) routes that rely on a catalog capability, and which one: the data
// behind Capability.builderTools, read from core/builder's BUILDER_ROUTES, the same list the
// gateway's REST route table is built from, so the two cannot disagree.
import { BUILDER_ROUTES, type BuilderRoute } from '../../core/builder';

export function builderToolsFor(capabilityId: string): BuilderRoute[] {
  return BUILDER_ROUTES.filter((route) => route.capabilityIds.includes(capabilityId));
}
