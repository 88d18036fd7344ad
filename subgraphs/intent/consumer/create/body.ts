// The body of POST /consumer/intents (and createConsumerIntent's input): `{capability, params,
// idempotencyKey?}`, checked with zod before anything is looked up; a capability the service can
// buy also has its params checked (merchantRoutes.ts). Every problem is one `{field, reason}` of
// a 400 REQUEST_INVALID.
import { z } from 'zod';
import { AppError } from '../../../../core/errors';
import { CAPABILITY_PATTERN } from '../../../../core/validation/intent';
import { fieldDetails, requiredOr } from '../../../../core/validation/zodDetails';
import { merchantRouteOf } from './merchantRoutes';

export interface ConsumerIntentRequest {
  readonly capability: string;
  readonly params: Record<string, unknown>;
  readonly idempotencyKey: string | null;
}

const bodySchema = z.strictObject({
  capability: z
    .string(requiredOr('must be a capability id such as domains.check'))
    .max(64, { error: 'must be at most 64 characters' })
    .regex(CAPABILITY_PATTERN, { error: 'must be a capability id such as domains.check' }),
  params: z.record(z.string(), z.unknown(), requiredOr('must be a JSON object')),
  idempotencyKey: z
    .string({ error: 'must be a string' })
    .min(1, { error: 'must be 1–128 characters' })
    .max(128, { error: 'must be 1–128 characters' })
    .nullish(),
});

function invalid(issues: Parameters<typeof fieldDetails>[0], prefix = ''): AppError {
  const details = fieldDetails(issues).map((detail) => ({
    field: prefix === '' ? detail.field : `${prefix}.${detail.field}`,
    reason: detail.reason,
  }));
  return new AppError('REQUEST_INVALID', 'The consumer intent request is invalid.', details);
}

export function parseConsumerIntentRequest(raw: unknown): ConsumerIntentRequest {
  const parsed = bodySchema.safeParse(raw);
  if (!parsed.success) throw invalid(parsed.error.issues);
  const { capability, params, idempotencyKey } = parsed.data;
  const route = merchantRouteOf(capability);
  if (route === null) return { capability, params, idempotencyKey: idempotencyKey ?? null };
  const checked = route.params.safeParse(params);
  if (!checked.success) throw invalid(checked.error.issues, 'params');
  return { capability, params: checked.data, idempotencyKey: idempotencyKey ?? null };
}
