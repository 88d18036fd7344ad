// One round of the consumer execution worker: execute what is queued (or finish what a crashed
// run left half-way), check deliveries against the registry, send the refunds that are owed, read
// chain truth for the ambiguous payments, refund a FUNDED intent whose quote expired unexecuted,
// and decide an intent a crash left in POLICY_CHECKING. Each job claims its intents (claims.ts), so any
// number of workers may run.
import type { TreasurySigner } from '../../../../platform/chain/treasurySigner';
import type { ChainWalletClient } from '../../../../platform/chain/clients';
import type { DbPool } from '../../../../platform/db';
import type { Logger } from '../../../../platform/log';
import type { RdapClient } from '../../../../platform/rdap';
import type { ConsumerRails } from '../../../kit';
import { registerAsset } from '../../../ledger';
import { advanceDelivery, DELIVERY_CLAIM, type DeliveryDeps } from '../delivery/job';
import type { DeliveryRetryPolicy } from '../delivery/retry';
import { getConsumerIntent } from '../store';
import { type ClaimFilter, withClaimedIntents } from './claims';
import { advanceExecution } from './executor';
import { RECONCILE_WHERE, reconcileIntent } from './chainFindings';
import { advanceRefund, OWED_REFUND_CLAIM } from './refunds';
import { EXPIRED_FUNDED_CLAIM, refundExpiredFunded } from './expiredFunded';
import { decidePolicyCheck } from '../create/create';

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
  /**
   * Delivery verification (the registry over RDAP, and the retry bound); absent: this worker
   * leaves DELIVERY_PENDING intents to a worker that has it.
   */
  readonly delivery?: { readonly rdap: RdapClient; readonly retry: DeliveryRetryPolicy } | null;
  /**
   * The key escalation codes are sealed with (the policy check may open an escalation); absent:
   * this worker leaves intents stuck in POLICY_CHECKING to a worker that has it.
   */
  readonly sealingKey?: Buffer;
}

/** A POLICY_CHECKING intent this long untouched was left by a crash (a create answers in seconds). */
export const STALE_POLICY_CHECK_SECONDS = 30;

const STALE_POLICY_CHECK_CLAIM = {
  states: ['POLICY_CHECKING'],
  where: `updated_at <= now() - interval '${STALE_POLICY_CHECK_SECONDS} seconds'`,
} as const;

export interface ExecutionRoundResult {
  /** Intents advanced by the execution job. */
  readonly executed: number;
  /** Refunds attempted. */
  readonly refunds: number;
  /** Ambiguous payments whose chain finding was read. */
  readonly reconciled: number;
  /** Deliveries checked (or finished) by the delivery job. */
  readonly delivered: number;
  /** FUNDED intents whose quote expired unexecuted, moved to REFUND_PENDING. */
  readonly expired: number;
  /** Intents a crash left in POLICY_CHECKING, decided. */
  readonly policyChecked: number;
}

function deliveryDepsOf(deps: ConsumerExecutionDeps): DeliveryDeps | null {
  if (!deps.delivery) return null;
  return { ...deps.delivery, db: deps.db, log: deps.log, now: () => deps.now() };
}

/**
 * Executes one claimed intent and, once it reaches DELIVERY_PENDING, checks its delivery under the
 * same claim: the delivery's NOTIFY arrives while this claim still holds the intent, so a wake-up
 * could not take it, and the purchase would otherwise wait for the next round.
 */
function executeThenDeliver(deps: ConsumerExecutionDeps) {
  const delivery = deliveryDepsOf(deps);
  return async (intentId: string): Promise<void> => {
    await advanceExecution(deps, intentId);
    if (delivery !== null) await advanceDelivery(delivery, intentId);
  };
}

/** A MANUAL_REVIEW intent decided from the chain when its facts are in. */
function reconcileJob(deps: ConsumerExecutionDeps) {
  return async (intentId: string): Promise<void> => {
    const row = await getConsumerIntent(deps.db, intentId);
    if (row !== null) await reconcileIntent(deps.db, row, deps.rails, deps.now());
  };
}

/** A create cut off in POLICY_CHECKING: the policy decides it now. */
function policyCheckJob(deps: ConsumerExecutionDeps, sealingKey: Buffer) {
  return async (intentId: string): Promise<void> => {
    const row = await getConsumerIntent(deps.db, intentId);
    if (row?.state !== 'POLICY_CHECKING') return;
    await decidePolicyCheck({ db: deps.db, now: () => deps.now(), sealingKey }, row);
  };
}

export async function runConsumerExecutionRound(
  deps: ConsumerExecutionDeps,
): Promise<ExecutionRoundResult> {
  const claim = (
    spec: Omit<ClaimFilter, 'limit'>,
    job: (intentId: string) => Promise<void>,
    name: string,
  ): Promise<number> =>
    withClaimedIntents(deps.db, { ...spec, limit: EXECUTION_BATCH }, job, (intentId, error) =>
      deps.log.error({ err: error, intentId }, `consumer ${name} failed; retried next round`),
    );
  const executed = await claim(
    {
      states: [
        'EXECUTION_QUEUED',
        'PROVIDER_PAYMENT_PENDING',
        'PROVIDER_PAID',
        'PROVIDER_ACKNOWLEDGED',
      ],
    },
    executeThenDeliver(deps),
    'execution',
  );
  const delivery = deliveryDepsOf(deps);
  const delivered =
    delivery === null
      ? 0
      : await claim(DELIVERY_CLAIM, (id) => advanceDelivery(delivery, id), 'delivery');
  const refund = (id: string) => advanceRefund({ ...deps, relayer: deps.refundRelayer }, id);
  const refunds = await claim({ states: ['REFUND_PENDING'] }, refund, 'refund');
  const owedRefunds = await claim(OWED_REFUND_CLAIM, refund, 'owed refund');
  const reconciled = await claim(
    { states: ['MANUAL_REVIEW'], where: RECONCILE_WHERE },
    reconcileJob(deps),
    'reconciliation',
  );
  const expired = await claim(
    EXPIRED_FUNDED_CLAIM,
    (id) => refundExpiredFunded(deps, id),
    'expired funding',
  );
  const sealingKey = deps.sealingKey;
  const policyChecked =
    sealingKey === undefined
      ? 0
      : await claim(STALE_POLICY_CHECK_CLAIM, policyCheckJob(deps, sealingKey), 'policy check');
  return {
    executed,
    refunds: refunds + owedRefunds,
    reconciled,
    delivered,
    expired,
    policyChecked,
  };
}

/** The states a worker woken by the intent's NOTIFY acts on at once, and the job that does. */
export const WAKING_STATES = ['EXECUTION_QUEUED', 'DELIVERY_PENDING', 'REFUND_PENDING'] as const;

function jobFor(
  deps: ConsumerExecutionDeps,
  state: (typeof WAKING_STATES)[number],
): ((intentId: string) => Promise<void>) | null {
  switch (state) {
    case 'EXECUTION_QUEUED':
      return executeThenDeliver(deps);
    case 'DELIVERY_PENDING': {
      const delivery = deliveryDepsOf(deps);
      return delivery === null ? null : (id) => advanceDelivery(delivery, id);
    }
    case 'REFUND_PENDING':
      return (id) => advanceRefund({ ...deps, relayer: deps.refundRelayer }, id);
  }
}

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
  const work = jobFor(deps, state);
  if (work === null) return false;
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
