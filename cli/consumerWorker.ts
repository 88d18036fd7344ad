// The consumer execution worker: on an interval (and on demand through runOnce, for tests and
// operators), one round executes queued purchases (or finishes what a crashed run left), checks
// deliveries against the RDAP registry, sends owed refunds, reads chain truth for ambiguous
// payments, refunds a FUNDED intent whose quote expired unexecuted and decides an intent a crash
// left in POLICY_CHECKING. It holds the treasury signer (the
// only holder of the treasury key) and the funding rail's relayer (refund gas); the payment
// adapter it drives sees neither.
import { Client, type Pool } from 'pg';
import { createChainWalletClient } from '../platform/chain/clients';
import { relayerAccount } from '../platform/chain/facilitatorSigner';
import type { RoleKey } from '../platform/chain/keys';
import { createTreasurySigner } from '../platform/chain/treasurySigner';
import type { Logger } from '../platform/log';
import type { RdapClient } from '../platform/rdap';
import { deriveSealingKey } from '../platform/sealing';
import { startRoundLoop } from './roundLoop';
import {
  assertDeliveryRetryPolicy,
  DEFAULT_DELIVERY_RETRY,
  type DeliveryRetryPolicy,
  type ExecutionRoundResult,
  registerConsumerAssets,
  runConsumerExecutionRound,
  runConsumerIntentNow,
  WAKING_STATES,
} from '../subgraphs/intent';
import type { ConsumerRails } from '../subgraphs/kit';

/** Default pause between rounds in `npm start`. */
export const DEFAULT_EXECUTION_INTERVAL_MS = 250;
/** Default bound on one paid exchange with a merchant (402, signature, paid answer). */
export const DEFAULT_MERCHANT_TIMEOUT_MS = 30_000;

export interface ConsumerExecutionOptions {
  /** The treasury key (pays merchants on the settlement rail, refunds on the funding rail). */
  readonly treasuryKey: RoleKey;
  /** Pays the gas of refunds on the funding rail. */
  readonly relayerKey: RoleKey;
  /** Pause between rounds; 0 runs no loop (rounds only through runOnce). */
  readonly intervalMs: number;
  /**
   * Act on an intent as soon as the database announces it queued (LISTEN consumer_intent), rather
   * than at the next round; default true. Tests that step rounds by hand turn it off.
   */
  readonly wakeOnNotify?: boolean;
  /**
   * DATABASE_LISTEN_URL: LISTEN on a connection of its own to this URL (direct, when `db` goes
   * through a pooler in transaction mode); absent: on one of `db`'s connections.
   */
  readonly listenDatabaseUrl?: string | null;
  readonly requestTimeoutMs?: number;
  /**
   * The RDAP client delivery checks ask (the registry, never the merchant); `npm start` passes the
   * one cli/rdap.ts prepares. Absent: this worker runs no delivery job and DELIVERY_PENDING waits
   * for a worker that has one. The subgraphs of the same process answer POST /verify_delivery with it.
   */
  readonly rdap?: RdapClient;
  /** Checks without a usable answer before MANUAL_REVIEW, and the waits between them; default 5 and 2 s…2 min. */
  readonly deliveryRetry?: DeliveryRetryPolicy;
  /**
   * The actor secret the escalation codes' sealing key comes from: with it the worker decides an
   * intent a crash left in POLICY_CHECKING; without it such intents wait for a worker that has it.
   */
  readonly actorSecret?: Buffer;
}

export interface RunningConsumerWorker {
  runOnce(): Promise<ExecutionRoundResult>;
  stop(): Promise<void>;
}

export async function startConsumerExecutionWorker(
  options: ConsumerExecutionOptions & {
    readonly db: Pool;
    readonly rails: ConsumerRails;
    readonly log: Logger;
    readonly now?: () => Date;
  },
): Promise<RunningConsumerWorker> {
  await registerConsumerAssets(options.db, options.rails);
  const retry = options.deliveryRetry ?? DEFAULT_DELIVERY_RETRY;
  assertDeliveryRetryPolicy(retry);
  if (options.rdap === undefined)
    options.log.info('consumer worker without an RDAP client: deliveries are not checked here');
  const funding = options.rails.funding;
  const deps = {
    db: options.db,
    rails: options.rails,
    signer: createTreasurySigner(options.treasuryKey),
    refundRelayer: createChainWalletClient(
      { chainId: funding.chainId, rpcUrl: funding.rpcUrl },
      relayerAccount(options.relayerKey.exportPrivateKey()),
      { pollingIntervalMs: 50 },
    ),
    log: options.log,
    now: options.now ?? (() => new Date()),
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_MERCHANT_TIMEOUT_MS,
    delivery: options.rdap === undefined ? null : { rdap: options.rdap, retry },
    ...(options.actorSecret === undefined
      ? {}
      : { sealingKey: deriveSealingKey(options.actorSecret) }),
  };
  const loop = startRoundLoop(
    () => runConsumerExecutionRound(deps),
    options.intervalMs,
    (error: unknown) => options.log.error({ err: error }, 'consumer execution round failed'),
  );
  const woken = new Set<Promise<unknown>>();
  const listener = await wakeUps(options, loop, deps, woken).catch(async (error: unknown) => {
    await loop.stop();
    throw error;
  });
  return {
    runOnce: loop.runOnce,
    async stop() {
      const stopping = loop.stop();
      await listener?.stop();
      await Promise.all([...woken]);
      await stopping;
    },
  };
}

type WakingState = (typeof WAKING_STATES)[number];

/** The NOTIFY wake-up (unless turned off): each announced intent runs at once, tracked in `woken`. */
function wakeUps(
  options: {
    readonly db: Pool;
    readonly log: Logger;
    readonly wakeOnNotify?: boolean;
    readonly listenDatabaseUrl?: string | null;
  },
  loop: { readonly stopped: boolean },
  deps: Parameters<typeof runConsumerIntentNow>[0],
  woken: Set<Promise<unknown>>,
): Promise<{ stop(): Promise<void> } | null> {
  if (options.wakeOnNotify === false) return Promise.resolve(null);
  return listenForQueued(options.db, options.listenDatabaseUrl ?? null, (intentId, state) => {
    if (loop.stopped) return;
    const run = runConsumerIntentNow(deps, intentId, state).catch((error: unknown) =>
      options.log.error({ err: error, intentId }, 'consumer wake-up failed; the round retries'),
    );
    woken.add(run);
    void run.finally(() => woken.delete(run));
  });
}

/**
 * One connection held for LISTEN consumer_intent (a pooled one, or one of its own to `listenUrl`):
 * each state change the trigger announces (on commit only) into a state a job acts on calls
 * `wake`. A lost connection only costs latency: the interval rounds still find everything.
 */
async function listenForQueued(
  pool: Pool,
  listenUrl: string | null,
  wake: (intentId: string, state: WakingState) => void,
): Promise<{ stop(): Promise<void> }> {
  const client = await listenConnection(pool, listenUrl);
  const onNotice = (message: { channel: string; payload?: string }) => {
    if (message.channel !== 'consumer_intent' || message.payload === undefined) return;
    let notice: { intentId?: unknown; state?: unknown };
    try {
      notice = JSON.parse(message.payload) as typeof notice;
    } catch {
      return;
    }
    const state = WAKING_STATES.find((candidate) => candidate === notice.state);
    if (state !== undefined && typeof notice.intentId === 'string') wake(notice.intentId, state);
  };
  client.on('notification', onNotice);
  let broken = false;
  client.on('error', () => {
    broken = true;
  });
  await client.query('LISTEN consumer_intent');
  return {
    async stop() {
      client.off('notification', onNotice);
      if (!broken) await client.query('UNLISTEN consumer_intent').catch(() => (broken = true));
      await client.done(broken);
    },
  };
}

interface ListenConnection {
  query(sql: string): Promise<unknown>;
  on(
    event: 'notification',
    listener: (message: { channel: string; payload?: string }) => void,
  ): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  off(
    event: 'notification',
    listener: (message: { channel: string; payload?: string }) => void,
  ): unknown;
  done(broken: boolean): Promise<void>;
}

/** A pooled connection, or a client of its own on `listenUrl` (closed when done). */
async function listenConnection(pool: Pool, listenUrl: string | null): Promise<ListenConnection> {
  if (listenUrl === null) {
    const pooled = await pool.connect();
    return Object.assign(pooled, {
      done: (broken: boolean) => Promise.resolve(pooled.release(broken)),
    });
  }
  const own = new Client({ connectionString: listenUrl, application_name: 'spend-control-listen' });
  own.on('error', () => undefined);
  await own.connect();
  return Object.assign(own, { done: () => own.end().catch(() => undefined) });
}
