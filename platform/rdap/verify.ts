// The service's own finding on a delivery, kept apart from what the merchant said (DECISIONS
// "Receipts"): domains.check is checked against the registry over RDAP; other capabilities have no
// independent source and say so. A failed or impossible check is `verified: false`, never a pass.
import { isCapabilityName } from '../../core/validation/intent';
import type { DomainLookup, RdapClient } from './lookupDomain';
import { InvalidDomainNameError } from './names';

/** The public receipt's `serviceVerified`, exactly these five fields. */
export interface ServiceVerified {
  readonly verified: boolean;
  readonly method: 'RDAP' | 'PROVIDER_ATTESTATION';
  /** The registry URL asked (RDAP), or who attested (PROVIDER_ATTESTATION). */
  readonly source: string;
  /** ISO-8601 UTC. */
  readonly checkedAt: string;
  readonly detail: string;
}

/** What the merchant said a domains.check found. */
export interface DomainsCheckClaim {
  readonly domain: string;
  readonly available: boolean;
}

/** CONFIRMED: the registry answered and agrees. CONTRADICTED: it answered and disagrees (→ manual review). UNVERIFIED: no usable answer. */
export type DeliveryFinding = 'CONFIRMED' | 'CONTRADICTED' | 'UNVERIFIED';

export interface DomainsCheckVerification {
  readonly serviceVerified: ServiceVerified;
  readonly finding: DeliveryFinding;
  /** The lookup behind the finding; null when the claim could not be looked up at all. */
  readonly lookup: DomainLookup | null;
}

export const DOMAINS_CHECK_CAPABILITY = 'domains.check';

export async function verifyDomainsCheck(
  claim: DomainsCheckClaim,
  rdap: Pick<RdapClient, 'lookupDomain' | 'bootstrap'>,
  now: () => Date = () => new Date(),
): Promise<DomainsCheckVerification> {
  const unverifiable = (detail: string): DomainsCheckVerification => ({
    serviceVerified: {
      verified: false,
      method: 'RDAP',
      source: rdap.bootstrap.source,
      checkedAt: now().toISOString(),
      detail: `not verified: ${detail}`,
    },
    finding: 'UNVERIFIED',
    lookup: null,
  });
  // The claim comes from a merchant's answer: check its shape rather than trust the type.
  if (typeof claim.available !== 'boolean')
    return unverifiable('the merchant did not say whether the name is available');
  let lookup: DomainLookup;
  try {
    lookup = await rdap.lookupDomain(claim.domain);
  } catch (error) {
    if (!(error instanceof InvalidDomainNameError)) throw error;
    return unverifiable(`the merchant's domain cannot be looked up (${error.reason})`);
  }
  const { source, checkedAt } = lookup;
  if (lookup.status === 'UNKNOWN') {
    const detail = `not verified: the RDAP lookup failed (${lookup.reason}): ${lookup.detail}`;
    return {
      serviceVerified: { verified: false, method: 'RDAP', source, checkedAt, detail },
      finding: 'UNVERIFIED',
      lookup,
    };
  }
  const registryAvailable = lookup.status === 'NOT_REGISTERED';
  const merchantSaid = `the merchant said ${lookup.domain} is ${claim.available ? 'available' : 'taken'}`;
  if (registryAvailable === claim.available) {
    const detail = `the registry agrees with the merchant (${merchantSaid}): ${lookup.detail}`;
    return {
      serviceVerified: { verified: true, method: 'RDAP', source, checkedAt, detail },
      finding: 'CONFIRMED',
      lookup,
    };
  }
  const detail = `the registry contradicts the merchant (${merchantSaid}): ${lookup.detail}`;
  return {
    serviceVerified: { verified: false, method: 'RDAP', source, checkedAt, detail },
    finding: 'CONTRADICTED',
    lookup,
  };
}

/**
 * For every capability but domains.check: nothing independent was checked, and the answer says so.
 * `attestedBy` names the provider whose word it is (its id or URL).
 */
export function providerAttestationOnly(
  input: { capability: string; attestedBy: string },
  now: () => Date = () => new Date(),
): ServiceVerified {
  const { capability, attestedBy } = input;
  // The grammar the request validators judge by before any 402: a name they let through is never refused here.
  if (!isCapabilityName(capability))
    throw new RangeError('capability must be a capability name such as "domains.check"');
  if (capability === DOMAINS_CHECK_CAPABILITY)
    throw new RangeError(
      'domains.check is verified over RDAP (verifyDomainsCheck), not by provider attestation',
    );
  if (typeof attestedBy !== 'string' || attestedBy.length === 0 || attestedBy.length > 2048)
    throw new RangeError('attestedBy must be 1..2048 characters');
  return {
    verified: false,
    method: 'PROVIDER_ATTESTATION',
    source: attestedBy,
    checkedAt: now().toISOString(),
    detail: `not independently verified: ${capability} has no source other than the provider; this rests on the provider's attestation alone`,
  };
}
