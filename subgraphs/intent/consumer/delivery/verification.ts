// The service's own check of a delivery, on what a merchant said it delivered: domains.check is
// asked of the registry over RDAP (platform/rdap, the registry the RFC 9224 bootstrap names, never
// the merchant), every other capability rests on the provider's attestation and is labelled so.
// The answer is the receipt's `serviceVerified`, built beside the merchant's word and never from it:
// a claim the registry contradicts, or one that cannot be checked, is `verified: false`.
import {
  DOMAINS_CHECK_CAPABILITY,
  type DeliveryFinding,
  InvalidDomainNameError,
  normaliseDomainName,
  providerAttestationOnly,
  type RdapClient,
  type ServiceVerified,
  verifyDomainsCheck,
} from '../../../../platform/rdap';

/**
 * CONFIRMED, CONTRADICTED, UNVERIFIED: domains.check against the registry. ATTESTED_ONLY: a
 * capability with no source but the provider (verified: false, method PROVIDER_ATTESTATION).
 * REGISTRY_ONLY: the merchant was paid and delivered nothing (its answer was lost), and the
 * registry answered the question itself (verified: false: there was no delivery to verify).
 */
export type DeliveryOutcome = DeliveryFinding | 'ATTESTED_ONLY' | 'REGISTRY_ONLY';

export interface DeliveryCheck {
  readonly serviceVerified: ServiceVerified;
  readonly outcome: DeliveryOutcome;
}

/** What was bought and what the merchant said about it. */
export interface DeliverySubject {
  readonly capability: string;
  readonly params: Readonly<Record<string, unknown>>;
  /** The merchant's word: `{fields: {domain, available, …}, …}` for domains.check. */
  readonly providerAttested: Readonly<Record<string, unknown>> | null;
  /** Who attested (the catalog provider id, or the caller's label), for PROVIDER_ATTESTATION. */
  readonly attestedBy: string;
  /**
   * A purchase the merchant was paid for without answering (resolved PAID from the chain): for
   * domains.check the registry is asked about `params.domain` in its place.
   */
  readonly paidWithoutAnswer?: boolean;
}

/** The source named when no registry could be asked at all. */
export const NO_RDAP_SOURCE = 'none: no RDAP bootstrap is configured on this instance';

function unverified(source: string, now: () => Date, detail: string): DeliveryCheck {
  return {
    serviceVerified: {
      verified: false,
      method: 'RDAP',
      source,
      checkedAt: now().toISOString(),
      detail: `not verified: ${detail}`,
    },
    outcome: 'UNVERIFIED',
  };
}

function sameName(a: string, b: string): boolean | null {
  try {
    return normaliseDomainName(a) === normaliseDomainName(b);
  } catch (error) {
    if (error instanceof InvalidDomainNameError) return null;
    throw error;
  }
}

/**
 * domains.check paid with no merchant answer at all (a payment resolved PAID from the chain): the
 * registry is asked about the name the consumer asked about. Its answer completes the purchase,
 * labelled as the registry's and not a delivery; no answer leaves it UNVERIFIED (then a human).
 */
async function askRegistryInstead(
  subject: DeliverySubject,
  rdap: RdapClient | null,
  now: () => Date,
): Promise<DeliveryCheck> {
  const source = rdap?.bootstrap.source ?? NO_RDAP_SOURCE;
  const asked = subject.params.domain;
  const nothing = 'the merchant was paid and delivered no answer';
  if (typeof asked !== 'string') return unverified(source, now, `${nothing}; no name to ask about`);
  if (rdap === null)
    return unverified(source, now, `${nothing}; no RDAP registry is configured on this instance`);
  let lookup;
  try {
    lookup = await rdap.lookupDomain(asked);
  } catch (error) {
    if (!(error instanceof InvalidDomainNameError)) throw error;
    return unverified(source, now, `${nothing}; ${asked} cannot be looked up (${error.reason})`);
  }
  if (lookup.status === 'UNKNOWN')
    return unverified(
      lookup.source,
      now,
      `${nothing}; the RDAP lookup failed (${lookup.reason}): ${lookup.detail}`,
    );
  const answer = lookup.status === 'NOT_REGISTERED' ? 'available' : 'taken';
  return {
    serviceVerified: {
      verified: false,
      method: 'RDAP',
      source: lookup.source,
      checkedAt: lookup.checkedAt,
      detail: `not verified: ${nothing}; the registry answers instead: ${lookup.domain} is ${answer} (${lookup.detail})`,
    },
    outcome: 'REGISTRY_ONLY',
  };
}

async function checkDomainsCheck(
  subject: DeliverySubject,
  rdap: RdapClient | null,
  now: () => Date,
): Promise<DeliveryCheck> {
  if (subject.paidWithoutAnswer === true) return askRegistryInstead(subject, rdap, now);
  const source = rdap?.bootstrap.source ?? NO_RDAP_SOURCE;
  const fields = subject.providerAttested?.fields;
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
    return unverified(source, now, 'the merchant gave no {domain, available} to check');
  const { domain, available } = fields as { domain?: unknown; available?: unknown };
  if (typeof domain !== 'string' || typeof available !== 'boolean')
    return unverified(source, now, 'the merchant gave no {domain, available} to check');
  const asked = subject.params.domain;
  if (typeof asked === 'string' && sameName(asked, domain) === false) {
    const detail = `the merchant answered for ${domain}, but ${asked} was asked about`;
    const check = unverified(source, now, detail);
    return {
      serviceVerified: {
        ...check.serviceVerified,
        detail: `the merchant contradicts the purchase: ${detail}`,
      },
      outcome: 'CONTRADICTED',
    };
  }
  if (rdap === null)
    return unverified(source, now, 'no RDAP registry is configured on this instance');
  const verification = await verifyDomainsCheck({ domain, available }, rdap, now);
  return { serviceVerified: verification.serviceVerified, outcome: verification.finding };
}

/** Checks one delivery now; never throws for a registry that fails (that is UNVERIFIED). */
export async function checkDelivery(
  subject: DeliverySubject,
  rdap: RdapClient | null,
  now: () => Date = () => new Date(),
): Promise<DeliveryCheck> {
  if (subject.capability === DOMAINS_CHECK_CAPABILITY) return checkDomainsCheck(subject, rdap, now);
  return {
    serviceVerified: providerAttestationOnly(
      { capability: subject.capability, attestedBy: subject.attestedBy },
      now,
    ),
    outcome: 'ATTESTED_ONLY',
  };
}
