// RDAP: is a domain registered, per its registry (RFC 9224 bootstrap, RFC 9083 answers), and the
// service's own delivery finding built on it. Shared by the delivery verifier and the builder tools.
export {
  BootstrapFormatError,
  bootstrapTtlMs,
  findRdapBaseUrl,
  parseDnsBootstrap,
  type DnsBootstrap,
} from './bootstrap';
export { BootstrapCache, BootstrapUnavailableError } from './bootstrapCache';
export * from './limits';
export {
  createRdapClient,
  type DomainLookup,
  type DomainRegistration,
  type RdapClient,
  type RdapClientOptions,
  type RdapFailureReason,
} from './lookupDomain';
export { InvalidDomainNameError, normaliseDomainName } from './names';
export {
  DOMAINS_CHECK_CAPABILITY,
  providerAttestationOnly,
  verifyDomainsCheck,
  type DeliveryFinding,
  type DomainsCheckClaim,
  type DomainsCheckVerification,
  type ServiceVerified,
} from './verify';
