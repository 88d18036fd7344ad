// Domain names as RDAP queries them: lowercase A-labels (IDNA via url.domainToASCII), one trailing
// dot stripped, at least two LDH labels and a non-numeric TLD. Anything else is refused with a
// reason, before it can reach a URL: the host parser behind domainToASCII would drop "/x" or decode "%41".
import { domainToASCII } from 'node:url';

export const MAX_DOMAIN_NAME_OCTETS = 253;
export const MAX_LABEL_OCTETS = 63;
/** Raw input beyond this is refused before any parsing. */
export const MAX_DOMAIN_INPUT_CHARS = 1024;

const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// ASCII that may appear in a name before IDNA mapping; any other ASCII (/, %, :, @, space, _ …) is refused.
const ASCII_OUTSIDE_LDH = /[\u0000-\u002c\u002f\u003a-\u0040\u005b-\u0060\u007b-\u007f]/;

export class InvalidDomainNameError extends RangeError {
  constructor(readonly reason: string) {
    super(`invalid domain name: ${reason}`);
    this.name = 'InvalidDomainNameError';
  }
}

/** The lowercase A-label form of `input`, e.g. "München.Test." → "xn--mnchen-3ya.test". Throws InvalidDomainNameError. */
export function normaliseDomainName(input: unknown): string {
  if (typeof input !== 'string') throw new InvalidDomainNameError('not a string');
  if (input.length === 0 || input.length > MAX_DOMAIN_INPUT_CHARS) {
    throw new InvalidDomainNameError(`must be 1..${MAX_DOMAIN_INPUT_CHARS} characters`);
  }
  if (ASCII_OUTSIDE_LDH.test(input))
    throw new InvalidDomainNameError('only letters, digits, hyphens and dots are allowed');
  const ascii = domainToASCII(input);
  if (ascii === '') throw new InvalidDomainNameError('not a valid internationalised domain name');
  const name = ascii.endsWith('.') ? ascii.slice(0, -1) : ascii;
  if (name.length > MAX_DOMAIN_NAME_OCTETS)
    throw new InvalidDomainNameError(`longer than ${MAX_DOMAIN_NAME_OCTETS} octets`);
  const labels = name.split('.');
  if (labels.length < 2) throw new InvalidDomainNameError('needs a name and a top-level domain');
  for (const label of labels) checkLabel(label);
  if (/^[0-9]+$/.test(labels[labels.length - 1]))
    throw new InvalidDomainNameError('the top-level domain is numeric');
  return name;
}

function checkLabel(label: string): void {
  if (label.length === 0) throw new InvalidDomainNameError('has an empty label');
  if (label.length > MAX_LABEL_OCTETS)
    throw new InvalidDomainNameError(`has a label longer than ${MAX_LABEL_OCTETS} octets`);
  if (!LDH_LABEL.test(label))
    throw new InvalidDomainNameError('a label must be letters, digits and inner hyphens');
  // "ab--cd" is reserved for encodings (RFC 5891 §4.2.3.1); only valid xn-- labels get this far.
  if (label.slice(2, 4) === '--' && !label.startsWith('xn--')) {
    throw new InvalidDomainNameError('a label with "--" in positions 3-4 must be an xn-- A-label');
  }
}

/** Every suffix of a normalised name, longest first: "a.b.test" → ["a.b.test", "b.test", "test"]. */
export function suffixesOf(ldhName: string): string[] {
  const labels = ldhName.split('.');
  return labels.map((_label, index) => labels.slice(index).join('.'));
}
