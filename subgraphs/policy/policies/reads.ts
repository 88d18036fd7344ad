// SQL reads of `policy.policies`: the latest version of one policy (filtered by owner in the same
// statement when the reader is an owner, so another owner's row never leaves the database), pages
// of policies by id, the version history and the newest registration. Ids and nonces are read as
// text, never JS numbers.
import {
  decodeCursor as decodeListCursor,
  encodeCursor as encodeListCursor,
  pageSize as listPageSize,
} from '../../kit';
import type { Db } from '../../../platform/db';
import { POLICY_ID_PATTERN } from '../../../core/canon/id-shapes';

export type PolicyStatus = 'ACTIVE' | 'PAUSED';

/** One stored version of a policy, as the resolvers pass it on. */
export interface PolicyRow {
  readonly id: string;
  readonly owner: string;
  /** null for rows written before owner nonces were recorded. */
  readonly ownerNonce: string | null;
  readonly version: number;
  readonly status: PolicyStatus;
  readonly policyHash: string;
  /** The normalised rules document (validatePolicy's output), as stored. */
  readonly rules: Record<string, unknown>;
  readonly expiresAt: Date | null;
  /** When this version was written. */
  readonly versionCreatedAt: Date;
  /** When the status last changed on this version; null if never. */
  readonly statusChangedAt: Date | null;
}

/** A policyId is a decimal uint256. */
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

interface PolicyRecord {
  id: string;
  owner: string;
  owner_nonce: string | null;
  version: number;
  status: PolicyStatus;
  policy_hash: string;
  rules: Record<string, unknown>;
  expires_at: Date | null;
  created_at: Date;
  status_changed_at: Date | null;
}

export const POLICY_COLUMNS = `policy_id::text AS id, owner, owner_nonce::text AS owner_nonce, version, status, policy_hash,
       rules, expires_at, created_at, status_changed_at`;

export function toPolicyRow(record: PolicyRecord): PolicyRow {
  return {
    id: record.id,
    owner: record.owner,
    ownerNonce: record.owner_nonce,
    version: record.version,
    status: record.status,
    policyHash: record.policy_hash,
    rules: record.rules,
    expiresAt: record.expires_at,
    versionCreatedAt: record.created_at,
    statusChangedAt: record.status_changed_at,
  };
}

/** `owner` null reads any owner's policy (admin); otherwise only when the latest version is that owner's. */
export async function readLatestPolicy(
  db: Db,
  id: string,
  owner: string | null,
): Promise<PolicyRow | null> {
  if (!POLICY_ID_PATTERN.test(id)) return null;
  const result = await db.query<PolicyRecord>(
    `SELECT *
       FROM (SELECT ${POLICY_COLUMNS}
               FROM policy.policies
              WHERE policy_id = $1::numeric
              ORDER BY version DESC
              LIMIT 1) latest
      WHERE $2::text IS NULL OR owner = $2::text`,
    [id, owner],
  );
  const record = result.rows[0];
  return record === undefined ? null : toPolicyRow(record);
}

/** One version of a policy (any owner: the caller has already checked access to the policy). */
export async function readPolicyVersion(
  db: Db,
  id: string,
  version: number,
): Promise<PolicyRow | null> {
  if (!POLICY_ID_PATTERN.test(id) || !Number.isSafeInteger(version) || version < 1) return null;
  const result = await db.query<PolicyRecord>(
    `SELECT ${POLICY_COLUMNS} FROM policy.policies WHERE policy_id = $1::numeric AND version = $2`,
    [id, version],
  );
  const record = result.rows[0];
  return record === undefined ? null : toPolicyRow(record);
}

/** Versions newest first, below `beforeVersion` when given. */
export async function readPolicyVersions(
  db: Db,
  id: string,
  options: { first: number; beforeVersion: number | null },
): Promise<PolicyRow[]> {
  const result = await db.query<PolicyRecord>(
    `SELECT ${POLICY_COLUMNS}
       FROM policy.policies
      WHERE policy_id = $1::numeric AND ($2::integer IS NULL OR version < $2::integer)
      ORDER BY version DESC
      LIMIT $3`,
    [id, options.beforeVersion, options.first],
  );
  return result.rows.map(toPolicyRow);
}

/** When version 1 was written: the policy's creation time. */
export async function readPolicyCreatedAt(db: Db, id: string): Promise<Date | null> {
  const result = await db.query<{ created_at: Date }>(
    'SELECT created_at FROM policy.policies WHERE policy_id = $1::numeric ORDER BY version LIMIT 1',
    [id],
  );
  return result.rows[0]?.created_at ?? null;
}

export interface PolicyPage {
  readonly nodes: PolicyRow[];
  readonly endCursor: string | null;
  readonly hasNextPage: boolean;
}

const CURSOR = /^policy:([0-9]{1,78})$/;

function encodeCursor(policyId: string): string {
  return encodeListCursor(`policy:${policyId}`);
}

function decodeCursor(cursor: string): string {
  return decodeListCursor(cursor, CURSOR)[1];
}

export function pageSize(first: number | null | undefined): number {
  return listPageSize(first, { max: MAX_PAGE_SIZE, fallback: DEFAULT_PAGE_SIZE });
}

/**
 * Latest versions ordered by policyId (a keyset cursor, stable while policies are added), all
 * owners when `owner` is null. The owner never changes (the id is derived from it), so filtering
 * on any version's owner is filtering on the policy's.
 */
export async function readPolicyPage(
  db: Db,
  options: { owner: string | null; first: number; after: string | null },
): Promise<PolicyPage> {
  const after = options.after === null ? null : decodeCursor(options.after);
  const result = await db.query<PolicyRecord>(
    `SELECT DISTINCT ON (policy_id) ${POLICY_COLUMNS}
       FROM policy.policies
      WHERE ($1::text IS NULL OR owner = $1::text)
        AND ($2::numeric IS NULL OR policy_id > $2::numeric)
      ORDER BY policy_id, version DESC
      LIMIT $3`,
    [options.owner, after, options.first + 1],
  );
  const rows = result.rows.map(toPolicyRow);
  const hasNextPage = rows.length > options.first;
  const nodes = hasNextPage ? rows.slice(0, options.first) : rows;
  const last = nodes[nodes.length - 1];
  return { nodes, hasNextPage, endCursor: last === undefined ? null : encodeCursor(last.id) };
}

export interface RegistrationRow {
  readonly chainId: number;
  readonly registry: string;
  readonly txHash: string;
  readonly blockNumber: string;
  readonly event: string;
  readonly policyHash: string;
  readonly version: number;
  readonly recordedAt: Date;
}

/** The newest recorded registry event of a policy (any chain), or null when it was never registered. */
export async function readCurrentRegistration(
  db: Db,
  policyId: string,
): Promise<RegistrationRow | null> {
  const result = await db.query<{
    chain_id: string;
    registry: string;
    tx_hash: string;
    block_number: string;
    event: string;
    policy_hash: string;
    version: number;
    recorded_at: Date;
  }>(
    `SELECT chain_id::text, registry, tx_hash, block_number::text, event, policy_hash, version, recorded_at
       FROM policy.registrations
      WHERE policy_id = $1::numeric
      ORDER BY block_number DESC, log_index DESC
      LIMIT 1`,
    [policyId],
  );
  const row = result.rows[0];
  if (row === undefined) return null;
  return {
    chainId: Number(row.chain_id),
    registry: row.registry,
    txHash: row.tx_hash,
    blockNumber: row.block_number,
    event: row.event,
    policyHash: row.policy_hash,
    version: row.version,
    recordedAt: row.recorded_at,
  };
}
