// The one rule for a builder name: a single DNS label (RFC 1035 LDH) so that `<name>.<tld>` is a
// domain the RDAP check can ask about. Shared by the fallback generator, the model answer filter,
// the ranking and the input validators, so no part of the launch pack accepts what another refuses.

export const BUILDER_NAME_MAX_CHARS = 63;

const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * True for 1-63 of a-z 0-9 and inner hyphens, without "--" in positions 3-4: RFC 5891 reserves
 * that for encoded labels (xn--), which are not names a person picks or reads.
 */
export function isBuilderName(value: unknown): value is string {
  return typeof value === 'string' && LDH_LABEL.test(value) && value.slice(2, 4) !== '--';
}

/**
 * A candidate as a model or a person writes it ("  Brightly ") in builder-name form, or null when
 * it is not one once trimmed and lowercased. Nothing else is rewritten: "bright ly" stays refused.
 */
export function toBuilderName(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > BUILDER_NAME_MAX_CHARS + 16) return null;
  const candidate = value.trim().toLowerCase();
  return isBuilderName(candidate) ? candidate : null;
}

/** The first occurrence of each valid name, in order, at most `max`; invalid entries are dropped. */
export function distinctBuilderNames(values: readonly unknown[], max: number): string[] {
  const seen = new Set<string>();
  for (const value of values) {
    if (seen.size >= max) break;
    const name = toBuilderName(value);
    if (name !== null) seen.add(name);
  }
  return [...seen];
}
