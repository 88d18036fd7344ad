// The boundary check on every parsed request value: JSON that Node parses but the rest of the
// service cannot carry. Lone surrogates (no UTF-8 form, so no canonical hash), NUL (PostgreSQL text
// cannot hold it), numbers beyond IEEE 754 (`1e400` parses to Infinity) and nesting deeper than
// MAX_WIRE_JSON_DEPTH are refused with the path of the first offence. Iterative: no recursion limit.
import { hasLoneSurrogate } from '../canon/jcs';
import type { FieldError } from '../errors';
import { fieldPath, ROOT_FIELD } from './fields';

/** Objects and arrays nested inside one another; the canonical form (JCS) refuses past 64. */
export const MAX_WIRE_JSON_DEPTH = 32;

function stringProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'contains a NUL character';
  if (hasLoneSurrogate(text)) return 'contains a lone surrogate (not encodable as UTF-8)';
  return null;
}

interface Pending {
  readonly value: unknown;
  readonly path: string;
  /** Containers around this value. */
  readonly depth: number;
}

/**
 * The first problem in `value` (a JSON.parse result, or a parsed query), or null when it is fine.
 * `prefix` names where the value came from in the reported field (e.g. `query`); '' for a body.
 */
export function wireJsonProblem(value: unknown, prefix = ''): FieldError | null {
  const pending: Pending[] = [{ value, path: prefix, depth: 0 }];
  const problem = (path: string, reason: string): FieldError => ({
    field: path === '' ? ROOT_FIELD : path,
    reason,
  });
  while (pending.length > 0) {
    const { value: current, path, depth } = pending.pop()!;
    if (typeof current === 'string') {
      const reason = stringProblem(current);
      if (reason !== null) return problem(path, reason);
    } else if (typeof current === 'number') {
      if (!Number.isFinite(current)) return problem(path, 'is not a finite number');
    } else if (typeof current === 'object' && current !== null) {
      if (depth + 1 > MAX_WIRE_JSON_DEPTH)
        return problem(path, `nests deeper than ${MAX_WIRE_JSON_DEPTH} levels`);
      if (Array.isArray(current)) {
        for (let index = current.length - 1; index >= 0; index -= 1) {
          pending.push({ value: current[index], path: fieldPath(path, index), depth: depth + 1 });
        }
      } else {
        const keys = Object.keys(current);
        for (let index = keys.length - 1; index >= 0; index -= 1) {
          const key = keys[index]!;
          const reason = stringProblem(key);
          if (reason !== null) return problem(path, `has a key that ${reason}`);
          pending.push({
            value: (current as Record<string, unknown>)[key],
            path: fieldPath(path, key),
            depth: depth + 1,
          });
        }
      }
    }
  }
  return null;
}
