// Policy writes, each one transaction with its audit row: create (allocate the owner's next nonce,
// derive the policyId, write version 1), update (a new version row, never an overwrite) and the
// status changes, and a confirmed registry event. Writes to one policy are serialised by a
// per-policy transaction lock.
import { policyHash, policyIdFor } from '../../../core/canon/policy-identity';
import { AppError } from '../../../core/errors';
import type { NormalisedPolicyRules } from '../../../core/validation/policy';
import { type Db, withTransaction } from '../../../platform/db';
import type { SubgraphContext } from '../../kit';
import type { RegistryEvent } from './registration';
import {
  POLICY_COLUMNS,
  type PolicyRow,
  type PolicyStatus,
  readLatestPolicy,
  toPolicyRow,
} from './reads';

/** The first key of the two-key advisory locks this subgraph takes (the intent subgraph's one-key locks never collide). */
const POLICY_WRITE_LOCK_CLASS = 7_305;

export type PolicyChange = 'CREATED' | 'UPDATED' | 'PAUSED' | 'RESUMED' | 'REGISTERED';

export interface WriteAudit {
  /** describeActor's form: `admin`, `owner:0x…`. */
  readonly actor: string;
  readonly at: Date;
}

/** Whose policies a writer may touch: any (admin) or one owner's. */
export type OwnerScope =
  { readonly anyOwner: true } | { readonly anyOwner: false; readonly owner: string };

function ownerFilter(scope: OwnerScope): string | null {
  return scope.anyOwner ? null : scope.owner;
}

export async function insertPolicyChange(
  client: Db,
  policyId: string,
  version: number,
  change: PolicyChange,
  audit: WriteAudit,
): Promise<void> {
  await client.query(
    'INSERT INTO policy.policy_changes (policy_id, version, change, actor, at) VALUES ($1::numeric, $2, $3, $4, $5)',
    [policyId, version, change, audit.actor, audit.at],
  );
}

/** Locks the policy for this transaction; readers are never blocked. */
async function lockPolicy(client: Db, policyId: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
    POLICY_WRITE_LOCK_CLASS,
    policyId,
  ]);
}

/** The latest version, locked for writing; another owner's policy is POLICY_NOT_FOUND, as if absent. */
async function lockedLatest(client: Db, policyId: string, scope: OwnerScope): Promise<PolicyRow> {
  await lockPolicy(client, policyId);
  const latest = await readLatestPolicy(client, policyId, ownerFilter(scope));
  if (latest === null) throw new AppError('POLICY_NOT_FOUND', undefined, { policyId });
  return latest;
}

async function insertVersion(
  client: Db,
  values: {
    policyId: string;
    version: number;
    ownerNonce: string | null;
    status: PolicyStatus;
    rules: NormalisedPolicyRules;
  },
  audit: WriteAudit,
): Promise<PolicyRow> {
  const { rules } = values;
  const result = await client.query(
    `INSERT INTO policy.policies (policy_id, version, owner, owner_nonce, status, policy_hash, rules, expires_at, created_at, created_by)
     VALUES ($1::numeric, $2, $3, $4::numeric, $5, $6, $7::jsonb, $8, $9, $10)
     RETURNING ${POLICY_COLUMNS}`,
    [
      values.policyId,
      values.version,
      rules.owner,
      values.ownerNonce,
      values.status,
      policyHash(rules),
      JSON.stringify(rules),
      rules.expiresAt,
      audit.at,
      audit.actor,
    ],
  );
  return toPolicyRow(result.rows[0]);
}

/** Allocates the owner's next nonce (1, 2, …) and writes version 1, ACTIVE. */
export function createPolicy(
  ctx: Pick<SubgraphContext, 'db'>,
  rules: NormalisedPolicyRules,
  audit: WriteAudit,
): Promise<PolicyRow> {
  return withTransaction(ctx.db, async (client) => {
    // One upsert: concurrent creates by the same owner queue on the row and each gets its own nonce.
    const allocated = await client.query<{ nonce: string }>(
      `INSERT INTO policy.owner_nonces (owner, last_nonce) VALUES ($1, 1)
       ON CONFLICT (owner) DO UPDATE SET last_nonce = policy.owner_nonces.last_nonce + 1
       RETURNING last_nonce::text AS nonce`,
      [rules.owner],
    );
    const ownerNonce = allocated.rows[0].nonce;
    const policyId = policyIdFor(rules.owner, BigInt(ownerNonce));
    await lockPolicy(client, policyId);
    const created = await insertVersion(
      client,
      { policyId, version: 1, ownerNonce, status: 'ACTIVE', rules },
      audit,
    );
    await insertPolicyChange(client, policyId, 1, 'CREATED', audit);
    return created;
  });
}

/**
 * Writes the next version with the new rules and hash, keeping the status. The owner cannot change
 * (the policyId is derived from it). Rules equal to the current ones write nothing.
 */
export function updatePolicy(
  ctx: Pick<SubgraphContext, 'db'>,
  policyId: string,
  rules: NormalisedPolicyRules,
  scope: OwnerScope,
  audit: WriteAudit,
): Promise<PolicyRow> {
  return withTransaction(ctx.db, async (client) => {
    const latest = await lockedLatest(client, policyId, scope);
    if (rules.owner !== latest.owner) {
      throw new AppError('POLICY_RULES_INVALID', undefined, [
        {
          field: 'owner',
          reason: `must stay ${latest.owner}: the policyId is derived from the owner; create a new policy instead`,
        },
      ]);
    }
    if (policyHash(rules) === latest.policyHash) return latest;
    const version = latest.version + 1;
    const written = await insertVersion(
      client,
      { policyId, version, ownerNonce: latest.ownerNonce, status: latest.status, rules },
      audit,
    );
    await insertPolicyChange(client, policyId, version, 'UPDATED', audit);
    return written;
  });
}

/** PAUSED or ACTIVE on the latest version; setting the status it already has changes nothing. */
export function setPolicyStatus(
  ctx: Pick<SubgraphContext, 'db'>,
  policyId: string,
  status: PolicyStatus,
  scope: OwnerScope,
  audit: WriteAudit,
): Promise<PolicyRow> {
  return withTransaction(ctx.db, async (client) => {
    const latest = await lockedLatest(client, policyId, scope);
    if (latest.status === status) return latest;
    const result = await client.query(
      `UPDATE policy.policies SET status = $3, status_changed_at = $4
        WHERE policy_id = $1::numeric AND version = $2
        RETURNING ${POLICY_COLUMNS}`,
      [policyId, latest.version, status, audit.at],
    );
    await insertPolicyChange(
      client,
      policyId,
      latest.version,
      status === 'PAUSED' ? 'PAUSED' : 'RESUMED',
      audit,
    );
    return toPolicyRow(result.rows[0]);
  });
}

/**
 * Records a confirmed registry event after checking it against the policy's current version:
 * RULES_HASH_MISMATCH when the published hash is another one. Syncing the same event again
 * records nothing new and answers the same policy.
 */
export function recordRegistration(
  ctx: Pick<SubgraphContext, 'db'>,
  policyId: string,
  event: RegistryEvent,
  scope: OwnerScope,
  audit: WriteAudit,
): Promise<PolicyRow> {
  return withTransaction(ctx.db, async (client) => {
    const latest = await lockedLatest(client, policyId, scope);
    if (event.owner !== null && event.owner !== latest.owner) {
      throw new AppError(
        'POLICY_REGISTRATION_INVALID',
        'The event names another owner than the policy’s.',
      );
    }
    if (event.policyHash !== latest.policyHash) {
      throw new AppError('RULES_HASH_MISMATCH', undefined, {
        onChainPolicyHash: event.policyHash,
        storedPolicyHash: latest.policyHash,
        version: latest.version,
      });
    }
    const inserted = await client.query(
      `INSERT INTO policy.registrations
         (policy_id, version, chain_id, registry, tx_hash, block_number, log_index, event, policy_hash, recorded_at, recorded_by)
       VALUES ($1::numeric, $2, $3, $4, $5, $6::numeric, $7, $8, $9, $10, $11)
       ON CONFLICT (chain_id, tx_hash, log_index) DO NOTHING`,
      [
        policyId,
        latest.version,
        event.chainId,
        event.registry,
        event.txHash,
        event.blockNumber.toString(),
        event.logIndex,
        event.event,
        event.policyHash,
        audit.at,
        audit.actor,
      ],
    );
    if (inserted.rowCount === 1)
      await insertPolicyChange(client, policyId, latest.version, 'REGISTERED', audit);
    return latest;
  });
}
