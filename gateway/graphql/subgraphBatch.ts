// Coalesces the gateway's concurrent calls to one subgraph into one HTTP request: operations
// queued while the event loop handles one round of I/O leave together as `{"operations": [...]}`
// (each with its own signed actor and correlation id) and each comes back on its own as soon as
// the subgraph has it (subgraphs/kit/operationHttp.ts): one round trip, one parse and one wake-up
// of each process for every preflight in flight instead of one each, and no operation waiting
// for the slowest of its batch. A lone operation still goes as a plain GraphQL-over-HTTP request.
// The queue is bounded (SUBGRAPH_BATCH_MAX).

/** Most operations per batched request (the subgraph accepts up to 64). */
export const SUBGRAPH_BATCH_MAX = 32;

/** One operation as the batch carries it. */
export interface BatchedOperation {
  operationName?: string | null;
  variables?: unknown;
  extensions: Record<string, unknown>;
  query?: string;
  actor?: string;
  correlationId?: string;
}

/** The subgraph's answer to one batched operation. */
export interface BatchedAnswer {
  status: number;
  headers?: Array<[string, string]>;
  result: unknown;
}

interface Waiting {
  operation: BatchedOperation;
  resolve(answer: BatchedAnswer): void;
  reject(error: unknown): void;
}

/**
 * A queue per subgraph: `submit` resolves with that operation's answer. `sendOne` sends a lone
 * operation the plain way; `sendMany` sends several, hands each answer to `answer` (by the
 * operation's index) as it arrives and settles when the request ends. An operation still without
 * an answer then fails: with the request's error, or because the subgraph never answered it.
 */
export class SubgraphBatcher {
  private queue: Waiting[] = [];
  private scheduled = false;

  constructor(
    private readonly sendOne: (operation: BatchedOperation) => Promise<BatchedAnswer>,
    private readonly sendMany: (
      operations: BatchedOperation[],
      answer: (index: number, answer: BatchedAnswer) => void,
    ) => Promise<void>,
  ) {}

  submit(operation: BatchedOperation): Promise<BatchedAnswer> {
    return new Promise((resolve, reject) => {
      this.queue.push({ operation, resolve, reject });
      if (this.queue.length >= SUBGRAPH_BATCH_MAX) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const waiting = this.queue;
    this.queue = [];
    if (waiting.length === 0) return;
    if (waiting.length === 1) {
      this.sendOne(waiting[0].operation).then(waiting[0].resolve, waiting[0].reject);
      return;
    }
    const unanswered = new Set(waiting.keys());
    const answer = (index: number, batched: BatchedAnswer) => {
      if (!unanswered.delete(index)) return; // answered twice: the first answer stands
      waiting[index].resolve(batched);
    };
    const failRest = (error: unknown) => {
      for (const index of unanswered) waiting[index].reject(error);
      unanswered.clear();
    };
    this.sendMany(
      waiting.map((entry) => entry.operation),
      answer,
    ).then(() => {
      if (unanswered.size > 0)
        failRest(new Error(`batch of ${waiting.length} left ${unanswered.size} unanswered`));
    }, failRest);
  }
}
