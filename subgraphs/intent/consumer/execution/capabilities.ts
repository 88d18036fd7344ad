// Payment capabilities in the database (intent.payment_capabilities, migration 0014): minted and
// redeemed once under the intent's row lock, and the one authorization signed under it recorded
// with the intent's move to PROVIDER_PAYMENT_PENDING in the same transaction, before the signature
// is handed to the payment client. The table's trigger refuses a second redeem or signature, and
// its unique index a second signed capability for one intent.
import {
  mintPaymentCapability,
  type PaymentCapability,
  type TransferAuthorization,
} from '../../../../core/consumer/paymentCapability';
import { newCapabilityId } from '../../../../core/canon/ids';
import { AppError } from '../../../../core/errors';
import { type DbPool, withTransaction } from '../../../../platform/db';
import type { ConsumerRailAsset } from '../../../kit';
import { type ConsumerIntentRow, getConsumerIntent } from '../store';
import { transitionConsumerIntent } from '../transition';
import { quoteOf } from './quoteFields';
import { SettlementLegSchema } from '../legs';

/** The authorization as stored (atomic amounts and times as decimal strings, addresses lowercase). */
export interface StoredAuthorization {
  readonly from: string;
  readonly to: string;
  readonly value: string;
  readonly validAfter: string;
  readonly validBefore: string;
  readonly nonce: string;
}

export function storedAuthorization(message: TransferAuthorization): StoredAuthorization {
  return {
    from: message.from.toLowerCase(),
    to: message.to.toLowerCase(),
    value: message.value.toString(),
    validAfter: message.validAfter.toString(),
    validBefore: message.validBefore.toString(),
    nonce: message.nonce.toLowerCase(),
  };
}

/**
 * Mints a capability for the intent (ceiling = the quote's provider cost, recipients = the quote's
 * payTo, 5 minutes) and redeems it, under the intent's row lock while it is EXECUTION_QUEUED.
 * Null when the intent has moved on (another worker took it).
 */
export async function mintAndRedeem(
  pool: DbPool,
  intentId: string,
  settlement: ConsumerRailAsset,
  now: Date,
): Promise<PaymentCapability | null> {
  return withTransaction(pool, async (client) => {
    const row = await getConsumerIntent(client, intentId, { forUpdate: true });
    if (row === null || row.state !== 'EXECUTION_QUEUED') return null;
    const quote = quoteOf(row);
    const capability = mintPaymentCapability({
      capabilityId: newCapabilityId(),
      intentId,
      network: settlement.network,
      asset: { token: settlement.token, name: settlement.name, version: settlement.version },
      payer: settlement.treasury,
      ceilingAtomic: quote.providerCost,
      payTo: quote.payTo,
      now,
    });
    await client.query(
      `INSERT INTO intent.payment_capabilities
         (capability_id, intent_id, network, token, token_name, token_version, payer, ceiling,
          recipients, minted_at, expires_at)
       VALUES ($1, $2, $3, lower($4), $5, $6, lower($7), $8, $9, $10, $11)`,
      [
        capability.capabilityId,
        intentId,
        capability.network,
        capability.asset.token,
        capability.asset.name,
        capability.asset.version,
        capability.payer,
        capability.ceilingAtomic.toString(),
        capability.recipients.map((recipient) => recipient.toLowerCase()),
        now,
        capability.expiresAt,
      ],
    );
    const redeemed = await client.query(
      `UPDATE intent.payment_capabilities SET redeemed_at = $2
        WHERE capability_id = $1 AND redeemed_at IS NULL`,
      [capability.capabilityId, now],
    );
    if (redeemed.rowCount !== 1) throw new Error('a fresh capability could not be redeemed');
    return { ...capability, redeemedAt: now };
  });
}

export interface SignedRecord {
  readonly row: ConsumerIntentRow;
}

/**
 * Records the signed authorization on the capability and moves the intent EXECUTION_QUEUED →
 * PROVIDER_PAYMENT_PENDING with `settlement.authorization`, in one transaction. Throws when the
 * intent is no longer queued or the capability was already used: the signature is then dropped.
 */
export async function recordSignedAuthorization(
  pool: DbPool,
  capability: PaymentCapability,
  authorization: TransferAuthorization,
  extra: { readonly fromBlock: string; readonly now: Date },
): Promise<ConsumerIntentRow> {
  const stored = storedAuthorization(authorization);
  return withTransaction(pool, async (client) => {
    const row = await getConsumerIntent(client, capability.intentId, { forUpdate: true });
    if (row === null || row.state !== 'EXECUTION_QUEUED')
      throw new AppError('ILLEGAL_STATE_TRANSITION', 'The intent is no longer queued for payment.');
    const signedCapability = await client.query(
      `UPDATE intent.payment_capabilities SET signed_authorization = $2, signed_at = $3
        WHERE capability_id = $1 AND intent_id = $4 AND redeemed_at IS NOT NULL AND signed_at IS NULL`,
      [capability.capabilityId, stored, extra.now, capability.intentId],
    );
    if (signedCapability.rowCount !== 1)
      throw new Error(`capability ${capability.capabilityId} cannot sign (unredeemed or used)`);
    const moved = await transitionConsumerIntent(
      client,
      capability.intentId,
      'EXECUTION_QUEUED',
      'PROVIDER_PAYMENT_PENDING',
      {
        now: extra.now,
        changes: {
          settlement: SettlementLegSchema.parse({
            capabilityId: capability.capabilityId,
            authorization: stored,
            signedAt: extra.now.toISOString(),
            fromBlock: extra.fromBlock,
          }),
        },
      },
    );
    if (moved === null) throw new Error('the intent left EXECUTION_QUEUED under its row lock');
    return moved;
  });
}
