// SQL reads of channel bindings: an owner's pending and active bindings, and the webhook
// bindings whose (unsealed) secrets may have signed a request. Revoked bindings are never read.
import type { Db } from '../../../platform/db';
import { unseal } from '../../../platform/sealing';

export type BindingKind = 'telegram' | 'slack' | 'webhook' | 'email';
export const BINDING_KINDS: readonly BindingKind[] = ['telegram', 'slack', 'webhook', 'email'];
export type BindingState = 'PENDING' | 'ACTIVE' | 'REVOKED';

/** Bounds the bindings one owner keeps (pending and active), so a session cannot fill the table. */
export const MAX_BINDINGS_PER_OWNER = 50;

export interface BindingRow {
  readonly bindingId: string;
  readonly owner: string;
  readonly kind: BindingKind;
  readonly address: string | null;
  readonly replyFrom: string | null;
  readonly state: BindingState;
  readonly createdAt: Date;
  readonly activatedAt: Date | null;
  readonly revokedAt: Date | null;
}

export const COLUMNS =
  'binding_id, owner, kind, address, reply_from, state, created_at, activated_at, revoked_at';

export interface BindingRecord {
  binding_id: string;
  owner: string;
  kind: BindingKind;
  address: string | null;
  reply_from: string | null;
  state: BindingState;
  created_at: Date;
  activated_at: Date | null;
  revoked_at: Date | null;
}

export function toBinding(record: BindingRecord): BindingRow {
  return {
    bindingId: record.binding_id,
    owner: record.owner,
    kind: record.kind,
    address: record.address,
    replyFrom: record.reply_from,
    state: record.state,
    createdAt: record.created_at,
    activatedAt: record.activated_at,
    revokedAt: record.revoked_at,
  };
}

export async function readBindings(db: Db, owner: string): Promise<BindingRow[]> {
  const result = await db.query<BindingRecord>(
    `SELECT ${COLUMNS} FROM policy.channel_bindings WHERE owner = $1 AND state <> 'REVOKED' ORDER BY created_at, binding_id`,
    [owner],
  );
  return result.rows.map(toBinding);
}

/** Webhook bindings (pending or active) that may have signed a request for this owner, with their secrets. */
export async function webhookSecrets(
  db: Db,
  key: Buffer,
  where: { owner: string } | { bindingId: string },
): Promise<Array<{ bindingId: string; owner: string; state: BindingState; secret: string }>> {
  const byOwner = 'owner' in where;
  const result = await db.query<{
    binding_id: string;
    owner: string;
    state: BindingState;
    sealed_secret: Buffer;
  }>(
    `SELECT binding_id, owner, state, sealed_secret FROM policy.channel_bindings
      WHERE kind = 'webhook' AND state <> 'REVOKED' AND ${byOwner ? 'owner = $1' : 'binding_id = $1'}
      ORDER BY created_at LIMIT ${MAX_BINDINGS_PER_OWNER}`,
    [byOwner ? where.owner : where.bindingId],
  );
  return result.rows.map((row) => ({
    bindingId: row.binding_id,
    owner: row.owner,
    state: row.state,
    secret: unseal(key, row.sealed_secret),
  }));
}
