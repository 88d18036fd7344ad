// Request bodies of the agent tools that carry a spend intent: `{policyId, intent}` or
// `{policyId, intentHash}`. Shape only; the intent's fields are judged by the intent subgraph, which
// answers INTENT_MALFORMED (per field) before POLICY_ID_REQUIRED, exactly as DECISIONS orders them.
import { AppError, type FieldError } from '../../core/errors';
import type { RestInput } from './types';

function plainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function intentBody(input: RestInput, options: { allowHash: boolean }): Record<string, unknown> {
  const body = input.body ?? {};
  if (!plainObject(body)) throw new AppError('REQUEST_INVALID', 'The body must be a JSON object.');
  const known = new Set(['policyId', 'intent', ...(options.allowHash ? ['intentHash'] : [])]);
  const problems: FieldError[] = [];
  for (const name of Object.keys(body)) if (!known.has(name)) problems.push({ field: name, reason: 'unknown field' });
  const { policyId, intent, intentHash } = body;
  if (policyId !== undefined && policyId !== null && typeof policyId !== 'string') problems.push({ field: 'policyId', reason: 'must be a string' });
  if (options.allowHash && intentHash !== undefined && intentHash !== null && typeof intentHash !== 'string') {
    problems.push({ field: 'intentHash', reason: 'must be a string' });
  }
  const hasIntent = intent !== undefined && intent !== null;
  const hasHash = options.allowHash && typeof intentHash === 'string' && intentHash !== '';
  if (hasIntent && hasHash) problems.push({ field: 'intentHash', reason: 'give either intent or intentHash, not both' });
  if (problems.length > 0) throw new AppError('REQUEST_INVALID', 'The request body is invalid.', problems);
  if (hasIntent && !plainObject(intent)) throw new AppError('INTENT_MALFORMED', undefined, [{ field: '(root)', reason: 'must be a JSON object' }]);
  if (!hasIntent && !hasHash) {
    if (!options.allowHash) throw new AppError('INTENT_MALFORMED', undefined, [{ field: '(root)', reason: 'is required' }]);
    throw new AppError('REQUEST_INVALID', 'Give an intent or an intentHash.', [{ field: 'intent', reason: 'required (or intentHash)' }]);
  }
  const variables: Record<string, unknown> = { policyId: typeof policyId === 'string' && policyId !== '' ? policyId : null };
  if (hasIntent) variables.intent = intent;
  if (hasHash) variables.intentHash = intentHash;
  return variables;
}
