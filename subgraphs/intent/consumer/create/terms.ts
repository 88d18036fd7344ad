// What creating a consumer intent reads from the other subgraphs, only through their published SQL
// functions: the capability's catalog terms (`catalog.capability_terms`: provider, category, fee,
// gate, effective maturity) and the consumer's policy (`policy.current_policy`: current hash and
// asset). The catalog gate refuses before anything is asked of a merchant or stored.
import { AppError, type ErrorCode, isErrorCode } from '../../../../core/errors';
import type { Db } from '../../../../platform/db';
import type { IntentPolicy } from './quoteIntent';

export interface CapabilityTerms {
  readonly capability: string;
  readonly providerId: string;
  readonly category: string;
  readonly feeBps: number;
}

interface TermsRow {
  capability: string;
  provider_id: string;
  category: string;
  fee_bps: number;
  gate_code: string | null;
  effective_maturity: string;
}

/**
 * The terms of a capability the service may buy: 404 CAPABILITY_NOT_FOUND when the catalog does not
 * list it, 409 with its gate code when it is gated, 409 CAPABILITY_NOT_VERIFIED below verified.
 */
export async function purchasableTerms(db: Db, capability: string): Promise<CapabilityTerms> {
  const result = await db.query<TermsRow>('SELECT * FROM catalog.capability_terms($1)', [
    capability,
  ]);
  const row = result.rows[0];
  if (row === undefined) throw new AppError('CAPABILITY_NOT_FOUND', undefined, { capability });
  if (row.gate_code !== null) {
    const code: ErrorCode = isErrorCode(row.gate_code) ? row.gate_code : 'CAPABILITY_NOT_VERIFIED';
    throw new AppError(code, undefined, { capability });
  }
  if (row.effective_maturity !== 'verified')
    throw new AppError('CAPABILITY_NOT_VERIFIED', undefined, {
      capability,
      effectiveMaturity: row.effective_maturity,
    });
  return {
    capability: row.capability,
    providerId: row.provider_id,
    category: row.category,
    feeBps: row.fee_bps,
  };
}

/** The policy's latest version as a SpendIntent names it; POLICY_NOT_FOUND when there is none. */
export async function intentPolicy(db: Db, policyId: string): Promise<IntentPolicy> {
  const result = await db.query<{
    id: string;
    policy_hash: string;
    rules: { asset?: { network?: unknown; token?: unknown } };
  }>('SELECT id, policy_hash, rules FROM policy.current_policy($1)', [policyId]);
  const row = result.rows[0];
  const asset = row?.rules.asset;
  if (row === undefined || typeof asset?.network !== 'string' || typeof asset.token !== 'string')
    throw new AppError('POLICY_NOT_FOUND', undefined, { policyId });
  return {
    policyId: row.id,
    policyHash: row.policy_hash,
    asset: { network: asset.network, token: asset.token },
  };
}
