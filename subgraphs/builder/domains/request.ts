// check_domains' input, `{domains}` or `{names, tlds?}`, read into the list of domains to ask:
// lowercase A-labels, distinct, at most MAX_DOMAINS_PER_CHECK after names × TLDs. Every problem is
// a `{field, reason}`, all at once; the route answers REQUEST_INVALID (400) with the list.
import { isBuilderName, type BuilderValidation } from '../../../core/builder';
import type { FieldError } from '../../../core/errors';
import {
  fieldPath,
  has,
  isPlainObject,
  rejectUnknownKeys,
  ROOT_FIELD,
} from '../../../core/validation/fields';
import { InvalidDomainNameError, normaliseDomainName } from '../../../platform/rdap';

/** Domains asked in one call; more is a 400 (DECISIONS "Wave-2 route shapes"). */
export const MAX_DOMAINS_PER_CHECK = 50;
/** TLDs one `{names, tlds}` request may name. */
export const MAX_TLDS_PER_CHECK = 10;
/** Checked for `{names}` without `tlds` when the deployment names none (BUILDER_DEFAULT_TLDS). */
export const DEFAULT_BUILDER_TLDS: readonly string[] = ['com', 'io', 'ai'];

export interface DomainToCheck {
  readonly domain: string;
  /** The builder name it was made from (`{names}`), or null for a domain given as is. */
  readonly name: string | null;
}

export interface CheckDomainsInput {
  readonly domains: readonly DomainToCheck[];
}

/** Stands in for the deployment's default TLDs where they are not known (never asked). */
const UNKNOWN_DEFAULT_TLD = 'default';
const TLD = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Absent and null both mean "not given". */
function given(body: Record<string, unknown>, key: string): boolean {
  return has(body, key) && body[key] !== null;
}

/**
 * `defaultTlds` null: the deployment's default TLDs are not known here (the gateway's check before
 * the operation); `{names}` without tlds then counts one domain per name, and the subgraph, which
 * knows them, checks the product again.
 */
export function validateCheckDomainsInput(
  raw: unknown,
  defaultTlds: readonly string[] | null,
): BuilderValidation<CheckDomainsInput> {
  if (!isPlainObject(raw))
    return { ok: false, errors: [{ field: ROOT_FIELD, reason: 'must be a JSON object' }] };
  const errors: FieldError[] = [];
  rejectUnknownKeys(raw, new Set(['names', 'domains', 'tlds']), '', errors);
  const byNames = given(raw, 'names');
  const byDomains = given(raw, 'domains');
  let domains: DomainToCheck[] = [];
  if (byNames && byDomains)
    errors.push({ field: 'domains', reason: 'give either names (with tlds) or domains, not both' });
  else if (byDomains) {
    domains = readDomains(raw.domains, errors);
    if (given(raw, 'tlds')) errors.push({ field: 'tlds', reason: 'only with names' });
  } else if (byNames) {
    const names = readList(
      raw.names,
      'names',
      MAX_DOMAINS_PER_CHECK,
      errors,
      isBuilderName,
      NAME_REASON,
    );
    const tlds = given(raw, 'tlds')
      ? readList(raw.tlds, 'tlds', MAX_TLDS_PER_CHECK, errors, isTld, TLD_REASON)
      : [...(defaultTlds ?? [UNKNOWN_DEFAULT_TLD])];
    domains = names.flatMap((name) => tlds.map((tld) => ({ domain: `${name}.${tld}`, name })));
    if (domains.length > MAX_DOMAINS_PER_CHECK)
      errors.push({
        field: 'names',
        reason: `${names.length} names × ${tlds.length} TLDs make ${domains.length} domains; at most ${MAX_DOMAINS_PER_CHECK} per call`,
      });
  } else errors.push({ field: 'names', reason: 'required (or domains)' });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: { domains } };
}

const NAME_REASON = 'must be a builder name (1-63 of a-z, 0-9 and inner hyphens)';
const TLD_REASON = 'must be a top-level domain label without a dot, e.g. "com"';

function isTld(value: unknown): value is string {
  return typeof value === 'string' && TLD.test(value) && !/^[0-9]+$/.test(value);
}

/** 1..max distinct entries each passing `accepts`; the valid ones, errors for the rest. */
function readList(
  value: unknown,
  field: string,
  max: number,
  errors: FieldError[],
  accepts: (entry: unknown) => entry is string,
  reason: string,
): string[] {
  if (!Array.isArray(value)) {
    errors.push({ field, reason: 'must be an array of strings' });
    return [];
  }
  if (value.length < 1 || value.length > max) {
    errors.push({ field, reason: `must hold 1-${max} entries` });
    return [];
  }
  const seen = new Map<string, number>();
  value.forEach((entry, index) => {
    if (!accepts(entry)) errors.push({ field: fieldPath(field, index), reason });
    else if (seen.has(entry))
      errors.push({
        field: fieldPath(field, index),
        reason: `repeats ${field}[${seen.get(entry)}]`,
      });
    else seen.set(entry, index);
  });
  return [...seen.keys()];
}

function readDomains(value: unknown, errors: FieldError[]): DomainToCheck[] {
  if (!Array.isArray(value)) {
    errors.push({ field: 'domains', reason: 'must be an array of strings' });
    return [];
  }
  if (value.length < 1 || value.length > MAX_DOMAINS_PER_CHECK) {
    errors.push({ field: 'domains', reason: `must hold 1-${MAX_DOMAINS_PER_CHECK} domains` });
    return [];
  }
  const seen = new Map<string, number>();
  value.forEach((entry, index) => {
    const field = fieldPath('domains', index);
    try {
      const domain = normaliseDomainName(entry);
      if (seen.has(domain)) errors.push({ field, reason: `repeats domains[${seen.get(domain)}]` });
      else seen.set(domain, index);
    } catch (error) {
      if (!(error instanceof InvalidDomainNameError)) throw error;
      errors.push({ field, reason: `not a domain name: ${error.reason}` });
    }
  });
  return [...seen.keys()].map((domain) => ({ domain, name: null }));
}
