// One domain's answer in check_domains and brand_pack, and the note every answer carries: what
// the registry said, which registry, when, and why when it could not say.
import type { DomainAvailability } from '../../../core/builder';

export const CHECK_NOTE =
  'Availability as each registry answered over RDAP at checkedAt: not a purchase or a reservation; register a domain with a registrar.';

export interface DomainCheck {
  readonly domain: string;
  /** The builder name the domain was made from, or null when the domain was given as is. */
  readonly name: string | null;
  readonly status: DomainAvailability;
  /** The registry URL asked, or null when no registry was asked. */
  readonly registry: string | null;
  /** ISO-8601 UTC of the registry's answer. */
  readonly checkedAt: string;
  /** True when the answer came from the short cache rather than a fresh lookup. */
  readonly cached: boolean;
  /** Why the status is UNKNOWN; set exactly then. */
  readonly reason?: string;
  readonly detail: string;
  readonly retryAfterSeconds?: number;
}

export interface DomainCheckResult {
  readonly results: readonly DomainCheck[];
  readonly note: string;
}
