// The worker role: runs the background jobs on an interval (expire overdue escalations, deliver
// due notices, mark lapsed reservations EXPIRED, move consumer intents whose escalation was decided
// and expire unfunded ones past their quote, advance the ledger's balance checkpoint when it is
// due, keep the append-only logs' coming months partitioned). Jobs are claimed with FOR UPDATE
// SKIP LOCKED or under the policy's decision lock (the checkpoint takes turns on its own row, the
// logs' partitions are made one maker at a time), so any number of workers may run against one
// database.
// `runOnce` lets tests and operators run one round with a chosen clock.
import type { HttpMetrics } from '../platform/metrics';
import type { Pool } from 'pg';
import type { ChannelAdapter, ChannelKind } from '../channels/types';
import type { Logger } from '../platform/log';
import { type RoundLoop, startRoundLoop } from './roundLoop';
import { deriveSealingKey } from '../platform/sealing';
import {
  advanceConsumerApprovals,
  expireConsumerIntents,
  relayConsumerIntentEvents,
  sweepLapsedReservations,
} from '../subgraphs/intent';
import {
  deliverDueNotices,
  deliverDueWebhooks,
  sweepExpiredEscalations,
} from '../subgraphs/policy';
import { checkedRetrySchedule, DEFAULT_RETRY_SCHEDULE_MS } from '../core/ownerEvents/types';
import { type CheckpointOutcome, checkpointBalances, checkpointOverdue } from '../subgraphs/ledger';
import { ensureMonthPartitions } from '../platform/db/monthPartitions';

export interface EscalationWorkerOptions {
  readonly db: Pool;
  readonly actorSecret: Buffer;
  readonly adapters: Partial<Record<ChannelKind, ChannelAdapter>>;
  readonly dashboardBaseUrl: string;
  /** The service's public URL, for email confirmation links; default the dashboard's origin. */
  readonly publicUrl?: string;
  /** Pause between rounds; 0 runs no loop (rounds only through runOnce). */
  readonly intervalMs: number;
  readonly now?: () => Date;
  readonly log: Logger;
  /** Waits before each webhook retry; default 1 s, 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h. */
  readonly webhookRetryScheduleMs?: readonly number[];
  /** Development: owner webhook endpoints on loopback and private hosts are sent to. */
  readonly webhookInternalHosts?: boolean;
  /** The process's metrics (webhook attempts are counted there); absent: none kept. */
  readonly metrics?: HttpMetrics;
}

export interface RoundResult {
  /** Escalations expired (default deny), by pollRef. */
  readonly expired: readonly string[];
  readonly delivered: number;
  /** Reservations past their deadline marked EXPIRED. */
  readonly reservationsExpired: number;
  /** Consumer intents moved on after their escalation was decided (approved, denied or expired). */
  readonly consumerApprovalsAdvanced: number;
  /** Unfunded consumer intents past their quote's expiry, now EXPIRED. */
  readonly consumerIntentsExpired: number;
  /** Consumer-intent outbox rows relayed to the owners' webhook events. */
  readonly ownerEventsRelayed: number;
  /** Webhook deliveries attempted (delivered, retried or failed). */
  readonly webhooksAttempted: number;
  /** The ledger's balance checkpoint: not due, busy (try again next round) or advanced. */
  readonly balanceCheckpoint: CheckpointOutcome['kind'];
}

export interface RunningWorker {
  runOnce(): Promise<RoundResult>;
  stop(): Promise<void>;
}

/** Runs a batch step until it finds nothing more (or the loop stops); returns how many it took. */
async function untilDone(step: () => Promise<number>, stopped: () => boolean): Promise<number> {
  let total = 0;
  for (;;) {
    const taken = await step();
    total += taken;
    if (taken === 0 || stopped()) return total;
  }
}

/** The ledger's balance checkpoint, when due; says when it moved, and when it is overdue. */
async function checkpointStep(db: Pool, log: Logger, now: Date): Promise<CheckpointOutcome> {
  const checkpoint = await checkpointBalances(db, now);
  if (checkpoint.kind === 'ADVANCED')
    log.info(
      { from: checkpoint.from.toString(), through: checkpoint.throughSeq.toString() },
      'ledger balance checkpoint advanced',
    );
  else if (checkpoint.kind === 'BUSY' && checkpointOverdue(checkpoint.state, now))
    log.warn(
      {
        through: checkpoint.state.throughSeq.toString(),
        behind: (checkpoint.state.lastSeq - checkpoint.state.throughSeq).toString(),
        takenAt: checkpoint.state.takenAt.toISOString(),
      },
      'ledger balance checkpoint overdue: a long transaction keeps inserting entries open; balance reads grow until it ends',
    );
  return checkpoint;
}

/** How often the worker makes sure the logs' coming months are partitioned (platform/db/monthPartitions). */
const MONTH_PARTITIONS_EVERY_MS = 60 * 60_000;

/**
 * The append-only logs' coming months, made ahead (once an hour is plenty: three months ahead are
 * kept). A failure (a lock not granted in time) is logged and tried again next round; until a
 * month is made its rows go to the log's DEFAULT partition, so no write fails meanwhile.
 */
function monthPartitionsStep(db: Pool, log: Logger): (now: Date) => Promise<void> {
  let lastMadeAt: number | null = null;
  return async (now) => {
    if (lastMadeAt !== null && now.getTime() - lastMadeAt < MONTH_PARTITIONS_EVERY_MS) return;
    try {
      const made = await ensureMonthPartitions(db, now);
      lastMadeAt = now.getTime();
      if (made.length > 0)
        log.info({ partitions: made }, 'log partitions made for the coming months');
    } catch (error) {
      log.warn(
        { err: error },
        'log partitions for the coming months not made; trying again next round',
      );
    }
  };
}

export function startEscalationWorker(options: EscalationWorkerOptions): RunningWorker {
  const now = options.now ?? (() => new Date());
  const deps = {
    db: options.db,
    sealingKey: deriveSealingKey(options.actorSecret),
    adapters: options.adapters,
    dashboardBaseUrl: options.dashboardBaseUrl,
    publicUrl: options.publicUrl,
    log: options.log,
  };
  const webhooks = {
    db: options.db,
    sealingKey: deps.sealingKey,
    retryScheduleMs: checkedRetrySchedule(
      options.webhookRetryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS,
    ),
    allowInternalHosts: options.webhookInternalHosts ?? false,
    log: options.log,
    attempts: options.metrics?.business.webhookDeliveries,
  };
  let loop: RoundLoop<RoundResult> | null = null;
  const monthPartitions = monthPartitionsStep(options.db, options.log);
  const round = async (): Promise<RoundResult> => {
    await monthPartitions(now());
    const expired = await sweepExpiredEscalations(options.db, now());
    if (expired.length > 0)
      options.log.info({ expired: expired.length }, 'escalations expired (default deny)');
    const stopped = () => loop?.stopped === true;
    const delivered = await untilDone(() => deliverDueNotices(deps, now()), stopped);
    const reservationsExpired = await sweepLapsedReservations(options.db, now());
    if (reservationsExpired > 0)
      options.log.info({ reservations: reservationsExpired }, 'lapsed reservations expired');
    const consumerApprovalsAdvanced = await advanceConsumerApprovals(
      { db: options.db, sealingKey: deps.sealingKey },
      now(),
    );
    const consumerIntentsExpired = await expireConsumerIntents(options.db, now());
    if (consumerApprovalsAdvanced + consumerIntentsExpired > 0)
      options.log.info(
        { advanced: consumerApprovalsAdvanced, expired: consumerIntentsExpired },
        'consumer intents moved',
      );
    const ownerEventsRelayed = await untilDone(
      () => relayConsumerIntentEvents(options.db, now()),
      stopped,
    );
    const webhooksAttempted = await untilDone(() => deliverDueWebhooks(webhooks, now()), stopped);
    const checkpoint = await checkpointStep(options.db, options.log, now());
    return {
      expired,
      delivered,
      reservationsExpired,
      consumerApprovalsAdvanced,
      consumerIntentsExpired,
      ownerEventsRelayed,
      webhooksAttempted,
      balanceCheckpoint: checkpoint.kind,
    };
  };
  loop = startRoundLoop(round, options.intervalMs, (error: unknown) =>
    options.log.error({ err: error }, 'escalation worker round failed'),
  );
  return loop;
}
