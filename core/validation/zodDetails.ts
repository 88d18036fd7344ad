// The one bridge from zod's issues to the `{field, reason}` details of our error bodies. Every
// schema here sets its own reason on each check, so zod's default messages never reach a caller;
// this file only names fields (`categories.allow[0]`) and orders the list.
import { z } from 'zod';
import type { FieldError } from '../errors';
import { fieldPath, isPlainObject, ROOT_FIELD } from './fields';

export const REQUIRED = 'is required';
export const UNKNOWN_FIELD = 'is not a known field';

type Issue = z.core.$ZodIssue;

function fieldOf(path: readonly PropertyKey[]): string {
  let field = '';
  for (const key of path) field = fieldPath(field, typeof key === 'number' ? key : String(key));
  return field === '' ? ROOT_FIELD : field;
}

function isUnder(path: readonly PropertyKey[], parent: readonly PropertyKey[]): boolean {
  return parent.every((key, index) => path[index] === key);
}

/**
 * zod reports a strict object's unknown keys after its fields; we report them first, so a typo
 * in a section heads that section's problems. Stable otherwise: zod's order is the schema's.
 */
function unknownKeysFirst(issues: readonly Issue[]): Issue[] {
  const ordered = [...issues];
  for (let index = 0; index < ordered.length; index += 1) {
    const issue = ordered[index]!;
    if (issue.code !== 'unrecognized_keys') continue;
    const first = ordered.findIndex((other) => isUnder(other.path, issue.path));
    if (first < index) {
      ordered.splice(index, 1);
      ordered.splice(first, 0, issue);
    }
  }
  return ordered;
}

/** One detail per problem, in the order the schema checks them; unknown keys one detail each. */
export function fieldDetails(issues: readonly Issue[]): FieldError[] {
  const details: FieldError[] = [];
  for (const issue of unknownKeysFirst(issues)) {
    if (issue.code === 'unrecognized_keys') {
      const parent = fieldOf(issue.path);
      for (const key of issue.keys) {
        const field = parent === ROOT_FIELD ? key : fieldPath(parent, key);
        details.push({ field, reason: UNKNOWN_FIELD });
      }
    } else {
      details.push({ field: fieldOf(issue.path), reason: issue.message });
    }
  }
  return details;
}

/** `reason` for a wrong value; "is required" where the value is absent and that is the problem. */
export function requiredOr(reason: string): { error: (issue: { input?: unknown }) => string } {
  return { error: (issue) => (issue.input === undefined ? REQUIRED : reason) };
}

/** A value that must be present, of any type: the checks after it give the reasons. */
export function present(): z.ZodType<unknown> {
  return z.unknown().nonoptional({ error: REQUIRED });
}

/**
 * A plain object (not an array, a class instance or null). Not `abort`ing, unlike z.custom's
 * default: an aborted issue would stop the cross-field rules of the enclosing object from running.
 */
export function plainObject(
  error: string | ((issue: { input?: unknown }) => string),
): z.ZodType<Record<string, unknown>> {
  return z.custom<Record<string, unknown>>(isPlainObject, { error, abort: false });
}
