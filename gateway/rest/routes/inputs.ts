// Request readers more than one concept's routes share: a route that takes no body, and the
// policyId body field. Each refuses bad input with REQUEST_INVALID before any operation runs.
import { AppError } from '../../../core/errors';
import type { BodyField } from '../requestBodies';
import type { RestInput } from '../types';

export const POLICY_ID_FIELD: BodyField = { name: 'policyId', kind: 'policyId', required: true };

export function noInput(input: RestInput): Record<string, never> {
  if (
    input.body !== undefined &&
    input.body !== null &&
    typeof input.body === 'object' &&
    Object.keys(input.body).length > 0
  ) {
    throw new AppError('REQUEST_INVALID', 'This route takes no request body.');
  }
  return {};
}
