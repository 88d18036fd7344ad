// The body of POST /verify_delivery (DECISIONS "Wave-2 route shapes"), checked before any payment:
// either `{intentId}` (a consumer intent the caller may read) or `{capability, params,
// providerAttested}` (an agent that bought elsewhere brings the merchant's word to be checked).
// For domains.check the claim must name the domain and say whether it is available; the params
// name the domain asked about. Every problem is one `{field, reason}` of a 400 REQUEST_INVALID. Pure.
import { z } from 'zod';
import { isConsumerIntentId } from '../canon/id-shapes';
import { AppError } from '../errors';
import { CAPABILITY_MAX_CHARS, CAPABILITY_PATTERN } from './intent';
import { isDomainName } from './domainName';
import { fieldDetails, requiredOr } from './zodDetails';

export const DOMAINS_CHECK = 'domains.check';

export type VerifyDeliveryRequest =
  | { readonly kind: 'intent'; readonly intentId: string }
  | {
      readonly kind: 'claim';
      readonly capability: string;
      readonly params: Record<string, unknown>;
      readonly providerAttested: Record<string, unknown>;
    };

const DOMAIN_REASON = 'must be a domain name such as example.test';
const domainName = z
  .string(requiredOr(DOMAIN_REASON))
  .refine(isDomainName, { error: DOMAIN_REASON })
  .transform((domain) => domain.toLowerCase());

const intentBody = z.strictObject({
  intentId: z
    .string(requiredOr('must be a consumer intent id (ci_ + 24 hex)'))
    .refine(isConsumerIntentId, { error: 'must be a consumer intent id (ci_ + 24 hex)' }),
});

const claimBody = z.strictObject({
  capability: z
    .string(requiredOr('must be a capability id such as domains.check'))
    .max(CAPABILITY_MAX_CHARS, { error: `must be at most ${CAPABILITY_MAX_CHARS} characters` })
    .regex(CAPABILITY_PATTERN, { error: 'must be a capability id such as domains.check' }),
  params: z.record(z.string(), z.unknown(), requiredOr('must be a JSON object')),
  providerAttested: z.record(z.string(), z.unknown(), requiredOr('must be a JSON object')),
});

/** domains.check: the params name the domain; the merchant's fields name it and say if it is available. */
const domainsCheckParams = z.strictObject({ domain: domainName });
const domainsCheckAttested = z.looseObject({
  fields: z.looseObject(
    {
      domain: domainName,
      available: z.boolean(requiredOr('must be true or false')),
    },
    requiredOr('must be a JSON object with domain and available'),
  ),
});

function invalid(issues: Parameters<typeof fieldDetails>[0], prefix = ''): AppError {
  const details = fieldDetails(issues).map((detail) => ({
    field: prefix === '' ? detail.field : `${prefix}.${detail.field}`,
    reason: detail.reason,
  }));
  return new AppError('REQUEST_INVALID', 'The verify_delivery request is invalid.', details);
}

export function parseVerifyDeliveryRequest(raw: unknown): VerifyDeliveryRequest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new AppError('REQUEST_INVALID', 'The body must be a JSON object.');
  if (Object.hasOwn(raw, 'intentId')) {
    const parsed = intentBody.safeParse(raw);
    if (!parsed.success) throw invalid(parsed.error.issues);
    return { kind: 'intent', intentId: parsed.data.intentId };
  }
  const parsed = claimBody.safeParse(raw);
  if (!parsed.success) throw invalid(parsed.error.issues);
  const { capability, params, providerAttested } = parsed.data;
  if (capability !== DOMAINS_CHECK) return { kind: 'claim', capability, params, providerAttested };
  const checkedParams = domainsCheckParams.safeParse(params);
  if (!checkedParams.success) throw invalid(checkedParams.error.issues, 'params');
  const checkedClaim = domainsCheckAttested.safeParse(providerAttested);
  if (!checkedClaim.success) throw invalid(checkedClaim.error.issues, 'providerAttested');
  return {
    kind: 'claim',
    capability,
    params: checkedParams.data,
    providerAttested: checkedClaim.data,
  };
}
