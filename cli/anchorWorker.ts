// The anchoring worker: on an interval (and on demand through runOnce, for tests and operators),
// one round of the anchoring job (subgraphs/intent/anchoring/job.ts): batches of receipts, one
// ReceiptAnchor transaction each. It holds the writer key; rounds of several workers are
// serialised by the job's advisory lock.
import type { Pool } from 'pg';
import type { Address } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import {
  type ChainEndpoint,
  createChainPublicClient,
  createChainWalletClient,
} from '../platform/chain/clients';
import type { Logger } from '../platform/log';
import {
  type AnchorRoundResult,
  DEFAULT_ANCHOR_BATCH_SECONDS,
  DEFAULT_ANCHOR_BATCH_SIZE,
  runAnchorRound,
} from '../subgraphs/intent';
import { startRoundLoop } from './roundLoop';

/** Default pause between rounds: well under the default ANCHOR_BATCH_SECONDS. */
export const DEFAULT_ANCHOR_INTERVAL_MS = 500;
/** What sending a batch and seeing its receipt takes on a fast chain, with room to spare. */
const SEND_ALLOWANCE_MS = 300;

export interface AnchorWorkerOptions {
  /** The funding chain, where the ReceiptAnchor contract is. */
  readonly chain: ChainEndpoint;
  readonly contract: Address;
  /** The writer (the key store's anchorWriter, or ANCHOR_WRITER_PRIVATE_KEY). */
  readonly writer: PrivateKeyAccount;
  readonly batchSize?: number;
  readonly batchSeconds?: number;
  /** Blocks (the landing one included) before a batch is ANCHORED; default 1. */
  readonly confirmations?: number;
  /** Blocks at which an ANCHORED batch is read again (re-sent if a re-org dropped it); default 64. */
  readonly recheckDepth?: number;
  /** Pause between rounds; 0 runs no loop (rounds only through runOnce). */
  readonly intervalMs: number;
}

export interface RunningAnchorWorker {
  runOnce(): Promise<AnchorRoundResult>;
  stop(): Promise<void>;
}

export function startAnchorWorker(
  options: AnchorWorkerOptions & {
    readonly db: Pool;
    readonly log: Logger;
    readonly now?: () => Date;
  },
): RunningAnchorWorker {
  const clientOptions = { pollingIntervalMs: 50 };
  const deps = {
    db: options.db,
    publicClient: createChainPublicClient(options.chain, clientOptions),
    writer: createChainWalletClient(options.chain, options.writer, clientOptions),
    contract: options.contract,
    batchSize: options.batchSize ?? DEFAULT_ANCHOR_BATCH_SIZE,
    batchSeconds: options.batchSeconds ?? DEFAULT_ANCHOR_BATCH_SECONDS,
    confirmations: options.confirmations ?? 1,
    recheckDepth: options.recheckDepth,
    // A looping worker closes small batches one round plus a send before T, so T is the deadline
    // a receipt is ANCHORED by; rounds stepped by hand (interval 0) close exactly at T.
    closeLeadMs: options.intervalMs > 0 ? options.intervalMs + SEND_ALLOWANCE_MS : 0,
    now: options.now ?? (() => new Date()),
    log: options.log,
  };
  const loop = startRoundLoop(
    async () => {
      const result = await runAnchorRound(deps);
      if (result.anchored + result.failed > 0)
        options.log.info({ ...result }, 'receipt batches settled');
      return result;
    },
    options.intervalMs,
    (error: unknown) => options.log.error({ err: error }, 'anchoring round failed'),
  );
  return { runOnce: loop.runOnce, stop: loop.stop };
}
