// rank_options' optional `domains`: check results `[{domain, status}]` (as check_domains answers
// them) turned into the availability each name is ranked with. A domain belongs to the name that
// is its first label ("lumora.io" → lumora); one that belongs to no ranked name, a repeat, or a
// status outside AVAILABLE | TAKEN | UNKNOWN is refused by field.
import type { FieldError } from '../errors';
import { fieldPath, isPlainObject } from '../validation/fields';
import { DOMAIN_AVAILABILITY, type AvailabilityByName, type DomainStatus } from './rankOptions';

/** As many results as one check_domains call answers. */
export const RANK_DOMAINS_MAX = 50;
const DOMAIN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

export function readDomainResults(
  value: unknown,
  names: readonly string[],
  errors: FieldError[],
): AvailabilityByName {
  const byName = new Map<string, DomainStatus[]>(names.map((name) => [name, []]));
  if (!Array.isArray(value) || value.length > RANK_DOMAINS_MAX) {
    errors.push({
      field: 'domains',
      reason: `must be an array of at most ${RANK_DOMAINS_MAX} {domain, status} results`,
    });
    return byName;
  }
  const seen = new Map<string, number>();
  value.forEach((entry, index) => {
    const field = fieldPath('domains', index);
    const problem = entryProblem(entry, byName);
    if (problem !== null) errors.push({ field, reason: problem });
    else {
      const { domain, status } = entry as DomainStatus;
      if (seen.has(domain)) errors.push({ field, reason: `repeats domains[${seen.get(domain)}]` });
      else {
        seen.set(domain, index);
        byName.get(domain.split('.')[0])!.push({ domain, status });
      }
    }
  });
  return byName;
}

function entryProblem(entry: unknown, byName: ReadonlyMap<string, unknown>): string | null {
  if (
    !isPlainObject(entry) ||
    Object.keys(entry).some((key) => key !== 'domain' && key !== 'status')
  )
    return 'must be {domain, status}';
  const { domain, status } = entry;
  if (typeof domain !== 'string' || domain.length > 253 || !DOMAIN.test(domain))
    return 'domain must be a lowercase domain name (A-labels), e.g. "lumora.io"';
  if (!(DOMAIN_AVAILABILITY as readonly unknown[]).includes(status))
    return `status must be one of ${DOMAIN_AVAILABILITY.join(', ')}`;
  if (!byName.has(domain.split('.')[0])) return 'belongs to none of names (its first label)';
  return null;
}
