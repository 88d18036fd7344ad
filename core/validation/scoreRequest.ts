// The bodies of POST /score_vendor `{provider}` and POST /score_buyer `{agentId, policyId}`
// (DECISIONS "Wave-2 route shapes"), checked before any payment with the SpendIntent's own field
// rules (a provider and an agentId are spelled as an intent spells them), so the name scored is
// the name preflight's rule 7 reads. Unknown fields are refused. Every problem is one
// `{field, reason}` of a 400 REQUEST_INVALID. Pure.
import { z } from 'zod';
import { POLICY_ID_PATTERN } from '../canon/id-shapes';
import { AppError } from '../errors';
import { AGENT_ID_PATTERN } from './fields';
import { PROVIDER_PATTERN } from './intentSchema';
import { fieldDetails, requiredOr } from './zodDetails';

export interface ScoreVendorRequest {
  readonly provider: string;
}

export interface ScoreBuyerRequest {
  readonly agentId: string;
  readonly policyId: string;
}

const PROVIDER_REASON = 'must be 1–253 printable characters without spaces';
const AGENT_REASON = 'must be 1–128 characters of A–Z a–z 0–9 . _ : -';
const POLICY_REASON = 'must be a policy id (a decimal string of 1–78 digits)';

const vendorBody = z.strictObject({
  provider: z
    .string(requiredOr(PROVIDER_REASON))
    .regex(PROVIDER_PATTERN, { error: PROVIDER_REASON }),
});

const buyerBody = z.strictObject({
  agentId: z.string(requiredOr(AGENT_REASON)).regex(AGENT_ID_PATTERN, { error: AGENT_REASON }),
  policyId: z.string(requiredOr(POLICY_REASON)).regex(POLICY_ID_PATTERN, { error: POLICY_REASON }),
});

function parseWith<T>(schema: z.ZodType<T>, raw: unknown, route: string): T {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new AppError('REQUEST_INVALID', 'The body must be a JSON object.');
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw new AppError(
      'REQUEST_INVALID',
      `The ${route} request is invalid.`,
      fieldDetails(parsed.error.issues),
    );
  return parsed.data;
}

export function parseScoreVendorRequest(raw: unknown): ScoreVendorRequest {
  return parseWith(vendorBody, raw, 'score_vendor');
}

/** The policyId in its one spelling (no leading zeros), as every other route names a policy. */
export function parseScoreBuyerRequest(raw: unknown): ScoreBuyerRequest {
  const { agentId, policyId } = parseWith(buyerBody, raw, 'score_buyer');
  return { agentId, policyId: BigInt(policyId).toString() };
}
