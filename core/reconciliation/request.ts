// The body of POST /reconcile_agent_spend and the arguments of the analyst `reconciliation` query
// (DECISIONS "Wave-2 route shapes"): `{policyId, from, to, agentId?}`, ISO-8601 bounds with an
// explicit UTC offset, from < to, at most MAX_PERIOD_DAYS apart. Every problem is one
// `{field, reason}` of a 400 REQUEST_INVALID, found before any payment. Pure.
import { AppError, type FieldError } from '../errors';
import { AGENT_ID_PATTERN, isPlainObject, UINT256_DECIMAL_PATTERN } from '../validation/fields';
import { parseIsoTimestamp } from '../validation/timestamp';

/** A quarter: long enough for a quarterly close, short enough to bound the chain scan. */
export const MAX_PERIOD_DAYS = 92;
const MAX_PERIOD_SECONDS = MAX_PERIOD_DAYS * 86_400;
const FIELDS = new Set(['policyId', 'from', 'to', 'agentId']);

export interface ReconcileRequest {
  readonly policyId: string;
  /** Inclusive. */
  readonly from: Date;
  /** Exclusive. */
  readonly to: Date;
  readonly agentId: string | null;
}

function boundOf(raw: unknown, field: 'from' | 'to', errors: FieldError[]): number | null {
  if (raw === undefined || raw === null) {
    errors.push({ field, reason: 'is required' });
    return null;
  }
  const parsed = parseIsoTimestamp(raw);
  if (!parsed.ok) {
    errors.push({ field, reason: parsed.reason });
    return null;
  }
  return parsed.unixSeconds;
}

function policyIdErrors(raw: unknown): FieldError[] {
  if (typeof raw !== 'string' || !UINT256_DECIMAL_PATTERN.test(raw))
    return [{ field: 'policyId', reason: 'must be a decimal uint256 string' }];
  return [];
}

function agentIdErrors(raw: unknown): FieldError[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw !== 'string' || !AGENT_ID_PATTERN.test(raw))
    return [{ field: 'agentId', reason: 'must be 1 to 128 of [A-Za-z0-9._:-]' }];
  return [];
}

function periodErrors(from: number | null, to: number | null): FieldError[] {
  if (from === null || to === null) return [];
  if (from >= to) return [{ field: 'to', reason: 'must be after from' }];
  if (to - from > MAX_PERIOD_SECONDS)
    return [{ field: 'to', reason: `must be at most ${MAX_PERIOD_DAYS} days after from` }];
  return [];
}

/** The request, or AppError(REQUEST_INVALID) listing every field at fault. */
export function parseReconcileRequest(raw: unknown): ReconcileRequest {
  if (!isPlainObject(raw)) throw new AppError('REQUEST_INVALID', 'The body must be a JSON object.');
  const errors: FieldError[] = Object.keys(raw)
    .filter((key) => !FIELDS.has(key))
    .map((field) => ({ field, reason: 'is not a known field' }));
  errors.push(...policyIdErrors(raw.policyId));
  const from = boundOf(raw.from, 'from', errors);
  const to = boundOf(raw.to, 'to', errors);
  errors.push(...periodErrors(from, to), ...agentIdErrors(raw.agentId));
  if (errors.length > 0 || from === null || to === null)
    throw new AppError('REQUEST_INVALID', 'The reconciliation request is invalid.', errors);
  return {
    policyId: raw.policyId as string,
    from: new Date(from * 1000),
    to: new Date(to * 1000),
    agentId: typeof raw.agentId === 'string' ? raw.agentId : null,
  };
}
