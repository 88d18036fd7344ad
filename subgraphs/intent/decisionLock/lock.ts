// The per-policy decision lock: a transaction-scoped advisory lock that preflight (inside
// intent.preflight_windows), settlement and the lapsed-reservation sweep take before they read or
// move a policy's window, so their instants are ordered and no two decisions overspend together.
import type { Db } from '../../../platform/db';

/** Advisory lock class of intent decisions (the policy subgraph's write lock uses its own). */
export const INTENT_DECISION_LOCK_CLASS = 0x1a7e;

/** Takes the policy's decision lock until the transaction ends (waits while another holds it). */
export async function lockPolicyDecisions(client: Db, policyId: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
    INTENT_DECISION_LOCK_CLASS,
    policyId,
  ]);
}
