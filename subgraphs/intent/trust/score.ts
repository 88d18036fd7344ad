// score_vendor and score_buyer (issue #21, docs/trust.md): the service's own score, computed here
// from the counted outcomes (never taken from a caller) with core/trust/score.ts at the request's
// instant. Too little history is the named refusal SCORE_INSUFFICIENT_HISTORY (422), never a
// made-up number. Who may ask: anyone (a paid call) for a vendor, since a provider's record with
// the service's buyers is what every buyer weighs; for a buyer only who may read that policy's
// purchases: an admin, the policy's owner, or a consumer session bound to the policy (401 without
// a credential, 403 FORBIDDEN otherwise, with no data). The free *Terms checks answer the same
// rules before any 402, so a refusal is never charged.
import { AppError } from '../../../core/errors';
import { type OutcomeCounts, type ScoreResult, vendorScore } from '../../../core/trust/score';
import {
  parseScoreBuyerRequest,
  parseScoreVendorRequest,
} from '../../../core/validation/scoreRequest';
import type { SubgraphContext } from '../../kit';
import { policyOwner } from '../consumer/reads';
import type { Json } from '../views';
import { buyerOutcomes, outcomesOfWindow, vendorOutcomes, type WindowOutcomes } from './outcomes';

type Subject =
  { kind: 'vendor'; provider: string } | { kind: 'buyer'; agentId: string; policyId: string };

/** The answer, or the refusal with the counts that were short. */
function answerOf(subject: Subject, result: ScoreResult, computedAt: Date): Json {
  if (!result.ok)
    throw new AppError(
      'SCORE_INSUFFICIENT_HISTORY',
      `${result.observations} counted outcome(s); at least ${result.minObservations} are needed.`,
      {
        ...subjectFields(subject),
        observations: result.observations,
        minObservations: result.minObservations,
        basis: { ...result.basis },
      },
    );
  return {
    ...subjectFields(subject),
    score: result.score,
    confidence: result.confidence,
    lowerBound: result.lowerBound,
    basis: { ...result.basis },
    computedAt: computedAt.toISOString(),
  };
}

function subjectFields(subject: Subject): Json {
  return subject.kind === 'vendor'
    ? { provider: subject.provider }
    : { agentId: subject.agentId, policyId: subject.policyId };
}

/** Admin, the policy's owner, or a consumer session bound to it; else 401/403 with no data. */
async function requireBuyerReader(ctx: SubgraphContext, policyId: string): Promise<void> {
  const actor = ctx.actor;
  if (actor.kind === 'admin') return;
  if (actor.kind === 'anonymous') throw new AppError('AUTH_REQUIRED');
  if (actor.kind === 'consumer' && actor.policyId === policyId) return;
  if (
    actor.kind === 'owner' &&
    (await policyOwner(ctx.db, policyId)) === actor.address.toLowerCase()
  )
    return;
  throw new AppError('FORBIDDEN', 'This credential may not read this policy’s buyer scores.');
}

async function subjectOf(
  ctx: SubgraphContext,
  kind: Subject['kind'],
  body: Json,
): Promise<{ subject: Subject; counts: OutcomeCounts }> {
  if (kind === 'vendor') {
    const { provider } = parseScoreVendorRequest(body);
    return { subject: { kind, provider }, counts: await vendorOutcomes(ctx.db, provider) };
  }
  const { agentId, policyId } = parseScoreBuyerRequest(body);
  await requireBuyerReader(ctx, policyId);
  return {
    subject: { kind, agentId, policyId },
    counts: await buyerOutcomes(ctx.db, policyId, agentId),
  };
}

/** The paid answer: {score, confidence, lowerBound, basis, computedAt} or the named refusal. */
export async function computeScore(
  ctx: SubgraphContext,
  kind: Subject['kind'],
  body: Json,
): Promise<Json> {
  const { subject, counts } = await subjectOf(ctx, kind, body);
  const now = ctx.now();
  // The first outcome was stamped by whichever process recorded it; a clock behind it reads age 0.
  const seen =
    counts.firstSeenAt !== null && counts.firstSeenAt > now
      ? { ...counts, firstSeenAt: now }
      : counts;
  return answerOf(subject, vendorScore(seen, now), now);
}

/**
 * The free check before any 402: the same validation and access as the paid call (thrown), and
 * the refusal the paid call would give as data ({code, message, details}, or null).
 */
export async function scoreTerms(
  ctx: SubgraphContext,
  kind: Subject['kind'],
  body: Json,
): Promise<Json> {
  try {
    await computeScore(ctx, kind, body);
    return { refusal: null };
  } catch (error) {
    if (error instanceof AppError && error.code === 'SCORE_INSUFFICIENT_HISTORY')
      return {
        refusal: { code: error.code, message: error.message, details: error.details as Json },
      };
    throw error;
  }
}

/**
 * Rule 7's input from the preflight window's counters: the score, or null (unavailable) with too
 * little history. The age is not weighted, so the instant is the first outcome's own.
 */
export function vendorScoreOfWindow(raw: WindowOutcomes | null | undefined): number | null {
  const counts = outcomesOfWindow(raw);
  const result = vendorScore(counts, counts.firstSeenAt ?? new Date(0));
  return result.ok ? result.score : null;
}
