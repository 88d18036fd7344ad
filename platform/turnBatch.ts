// Group commit for statements: calls made in the same event-loop turn are handed over together, so
// many writes that finish together (the members of one settlement group) share one transaction or
// one statement instead of one each. A batch of one goes alone; a batch whose shared write fails
// is retried one call at a time, so each call still gets exactly the answer (or the error) it
// would have had alone, and one bad item never sinks the others.

export interface TurnBatchWork<In, Out> {
  /** One call's write, as it would run without batching. */
  readonly alone: (item: In) => Promise<Out>;
  /**
   * The same writes for two or more calls, together, all or none (one transaction, or one
   * statement): answers in the order given. When it throws, nothing of it may have been kept.
   */
  readonly together: (items: readonly In[]) => Promise<readonly Out[]>;
  /** Most calls in one batch; the rest go in the next. */
  readonly maxSize: number;
}

interface Waiting<In, Out> {
  readonly item: In;
  readonly resolve: (out: Out) => void;
  readonly reject: (error: unknown) => void;
}

export class TurnBatch<In, Out> {
  private waiting: Waiting<In, Out>[] = [];
  private scheduled = false;
  /** Batches sent together and the calls they carried (for tests and benches). */
  readonly stats = { together: 0, carried: 0, alone: 0, retriedAlone: 0 };

  constructor(private readonly work: TurnBatchWork<In, Out>) {}

  add(item: In): Promise<Out> {
    const answer = new Promise<Out>((resolve, reject) =>
      this.waiting.push({ item, resolve, reject }),
    );
    if (!this.scheduled) {
      this.scheduled = true;
      // After this turn's microtasks: every call the same settlement released has arrived.
      setImmediate(() => this.flush());
    }
    return answer;
  }

  private flush(): void {
    this.scheduled = false;
    const all = this.waiting;
    this.waiting = [];
    for (let start = 0; start < all.length; start += this.work.maxSize)
      void this.send(all.slice(start, start + this.work.maxSize));
  }

  private async send(batch: readonly Waiting<In, Out>[]): Promise<void> {
    if (batch.length === 1) {
      this.stats.alone += 1;
      await this.runAlone(batch[0]!);
      return;
    }
    let answers: readonly Out[];
    try {
      answers = await this.work.together(batch.map((waiting) => waiting.item));
      if (answers.length !== batch.length)
        throw new Error(`a batch of ${batch.length} answered ${answers.length}`);
    } catch {
      // Nothing of the shared write was kept: each call now runs alone and meets its own fate.
      this.stats.retriedAlone += batch.length;
      await Promise.all(batch.map((waiting) => this.runAlone(waiting)));
      return;
    }
    this.stats.together += 1;
    this.stats.carried += batch.length;
    batch.forEach((waiting, index) => waiting.resolve(answers[index]!));
  }

  private async runAlone(waiting: Waiting<In, Out>): Promise<void> {
    try {
      waiting.resolve(await this.work.alone(waiting.item));
    } catch (error) {
      waiting.reject(error);
    }
  }
}

/** One TurnBatch per key (a connection pool: calls share a statement only on the same pool), made on first use. */
export class TurnBatches<Key extends object, In, Out> {
  private readonly batches = new WeakMap<Key, TurnBatch<In, Out>>();

  constructor(private readonly workFor: (key: Key) => TurnBatchWork<In, Out>) {}

  add(key: Key, item: In): Promise<Out> {
    let batch = this.batches.get(key);
    if (!batch) {
      batch = new TurnBatch(this.workFor(key));
      this.batches.set(key, batch);
    }
    return batch.add(item);
  }

  /** The key's batch counts, or null before its first call. */
  stats(key: Key): TurnBatch<In, Out>['stats'] | null {
    return this.batches.get(key)?.stats ?? null;
  }
}
