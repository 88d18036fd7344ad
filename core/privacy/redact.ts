// redactPaymentMetadata: strips personal data and secrets from the string values of a JSON document,
// recursively (object keys are kept): emails, phone numbers, API keys, bearer tokens, Luhn-valid
// card numbers and IBANs (mod-97 valid). Pure; `metadataHash = hashJson(redacted)`. Each match is
// replaced by a fixed marker naming what was removed, so two documents differing only in redacted
// data hash the same.
import type { Hex } from 'viem';
import { hashJson, type JsonValue } from '../canon/jcs';

export const REDACTION_MARKERS = {
  email: '[REDACTED:EMAIL]',
  phone: '[REDACTED:PHONE]',
  apiKey: '[REDACTED:API_KEY]',
  bearer: '[REDACTED:BEARER_TOKEN]',
  card: '[REDACTED:CARD]',
  iban: '[REDACTED:IBAN]',
} as const;

export interface RedactionResult {
  readonly redacted: JsonValue;
  readonly metadataHash: Hex;
}

/** Luhn checksum over the digits of `text` (separators ignored). */
export function luhnValid(text: string): boolean {
  const digits = text.replace(/[ -]/g, '');
  if (!/^[0-9]{13,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i += 1) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** ISO 13616 mod-97 check of an IBAN (spaces ignored, case-insensitive). */
export function ibanValid(text: string): boolean {
  const iban = text.replace(/ /g, '').toUpperCase();
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/.test(iban)) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= 'A' ? String(char.charCodeAt(0) - 55) : char;
    for (const digit of value) remainder = (remainder * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

const BEARER = /\bBearer\s+[A-Za-z0-9\-._~+/]+=*/gi;
const EMAIL =
  /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+/g;
// Vendor-prefixed keys (sk_live_…, pk_test_…, sk-…, AKIA…, ghp_…, xox?-…) and `api_key=…`-style pairs.
const API_KEY_PREFIXED =
  /\b(?:(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{8,}|sk-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,})/g;
const API_KEY_ASSIGNMENT =
  /\b((?:api[_-]?key|apikey|secret|access[_-]?token|token|x-api-key)\s*[:=]\s*)["']?[A-Za-z0-9\-._~+/]{8,}["']?/gi;
const IBAN_CANDIDATE = /\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}\b/gi;
const CARD_CANDIDATE = /\b[0-9](?:[ -]?[0-9]){12,18}\b/g;
// International or grouped national numbers: + and 7–15 digits, or 3-3-4 style groups.
const PHONE = /(?:\+[0-9][0-9 ().-]{6,18}[0-9]|\(?\b[0-9]{3}\)?[ .-][0-9]{3}[ .-][0-9]{4}\b)/g;

export function redactString(text: string): string {
  return text
    .replace(BEARER, REDACTION_MARKERS.bearer)
    .replace(EMAIL, REDACTION_MARKERS.email)
    .replace(API_KEY_PREFIXED, REDACTION_MARKERS.apiKey)
    .replace(API_KEY_ASSIGNMENT, (_match, prefix: string) => `${prefix}${REDACTION_MARKERS.apiKey}`)
    .replace(IBAN_CANDIDATE, (match) => (ibanValid(match) ? REDACTION_MARKERS.iban : match))
    .replace(CARD_CANDIDATE, (match) => (luhnValid(match) ? REDACTION_MARKERS.card : match))
    .replace(PHONE, (match) =>
      match.replace(/[^0-9]/g, '').length >= 7 ? REDACTION_MARKERS.phone : match,
    );
}

function redactValue(value: unknown, depth: number): JsonValue {
  if (depth > 64) throw new TypeError('metadata nests too deep');
  if (typeof value === 'string') return redactString(value);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  if (typeof value === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      // Defined, not assigned: a "__proto__" key stays an own key, as JSON.parse made it, instead
      // of replacing the copy's prototype (which lost the key and broke the answer).
      Object.defineProperty(out, key, {
        value: redactValue(item, depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  throw new TypeError('metadata must be JSON');
}

export function redactPaymentMetadata(metadata: unknown): RedactionResult {
  const redacted = redactValue(metadata, 0);
  return { redacted, metadataHash: hashJson(redacted) };
}
