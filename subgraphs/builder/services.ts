// The builder's services as a request sees them: the name model and default TLDs the process was
// given (kit BuilderServices), or none (no model, the DEFAULT_BUILDER_TLDS), and the RDAP client.
import type { RdapClient } from '../../platform/rdap';
import type { BuilderServices, SubgraphContext } from '../kit';
import { DEFAULT_BUILDER_TLDS } from './domains/request';

const NONE: BuilderServices = Object.freeze({ nameModel: null, defaultTlds: DEFAULT_BUILDER_TLDS });

export function builderServicesOf(ctx: Pick<SubgraphContext, 'builder'>): BuilderServices {
  return ctx.builder ?? NONE;
}

export function rdapOf(ctx: Pick<SubgraphContext, 'rdap'>): RdapClient | null {
  return ctx.rdap ?? null;
}
