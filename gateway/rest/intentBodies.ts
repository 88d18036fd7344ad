// Request bodies of the agent tools that carry a spend intent: `{policyId, intent}` or
// `{policyId, intentHash}`. The intent is checked here with the same core validator the intent
// subgraph runs (so a malformed paid call is refused before payment): INTENT_MALFORMED (per field)
// before POLICY_ID_REQUIRED, exactly as DECISIONS orders them.
import { AppError, type FieldError } from '../../core/errors';
import { spendIntentErrors } from '../../core/validation/intent';
import type { RestInput } from './types';

function plainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function intentBody(
  input: RestInput,
  options: { allowHash: boolean },
): Record<string, unknown> {
  const body = input.body ?? {};
  if (!plainObject(body)) throw new AppError('REQUEST_INVALID', 'The body must be a JSON object.');
  const known = new Set(['policyId', 'intent', ...(options.allowHash ? ['intentHash'] : [])]);
  const problems: FieldError[] = [];
  for (const name of Object.keys(body))
    if (!known.has(name)) problems.push({ field: name, reason: 'unknown field' });
  const { policyId, intent, intentHash } = body;
  if (policyId !== undefined && policyId !== null && typeof policyId !== 'string')
    problems.push({ field: 'policyId', reason: 'must be a string' });
  if (
    options.allowHash &&
    intentHash !== undefined &&
    intentHash !== null &&
    typeof intentHash !== 'string'
  ) {
    problems.push({ field: 'intentHash', reason: 'must be a string' });
  }
  const hasIntent = intent !== undefined && intent !== null;
  const hasHash = options.allowHash && typeof intentHash === 'string' && intentHash !== '';
  if (hasIntent && hasHash)
    problems.push({ field: 'intentHash', reason: 'give either intent or intentHash, not both' });
  if (problems.length > 0)
    throw new AppError('REQUEST_INVALID', 'The request body is invalid.', problems);
  if (hasIntent && !plainObject(intent))
    throw new AppError('INTENT_MALFORMED', undefined, [
      { field: '(root)', reason: 'must be a JSON object' },
    ]);
  if (!hasIntent && !hasHash) {
    if (!options.allowHash)
      throw new AppError('INTENT_MALFORMED', undefined, [
        { field: '(root)', reason: 'is required' },
      ]);
    throw new AppError('REQUEST_INVALID', 'Give an intent or an intentHash.', [
      { field: 'intent', reason: 'required (or intentHash)' },
    ]);
  }
  // The same checks the intent subgraph runs, here too so a malformed call is refused before it is
  // charged: INTENT_MALFORMED first, then POLICY_ID_REQUIRED (DECISIONS order).
  if (hasIntent) {
    const errors = spendIntentErrors(intent, input.now);
    if (errors.length > 0) throw new AppError('INTENT_MALFORMED', undefined, errors);
  }
  if (typeof policyId !== 'string' || policyId === '') throw new AppError('POLICY_ID_REQUIRED');
  const variables: Record<string, unknown> = { policyId };
  if (hasIntent) variables.intent = intent;
  if (hasHash) variables.intentHash = intentHash;
  return variables;
}
