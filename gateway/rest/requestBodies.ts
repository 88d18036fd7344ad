// How the route table reads requests: the JSON body as a flat object of named fields, each a
// string, an object or a policyId, and single-valued query parameters. Shape only: unknown fields,
// missing required ones and wrong JSON types are REQUEST_INVALID with one `{field, reason}` each,
// a missing policyId is POLICY_ID_REQUIRED; what the values mean is the subgraph's to judge.
import { AppError, type FieldError } from '../../core/errors';
import type { RestInput } from './types';

export type FieldKind = 'string' | 'object' | 'policyId';

export interface BodyField {
  readonly name: string;
  readonly required: boolean;
  /** Default 'string'. A policyId is a required string whose absence is POLICY_ID_REQUIRED. */
  readonly kind?: FieldKind;
}

function isAbsent(value: unknown, kind: FieldKind): boolean {
  return value === undefined || value === null || (kind === 'policyId' && value === '');
}

function hasKind(value: unknown, kind: FieldKind): boolean {
  if (kind === 'object')
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  return typeof value === 'string';
}

/** The named fields of the body; a request without a body is an empty one. */
export function bodyFields(
  input: RestInput,
  fields: readonly BodyField[],
): Record<string, unknown> {
  const body = input.body ?? {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('REQUEST_INVALID', 'The body must be a JSON object.');
  }
  const problems: FieldError[] = [];
  const known = new Set(fields.map((field) => field.name));
  for (const name of Object.keys(body))
    if (!known.has(name)) problems.push({ field: name, reason: 'unknown field' });
  const values: Record<string, unknown> = {};
  for (const field of fields) {
    const kind = field.kind ?? 'string';
    const value = (body as Record<string, unknown>)[field.name];
    if (isAbsent(value, kind)) {
      if (kind === 'policyId') throw new AppError('POLICY_ID_REQUIRED');
      if (field.required) problems.push({ field: field.name, reason: 'required' });
    } else if (!hasKind(value, kind)) {
      problems.push({
        field: field.name,
        reason: kind === 'object' ? 'must be a JSON object' : 'must be a string',
      });
    } else {
      values[field.name] = value;
    }
  }
  if (problems.length > 0)
    throw new AppError('REQUEST_INVALID', 'The request body is invalid.', problems);
  return values;
}

/** A body of string fields only. */
export function stringFields(
  input: RestInput,
  fields: readonly BodyField[],
): Record<string, string> {
  return bodyFields(
    input,
    fields.map((field) => ({ ...field, kind: 'string' })),
  ) as Record<string, string>;
}

/** `?name=`: absent (or empty) is null; given twice is REQUEST_INVALID. */
export function queryValue(input: RestInput, name: string): string | null {
  const value = input.query[name];
  if (value === undefined || value === '') return null;
  if (typeof value !== 'string')
    throw new AppError('REQUEST_INVALID', `Give ${name} at most once.`, [
      { field: name, reason: 'must be one value' },
    ]);
  return value;
}
