// One zod schema per kind of environment value (whole number, flag, URL, address, private key,
// hex secret). Each refuses with the exact message operators read after the variable's name;
// EnvReader adds the name and collects the problems. Inputs arrive trimmed and non-empty.
import { z } from 'zod';
import { getAddress, isAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { MIN_SECRET_BYTES, type Hex } from './sections';

/** A value quoted for a message, cut at 80 characters. Never used for secrets. */
export function show(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/** Our message for a failed check; the first failure ends the parse, so one problem per value. */
function says(message: (input: string) => string) {
  return { abort: true, error: (issue: { input?: unknown }) => message(String(issue.input)) };
}

/** Decimal digits only: "12abc", "1e3", "0x10", "-1" and "1.5" are refused, not truncated. */
export function wholeNumber(min: number, max: number) {
  return z
    .string()
    .regex(
      /^[0-9]+$/,
      says((value) => `${show(value)} is not a whole number`),
    )
    .refine(
      (value) => {
        const parsed = Number(value);
        return Number.isSafeInteger(parsed) && parsed >= min && parsed <= max;
      },
      says((value) => `${show(value)} is outside ${min}..${max}`),
    )
    .transform(Number);
}

export function oneOf<T extends string>(allowed: readonly T[]) {
  return z
    .string()
    .refine(
      (value): value is T => (allowed as readonly string[]).includes(value),
      says((value) => `${show(value)} is not one of ${allowed.join(', ')}`),
    )
    .transform((value) => value as T);
}

/** Compared lowercase: TRUE and True are true. */
export const flag = z
  .string()
  .transform((value) => value.toLowerCase())
  .pipe(oneOf(['1', '0', 'true', 'false'] as const))
  .transform((value) => value === '1' || value === 'true');

/** Trailing slashes are dropped, so `${url}/path` never doubles one. */
export function urlOf(protocols: readonly string[]) {
  return z
    .string()
    .refine(
      (value) => URL.canParse(value),
      says(() => 'is not a valid URL'),
    )
    .refine(
      (value) => protocols.includes(new URL(value).protocol),
      says((value) => `must use ${protocols.join(' or ')} (got ${new URL(value).protocol})`),
    )
    .transform((value) => value.replace(/\/+$/, ''));
}

/** Mixed case must be a correct EIP-55 checksum: a typo in one character is then caught. */
export const address = z
  .string()
  .regex(
    /^0x[0-9a-fA-F]{40}$/,
    says(() => 'must be 0x followed by 40 hex characters'),
  )
  .refine(
    (value) => isAddress(value, { strict: true }),
    says(
      () => 'has a wrong EIP-55 checksum (mixed case); check the address or write it in lowercase',
    ),
  )
  .transform((value) => getAddress(value));

function isPrivateKey(key: string): boolean {
  try {
    privateKeyToAccount(key as Hex);
    return true;
  } catch {
    return false;
  }
}

/** Never echoes the value: the messages name the variable only. */
export const privateKey = z
  .string()
  .transform((value) => (value.startsWith('0x') ? value : `0x${value}`).toLowerCase())
  .pipe(
    z
      .string()
      .regex(
        /^0x[0-9a-f]{64}$/,
        says(() => 'must be 32 bytes: 0x followed by 64 hex characters'),
      )
      .refine(
        isPrivateKey,
        says(() => 'is not a valid secp256k1 private key'),
      ),
  )
  .transform((value) => value as Hex);

/** Hex only (base64 would be ambiguous: every hex string is also valid base64). */
export const hexSecret = z
  .string()
  .regex(
    /^(?:[0-9a-fA-F]{2})+$/,
    says(() => 'must be hex (e.g. `openssl rand -hex 32`)'),
  )
  .transform((value) => Buffer.from(value, 'hex'))
  .refine(
    (bytes) => bytes.length >= MIN_SECRET_BYTES,
    says(
      () => `must be at least ${MIN_SECRET_BYTES} bytes (${MIN_SECRET_BYTES * 2} hex characters)`,
    ),
  );
