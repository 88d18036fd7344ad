// The builder subgraph's public surface for the gateway: check_domains' input reader (the gateway
// runs it before the operation, as it runs core/builder's validators for the other routes). The
// Apollo module is subgraph.ts, which subgraphs/registry.ts loads.
export {
  DEFAULT_BUILDER_TLDS,
  MAX_DOMAINS_PER_CHECK,
  MAX_TLDS_PER_CHECK,
  validateCheckDomainsInput,
  type CheckDomainsInput,
  type DomainToCheck,
} from './domains/request';
