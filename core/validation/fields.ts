// What every validator here shares: field paths in the `categories.allow[0]` style, plain-object
// tests and the patterns of ids, addresses, hashes and networks. The readers
// rejectUnknownKeys, has and integerInRange serve the builder's body check (core/builder).
import type { FieldError } from '../errors';

export type FieldErrors = FieldError[];

export const ROOT_FIELD = '(root)';

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function fieldPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

/** Every key not in `allowed` is an error: a typo in a limit must never silently mean "default". */
export function rejectUnknownKeys(
  value: Record<string, unknown>,
  allowed: ReadonlySet<string>,
  parent: string,
  errors: FieldErrors,
): void {
  for (const key of Object.keys(value)) {
    if (!allowed.has(key))
      errors.push({ field: fieldPath(parent, key), reason: 'is not a known field' });
  }
}

export function has(value: Record<string, unknown>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(value, key) && value[key] !== undefined;
}

export const ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;
export const HASH_PATTERN = /^0x[0-9a-fA-F]{64}$/;
export const AGENT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
export const CATEGORY_PATTERN = /^[a-z0-9.-]{1,64}$/;
export const NETWORK_PATTERN = /^eip155:[1-9][0-9]{0,31}$/;
export const UINT256_DECIMAL_PATTERN = /^(0|[1-9][0-9]{0,77})$/;

export function integerInRange(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max;
}
