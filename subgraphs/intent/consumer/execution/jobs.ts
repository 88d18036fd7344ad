// One round of the consumer execution worker: execute what is queued (or finish what a crashed
// run left half-way), send the refunds that are owed, and read chain truth for the ambiguous
// payments. Each job claims its intents (claims.ts), so any number of workers may run.
import type { TreasurySigner } from '../../../../platform/chain/treasurySigner';
import type { ChainWalletClient } from '../../../../platform/chain/clients';
import type { DbPool } from '../../../../platform/db';
import type { Logger } from '../../../../platform/log';
import type { ConsumerRails } from '../../../kit';
import { registerAsset } from '../../../ledger';
import { getConsumerIntent } from '../store';
import { withClaimedIntents } from './claims';
import { advanceExecution } from './executor';
import { RECONCILE_WHERE, reconcileIntent } from './reconciler';
import { advanceRefund, OWED_REFUND_CLAIM } from './refunds';

/** Intents taken per job per round; they run in parallel. */
export const EXECUTION_BATCH = 16;

export interface ConsumerExecutionDeps {
  readonly db: DbPool;
  readonly rails: ConsumerRails;
  readonly signer: TreasurySigner;
  /** The funding rail's relayer: pays the gas of refunds. */
  readonly refundRelayer: ChainWalletClient;
  readonly log: Logger;
  now(): Date;
  readonly requestTimeoutMs: number;
  readonly fetch?: typeof globalThis.fetch;
}

export interface ExecutionRoundResult {
  /** Intents advanced by the execution job. */
  readonly executed: number;
  /** Refunds attempted. */
  readonly refunds: number;
  /** Ambiguous payments whose chain finding was read. */
  readonly reconciled: number;
}

export async function runConsumerExecutionRound(
  deps: ConsumerExecutionDeps,
): Promise<ExecutionRoundResult> {
  const onError = (job: string) => (intentId: string, error: unknown) =>
    deps.log.error({ err: error, intentId }, `consumer ${job} failed; retried next round`);
  const executed = await withClaimedIntents(
    deps.db,
    {
      states: [
        'EXECUTION_QUEUED',
        'PROVIDER_PAYMENT_PENDING',
        'PROVIDER_PAID',
        'PROVIDER_ACKNOWLEDGED',
      ],
      limit: EXECUTION_BATCH,
    },
    (intentId) => advanceExecution(deps, intentId),
    onError('execution'),
  );
  const refunds = await withClaimedIntents(
    deps.db,
    { states: ['REFUND_PENDING'], limit: EXECUTION_BATCH },
    (intentId) => advanceRefund({ ...deps, relayer: deps.refundRelayer }, intentId),
    onError('refund'),
  );
  const owedRefunds = await withClaimedIntents(
    deps.db,
    { ...OWED_REFUND_CLAIM, limit: EXECUTION_BATCH },
    (intentId) => advanceRefund({ ...deps, relayer: deps.refundRelayer }, intentId),
    onError('owed refund'),
  );
  const reconciled = await withClaimedIntents(
    deps.db,
    { states: ['MANUAL_REVIEW'], where: RECONCILE_WHERE, limit: EXECUTION_BATCH },
    async (intentId) => {
      const row = await getConsumerIntent(deps.db, intentId);
      if (row !== null) await reconcileIntent(deps.db, row, deps.rails, deps.now());
    },
    onError('reconciliation'),
  );
  return { executed, refunds: refunds + owedRefunds, reconciled };
}

/** The states a worker woken by the intent's NOTIFY acts on at once, and the job that does. */
export const WAKING_STATES = ['EXECUTION_QUEUED', 'REFUND_PENDING'] as const;

/**
 * Runs the job for one intent now, as soon as its state change is announced (NOTIFY
 * `consumer_intent`), instead of at the next round: the claim is the same (SKIP LOCKED plus the
 * advisory lock), so a round or another worker that took it first simply wins. Returns whether
 * this call ran it.
 */
export async function runConsumerIntentNow(
  deps: ConsumerExecutionDeps,
  intentId: string,
  state: (typeof WAKING_STATES)[number],
): Promise<boolean> {
  const onError = (failed: string, error: unknown) =>
    deps.log.error(
      { err: error, intentId: failed },
      `consumer ${state} job failed; retried next round`,
    );
  const work =
    state === 'EXECUTION_QUEUED'
      ? (id: string) => advanceExecution(deps, id)
      : (id: string) => advanceRefund({ ...deps, relayer: deps.refundRelayer }, id);
  const ran = await withClaimedIntents(
    deps.db,
    { states: [state], intentIds: [intentId], limit: 1 },
    work,
    onError,
  );
  return ran > 0;
}

/** Both rails' assets, registered with the ledger before the first posting (idempotent). */
export async function registerConsumerAssets(db: DbPool, rails: ConsumerRails): Promise<void> {
  for (const rail of [rails.funding, rails.settlement]) {
    await registerAsset(db, {
      chain: rail.network,
      token: rail.token.toLowerCase(),
      symbol: rail.symbol,
      decimals: rail.decimals,
    });
  }
}
