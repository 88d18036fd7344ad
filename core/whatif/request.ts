// The range and draft of a policy what-if (DECISIONS "Policy what-if"): `from` and `to` optional
// (default the 30 days before the caller's clock; `to` exclusive), at most 92 days apart
// (`400 RANGE_TOO_LONG`), `from < to`; the draft is a whole policy document, validated and
// normalised like any policy (`400 POLICY_RULES_INVALID`). Pure.
import { AppError } from '../errors';
import { validatePolicy, type NormalisedPolicyRules } from '../validation/policy';
import { parseIsoTimestamp } from '../validation/timestamp';

export const DEFAULT_RANGE_DAYS = 30;
export const MAX_RANGE_DAYS = 92;
const MS_PER_DAY = 86_400_000;

export interface WhatIfRange {
  /** Inclusive. */
  readonly from: Date;
  /** Exclusive. */
  readonly to: Date;
}

function instant(raw: unknown, field: 'from' | 'to'): number | null {
  if (raw === undefined || raw === null) return null;
  if (raw instanceof Date) return raw.getTime();
  const parsed = parseIsoTimestamp(raw);
  if (!parsed.ok)
    throw new AppError('REQUEST_INVALID', undefined, [{ field, reason: parsed.reason }]);
  return parsed.unixSeconds * 1000;
}

/** The range asked for, defaults filled in from `nowMs`. */
export function whatIfRange(rawFrom: unknown, rawTo: unknown, nowMs: number): WhatIfRange {
  const given = { from: instant(rawFrom, 'from'), to: instant(rawTo, 'to') };
  const to =
    given.to ?? (given.from === null ? nowMs : given.from + DEFAULT_RANGE_DAYS * MS_PER_DAY);
  const from = given.from ?? to - DEFAULT_RANGE_DAYS * MS_PER_DAY;
  if (from >= to)
    throw new AppError('REQUEST_INVALID', undefined, [
      { field: 'to', reason: 'must be after from' },
    ]);
  if (to - from > MAX_RANGE_DAYS * MS_PER_DAY)
    throw new AppError(
      'RANGE_TOO_LONG',
      `A what-if replays at most ${MAX_RANGE_DAYS} days; ask for a shorter range.`,
      [{ field: 'to', reason: `must be at most ${MAX_RANGE_DAYS} days after from` }],
    );
  return { from: new Date(from), to: new Date(to) };
}

/** The draft's normalised rules; it must keep the policy's owner. */
export function draftRules(raw: unknown, owner: string): NormalisedPolicyRules {
  const result = validatePolicy(raw);
  if (!result.ok)
    throw new AppError(
      'POLICY_RULES_INVALID',
      undefined,
      result.errors.map((e) => ({ ...e, field: `draft.${e.field}` })),
    );
  const { rules } = result;
  if (rules.owner !== owner.toLowerCase())
    throw new AppError('POLICY_RULES_INVALID', undefined, [
      { field: 'draft.owner', reason: 'must stay the policy’s owner' },
    ]);
  return rules;
}
