// The policy a preflight, create_spend_intent or a tool is decided against, through the policy
// subgraph's published `policy.current_policy` (or the policy columns of a preflight_windows row),
// with its rules held per version (rulesCache.ts) so the engine's compiled-policy cache keeps hitting.
import type { PolicySnapshot } from '../../../core/engine';
import { AppError } from '../../../core/errors';
import type { NormalisedPolicyRules } from '../../../core/validation/policy';
import type { Db } from '../../../platform/db';
import type { PreflightWindowRow } from './decide';
import { holdRules, type HeldRules } from './rulesCache';

interface CurrentPolicyRow {
  id: string;
  version: number;
  owner: string;
  status: string;
  policy_hash: string;
  rules: NormalisedPolicyRules;
  expires_at: Date | null;
}

export async function currentPolicy(db: Db, policyId: string): Promise<PolicySnapshot | null> {
  const result = await db.query<CurrentPolicyRow>('SELECT * FROM policy.current_policy($1)', [
    policyId,
  ]);
  const row = result.rows[0];
  if (row === undefined) return null;
  return {
    policyId: row.id,
    version: row.version,
    status: row.status as PolicySnapshot['status'],
    policyHash: row.policy_hash as PolicySnapshot['policyHash'],
    rules: holdRules(row.id, row.version, row.policy_hash, row.rules),
    expiresAt: row.expires_at,
  };
}

/**
 * The policy of one preflight_windows row. `known` is what this process held of the policy's
 * rules when it asked: the row leaves the rules out when they matched.
 */
export function policyOf(
  row: PreflightWindowRow,
  policyId: string,
  known: HeldRules | undefined,
): PolicySnapshot | null {
  if (!row.policy_found) return null;
  const version = row.version!;
  const policyHash = row.policy_hash!;
  let rules: NormalisedPolicyRules;
  if (row.rules !== null) {
    rules = holdRules(policyId, version, policyHash, row.rules);
  } else {
    // Withheld only when it matched what we passed; `known` is the object we passed.
    if (known === undefined || known.version !== version || known.policyHash !== policyHash) {
      throw new AppError(
        'INTERNAL_ERROR',
        'Policy rules were withheld for a version this process does not hold.',
      );
    }
    rules = known.rules;
  }
  return {
    policyId,
    version,
    status: row.status as PolicySnapshot['status'],
    policyHash: policyHash as PolicySnapshot['policyHash'],
    rules,
    expiresAt: row.expires_at,
  };
}
