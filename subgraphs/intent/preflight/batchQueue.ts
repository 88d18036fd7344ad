// Group commit: requests queue up while earlier batches are in flight, and the next batch takes
// every queued request it may, so batches stay at one request when the service is idle (no timer,
// no added latency) and grow with the load. Requests carry a key (the policy); a key is never in
// two batches at once, and a batch holds at most maxPerKey requests of one key, in arrival order:
// the runner must run them in that order, each after the one before it took effect. So the
// requests of one key run one after the other in arrival order while requests of different keys
// (and successive requests of one key) share transactions.
//
// When a batch fails before anything of it committed, the batch runner says so by throwing
// BatchNotCommitted and each of its requests is run again alone, so one bad request costs the
// others a retry, never their answer. Any other failure (a COMMIT whose outcome is unknown) is
// every request's answer: running them again could decide twice.

export type Settled<R> =
  { readonly ok: true; readonly value: R } | { readonly ok: false; readonly error: unknown };

/** Thrown by a batch runner when nothing of the batch was committed; `cause` is the failure. */
export class BatchNotCommitted extends Error {
  constructor(readonly cause: unknown) {
    super('batch rolled back');
    this.name = 'BatchNotCommitted';
  }
}

export interface BatchQueueOptions {
  /** Most requests in one batch. */
  readonly maxItems: number;
  /** Most requests of one key in one batch (default 1). */
  readonly maxPerKey?: number;
  /** Most batches running at once. */
  readonly maxInFlight: number;
  /**
   * A batch beyond the first starts only once every running batch is committing (its runner said
   * so, see BatchSignals) or has run this long (ms). A healthy batch reaches its commit first, so
   * what waits goes into one bigger batch that overlaps only that commit; one stuck on a lock does
   * not hold every other key up. Absent: a free slot is used at once.
   */
  readonly spareAfterMs?: number;
}

/** What a batch runner may tell the queue while its batch runs. */
export interface BatchSignals {
  /** The batch needs nothing more but its last round trip (its commit): the next batch may start. */
  committing(): void;
}

export interface BatchQueueStats {
  batches: number;
  requests: number;
  /** Requests run again alone after their batch rolled back. */
  retriedAlone: number;
}

interface Waiting<T, R> {
  readonly request: T;
  readonly resolve: (value: R) => void;
  readonly reject: (error: unknown) => void;
}

export class KeyedBatchQueue<T, R> {
  private readonly waiting: Array<Waiting<T, R>> = [];
  private readonly busyKeys = new Set<string>();
  private inFlight = 0;
  /** The batches running: when each started (performance.now()) and whether it is committing. */
  private readonly running = new Set<{ at: number; committing: boolean }>();
  private spareTimer: NodeJS.Timeout | null = null;
  readonly stats: BatchQueueStats = { batches: 0, requests: 0, retriedAlone: 0 };

  constructor(
    private readonly runBatch: (
      requests: readonly T[],
      signals: BatchSignals,
    ) => Promise<ReadonlyArray<Settled<R>>>,
    private readonly options: BatchQueueOptions,
    /** The key of a request (the policy). */
    private readonly keyOf: (request: T) => string,
  ) {
    if (!Number.isInteger(options.maxItems) || options.maxItems < 1)
      throw new Error('maxItems must be a positive integer');
    if (!Number.isInteger(options.maxInFlight) || options.maxInFlight < 1)
      throw new Error('maxInFlight must be a positive integer');
    if (
      options.maxPerKey !== undefined &&
      (!Number.isInteger(options.maxPerKey) || options.maxPerKey < 1)
    ) {
      throw new Error('maxPerKey must be a positive integer');
    }
    if (
      options.spareAfterMs !== undefined &&
      !(Number.isFinite(options.spareAfterMs) && options.spareAfterMs >= 0)
    ) {
      throw new Error('spareAfterMs must be a non-negative number');
    }
  }

  submit(request: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      this.pump();
    });
  }

  /** Requests waiting for a batch (not counting the ones in flight). */
  get queued(): number {
    return this.waiting.length;
  }

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length > 0) {
      const spareIn = this.spareSlotIn();
      if (spareIn > 0) {
        this.spareTimer ??= setTimeout(() => {
          this.spareTimer = null;
          this.pump();
        }, spareIn);
        return;
      }
      const batch = this.takeBatch();
      if (batch.length === 0) return; // everything waiting belongs to keys already in flight
      this.inFlight += 1;
      const started = { at: performance.now(), committing: false };
      this.running.add(started);
      for (const entry of batch) this.busyKeys.add(this.keyOf(entry.request));
      const signals: BatchSignals = {
        committing: () => {
          if (started.committing) return;
          started.committing = true;
          this.pump();
        },
      };
      void this.run(batch, signals).finally(() => {
        for (const entry of batch) this.busyKeys.delete(this.keyOf(entry.request));
        this.running.delete(started);
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  /** How long (ms) until a slot beyond the first may be used; 0: now. */
  private spareSlotIn(): number {
    const spareAfterMs = this.options.spareAfterMs;
    if (spareAfterMs === undefined || this.inFlight === 0) return 0;
    let youngest = -Infinity; // the latest start among batches not yet committing
    for (const started of this.running)
      if (!started.committing) youngest = Math.max(youngest, started.at);
    return Math.max(0, youngest + spareAfterMs - performance.now());
  }

  /** In arrival order: the first maxPerKey waiting requests of each key that is not in flight. */
  private takeBatch(): Array<Waiting<T, R>> {
    const maxPerKey = this.options.maxPerKey ?? 1;
    const batch: Array<Waiting<T, R>> = [];
    const taken = new Map<string, number>();
    const left: Array<Waiting<T, R>> = [];
    for (const entry of this.waiting) {
      const key = this.keyOf(entry.request);
      const count = taken.get(key) ?? 0;
      if (batch.length >= this.options.maxItems || this.busyKeys.has(key) || count >= maxPerKey) {
        left.push(entry);
        continue;
      }
      taken.set(key, count + 1);
      batch.push(entry);
    }
    this.waiting.length = 0;
    this.waiting.push(...left);
    return batch;
  }

  private async run(batch: Array<Waiting<T, R>>, signals: BatchSignals): Promise<void> {
    this.stats.batches += 1;
    this.stats.requests += batch.length;
    try {
      const settled = await this.runBatch(
        batch.map((entry) => entry.request),
        signals,
      );
      if (settled.length !== batch.length)
        throw new Error(`batch runner settled ${settled.length} of ${batch.length} requests`);
      settled.forEach((outcome, index) =>
        outcome.ok ? batch[index]!.resolve(outcome.value) : batch[index]!.reject(outcome.error),
      );
    } catch (error) {
      if (error instanceof BatchNotCommitted && batch.length > 1) {
        // Alone, keys side by side, each key's requests still one after the other in their order.
        this.stats.retriedAlone += batch.length;
        const byKey = new Map<string, Array<Waiting<T, R>>>();
        for (const entry of batch) {
          const key = this.keyOf(entry.request);
          const entries = byKey.get(key);
          if (entries === undefined) byKey.set(key, [entry]);
          else entries.push(entry);
        }
        await Promise.all(
          [...byKey.values()].map(async (entries) => {
            for (const entry of entries) await this.run([entry], signals);
          }),
        );
        return;
      }
      const answer = error instanceof BatchNotCommitted ? error.cause : error;
      for (const entry of batch) entry.reject(answer);
    }
  }
}
