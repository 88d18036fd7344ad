// Domain names as the devnet domains merchant reads them, and the devnet's registered names: a fixed
// list under the reserved `.test` TLD (RFC 2606) that the merchant answers "taken" for and the devnet
// RDAP registry serves, so both peers agree unless a fault switch makes the merchant lie.

import { DEVNET_REGISTERED_NAMES } from '../../rdap/names';

/** Registered on the devnet (the RDAP registry's one list); every other well-formed name is available. */
export const DEVNET_REGISTERED_DOMAINS: readonly string[] = Object.freeze([
  ...DEVNET_REGISTERED_NAMES,
]);

const MAX_DOMAIN_LENGTH = 253;
const LABEL_PATTERN = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * The lowercase name when `value` is a plain DNS name of at least two labels (letters, digits,
 * hyphens; no leading or trailing hyphen, no trailing dot); null otherwise. IDNs arrive as punycode.
 */
export function normaliseDomain(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_DOMAIN_LENGTH)
    return null;
  const name = value.toLowerCase();
  const labels = name.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL_PATTERN.test(label))) return null;
  return name;
}

/** The registered set, normalised; a malformed entry is a programming error and throws. */
export function registeredSet(names: Iterable<string>): ReadonlySet<string> {
  const set = new Set<string>();
  for (const entry of names) {
    const name = normaliseDomain(entry);
    if (name === null)
      throw new RangeError(`registered domain ${JSON.stringify(entry)} is not a domain name`);
    set.add(name);
  }
  return set;
}
