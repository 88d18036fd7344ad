// Operator operations on the ledger (admin only, enforced by the resolvers): record a float
// replenishment as a TREASURY_TRANSFER pair, reverse a group with a reason. Each is audited in
// ledger.operator_actions: in the same transaction when it succeeds, in its own when it fails.
import type { Pool, PoolClient } from 'pg';
import { AppError } from '../../../core/errors';
import type { Db } from '../../../platform/db';
import { withTransaction } from '../../../platform/db/transaction';
import { postTreasuryTransfer, reverseGroup, type TreasuryTransferGroups } from '../posting/writes';
import { ledgerErrorFrom } from '../sql';

export type OperatorAction = 'TREASURY_TRANSFER' | 'REVERSE_GROUP';

export interface AuditContext {
  /** describeActor(...) of the admin, e.g. `admin`. */
  readonly actor: string;
  readonly correlationId: string;
}

const AMOUNT_ATOMIC = /^[1-9][0-9]{0,77}$/;

/** A wire amount (positive decimal string of atomic units) as a bigint, or REQUEST_INVALID. */
export function parseAmountAtomic(field: string, value: string): bigint {
  if (!AMOUNT_ATOMIC.test(value)) {
    throw new AppError('REQUEST_INVALID', undefined, [
      { field, reason: 'must be a positive integer of atomic units, as a decimal string' },
    ]);
  }
  return BigInt(value);
}

async function insertAudit(
  db: Db,
  audit: AuditContext,
  action: OperatorAction,
  payload: unknown,
  result: Record<string, unknown>,
): Promise<void> {
  await db.query(
    'INSERT INTO ledger.operator_actions (actor, action, payload, result, correlation_id) VALUES ($1, $2, $3::jsonb, $4::jsonb, $5)',
    [audit.actor, action, JSON.stringify(payload), JSON.stringify(result), audit.correlationId],
  );
}

/**
 * Runs `work` and its audit row in one transaction; a refusal is audited on its own and rethrown.
 * The refusal's audit row is written only after the transaction's connection went back to the pool:
 * a caller holding one connection while it waits for another from the same pool deadlocks the pool
 * as soon as enough callers fail at once.
 */
export async function audited<T extends Record<string, unknown>>(
  pool: Pool,
  audit: AuditContext,
  action: OperatorAction,
  payload: unknown,
  work: (client: PoolClient) => Promise<T>,
): Promise<T> {
  try {
    return await withTransaction(pool, async (client) => {
      const outcome = await work(client);
      await insertAudit(client, audit, action, payload, { ok: true, ...outcome });
      return outcome;
    });
  } catch (error) {
    const refusal = error instanceof AppError ? error : ledgerErrorFrom(error);
    const summary =
      refusal === null
        ? { ok: false, code: 'INTERNAL_ERROR' }
        : { ok: false, code: refusal.code, message: refusal.message };
    // Nothing was posted; an audit row that cannot be written must not hide why.
    await insertAudit(pool, audit, action, payload, summary).catch(() => undefined);
    throw refusal ?? error;
  }
}

export interface TreasuryTransferRequest {
  readonly sourceAsset: string;
  readonly sourceAmountAtomic: string;
  readonly destinationAsset: string;
  readonly destinationAmountAtomic: string;
  readonly idempotencyKey: string;
  readonly memo?: string | null;
}

export function recordTreasuryTransfer(
  pool: Pool,
  audit: AuditContext,
  request: TreasuryTransferRequest,
): Promise<TreasuryTransferGroups> {
  return audited<{ sourceGroupId: string; destinationGroupId: string }>(
    pool,
    audit,
    'TREASURY_TRANSFER',
    request,
    (client) =>
      postTreasuryTransfer(client, {
        source: {
          asset: request.sourceAsset,
          amountAtomic: parseAmountAtomic('sourceAmountAtomic', request.sourceAmountAtomic),
        },
        destination: {
          asset: request.destinationAsset,
          amountAtomic: parseAmountAtomic(
            'destinationAmountAtomic',
            request.destinationAmountAtomic,
          ),
        },
        idempotencyKey: request.idempotencyKey,
        memo: request.memo ?? null,
      }).then((groups) => ({ ...groups })),
  );
}

export interface ReverseRequest {
  readonly groupId: string;
  readonly reason: string;
  readonly idempotencyKey: string;
}

export async function reverseLedgerGroup(
  pool: Pool,
  audit: AuditContext,
  request: ReverseRequest,
): Promise<string> {
  const { reversalGroupId } = await audited(
    pool,
    audit,
    'REVERSE_GROUP',
    request,
    async (client) => ({
      reversalGroupId: await reverseGroup(client, request),
    }),
  );
  return reversalGroupId;
}
