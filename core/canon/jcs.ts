// RFC 8785 (JCS) canonical JSON and the project's one content hash, keccak256 over its UTF-8.
// Accepts only plain JSON values: non-finite numbers, bigint, undefined, functions, class
// instances and lone surrogates are refused rather than silently dropped or rewritten.
import canonicalize from 'canonicalize';
import type { Hex } from 'viem';
import { keccak256Hex } from './keccak';

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue =
  JsonPrimitive | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** Deep enough for any document we sign; deeper input is an attack, not data. */
export const MAX_JSON_DEPTH = 64;

export class CanonicalJsonError extends Error {
  readonly path: string;

  constructor(path: string, problem: string) {
    super(`${path === '' ? 'value' : path} ${problem}`);
    this.name = 'CanonicalJsonError';
    this.path = path;
  }
}

// Lone surrogates cannot be encoded as UTF-8, so two different strings would hash the same.
// The cheap test runs on every string; the exact one only on the rare string with a surrogate.
const ANY_SURROGATE = /[\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export const hasLoneSurrogate = (text: string): boolean =>
  ANY_SURROGATE.test(text) && LONE_SURROGATE.test(text);

// Paths are only built when a value is refused: the first pass runs with `path` null and
// bails out at the first problem; a second pass with paths then names it.
const NEEDS_PATH = Symbol('needs path');

function assertJson(value: unknown, path: string | null, depth: number): void {
  const fail = (problem: string): never => {
    if (path === null) throw NEEDS_PATH;
    throw new CanonicalJsonError(path, problem);
  };
  const child = (key: string | number): string | null => {
    if (path === null) return null;
    if (typeof key === 'number') return `${path}[${key}]`;
    return path === '' ? key : `${path}.${key}`;
  };
  if (depth > MAX_JSON_DEPTH) fail(`nests deeper than ${MAX_JSON_DEPTH}`);
  switch (typeof value) {
    case 'string':
      if (hasLoneSurrogate(value)) fail('contains a lone surrogate');
      return;
    case 'number':
      if (!Number.isFinite(value)) fail('is not a finite number');
      return;
    case 'boolean':
      return;
    case 'object': {
      if (value === null) return;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i += 1) assertJson(value[i], child(i), depth + 1);
        return;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) fail('is not a plain object');
      for (const key of Object.keys(value)) {
        if (hasLoneSurrogate(key)) fail('has a key with a lone surrogate');
        assertJson((value as Record<string, unknown>)[key], child(key), depth + 1);
      }
      return;
    }
    default:
      fail(`is a ${typeof value}, not a JSON value`);
  }
}

function assertJsonValue(value: unknown): void {
  try {
    assertJson(value, null, 0);
  } catch (error) {
    if (error !== NEEDS_PATH) throw error;
    assertJson(value, '', 0);
  }
}

/** The RFC 8785 serialisation of a JSON value; throws CanonicalJsonError on anything else. */
export function canonicalJson(value: unknown): string {
  assertJsonValue(value);
  const text = canonicalize(value);
  if (text === undefined) throw new CanonicalJsonError('', 'has no JSON form');
  return text;
}

/** `hashJson(v) = keccak256(utf8(JCS(v)))`, the hash of policies, items and receipts. */
export function hashJson(value: unknown): Hex {
  return keccak256Hex(canonicalJson(value));
}
