// Reads of channel bindings: an owner's pending and active bindings (through TypeORM, entity.ts),
// and the webhook bindings whose (unsealed) secrets may have signed a request (SQL: the sealed
// secret is not mapped on the entity). Revoked bindings are never read.
import { type DataSource, Not } from 'typeorm';
import type { Db } from '../../../platform/db';
import { type BindingKind, type BindingState, ChannelBindingRecord } from './entity';
import { unseal } from '../../../platform/sealing';

export type { BindingKind, BindingState };
export const BINDING_KINDS: readonly BindingKind[] = ['telegram', 'slack', 'webhook', 'email'];

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

/** The owner's pending and active bindings, oldest first. */
export async function readBindings(dataSource: DataSource, owner: string): Promise<BindingRow[]> {
  return dataSource.getRepository(ChannelBindingRecord).find({
    where: { owner, state: Not('REVOKED' as const) },
    order: { createdAt: 'ASC', bindingId: 'ASC' },
  });
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
