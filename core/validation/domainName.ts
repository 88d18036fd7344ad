// A plain DNS name as the purchase path accepts it: at least two labels of letters, digits and
// hyphens (IDNs as punycode), any case, at most 253 characters. Pure.
const MAX_DOMAIN_LENGTH = 253;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A plain DNS name of at least two labels (letters, digits, hyphens; IDNs as punycode), any case. */
export function isDomainName(value: string): boolean {
  if (value.length === 0 || value.length > MAX_DOMAIN_LENGTH) return false;
  const labels = value.toLowerCase().split('.');
  return labels.length >= 2 && labels.every((label) => LABEL.test(label));
}
