// A channel binding's row as a TypeORM entity: the columns an owner's listing reads. The sealed
// webhook secret and the link code's digest stay unmapped, so no repository read can carry them;
// linking and revoking stay SQL (writes.ts), because linking consumes a one-time code and binds in
// one transaction.
import { Column, Entity, PrimaryColumn } from 'typeorm';

export type BindingKind = 'telegram' | 'slack' | 'webhook' | 'email';
export type BindingState = 'PENDING' | 'ACTIVE' | 'REVOKED';

@Entity({ schema: 'policy', name: 'channel_bindings' })
export class ChannelBindingRecord {
  @PrimaryColumn({ name: 'binding_id', type: 'text' })
  bindingId!: string;

  @Column({ type: 'text' })
  owner!: string;

  @Column({ type: 'text' })
  kind!: BindingKind;

  @Column({ type: 'text', nullable: true })
  address!: string | null;

  @Column({ name: 'reply_from', type: 'text', nullable: true })
  replyFrom!: string | null;

  @Column({ type: 'text' })
  state!: BindingState;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'activated_at', type: 'timestamptz', nullable: true })
  activatedAt!: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;
}
