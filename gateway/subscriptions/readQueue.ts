// A bounded queue for the state reads of subscriptions (snapshots, changed escalations): at most
// `concurrency` run at once, so subscribers can never hold more than that many of the database
// pool's connections, and at most `maxWaiting` wait; a read beyond that fails at once with
// SERVICE_UNAVAILABLE (the subscriber is told, never left silent) instead of piling up in memory.
// The reads of notifications (at most one running or waiting per keyed topic, however many
// subscribers it has) share the same slots but wait their turn instead of being refused. Reads of
// the same thing (a key) that are still waiting for a slot are one read (runShared): the sockets an
// owner opens together, or every socket re-reading after a lost LISTEN connection, cost one read
// per owner rather than one per socket.
import { GraphQLError } from 'graphql';
import { ERROR_CODES } from '../../core/errors';
import { Semaphore } from '../../platform/semaphore';

export class ReadQueue {
  private readonly slots: Semaphore;
  /** Shared reads still waiting for a slot, by key: a caller of the same key joins one of these. */
  private readonly waiting = new Map<string, Promise<unknown>>();

  constructor(concurrency: number, maxWaiting: number) {
    this.slots = new Semaphore(concurrency, maxWaiting);
  }

  async run<T>(read: () => Promise<T>): Promise<T> {
    const acquiring = this.slots.tryAcquire();
    if (acquiring === null) throw QUEUE_FULL;
    return this.holding(await acquiring, read);
  }

  /**
   * run(), shared by key: a read of `key` that is still waiting for a slot is joined (its result or
   * error is every joiner's); once it has started, the next caller queues a read of its own. So a
   * joiner's read always starts after it joined, and sees everything committed before that.
   */
  runShared<T>(key: string, read: () => Promise<T>): Promise<T> {
    const joined = this.waiting.get(key);
    if (joined !== undefined) return joined as Promise<T>;
    const shared = this.run(() => {
      this.waiting.delete(key);
      return read();
    });
    this.waiting.set(key, shared);
    // Refused (queue full) before it started: the key is free again.
    shared.catch(() => {
      if (this.waiting.get(key) === shared) this.waiting.delete(key);
    });
    return shared;
  }

  /** Waits its turn with no bound on the queue: for the notification reads, one per keyed topic at most. */
  async runInTurn<T>(read: () => Promise<T>): Promise<T> {
    return this.holding(await this.slots.acquire(), read);
  }

  private async holding<T>(release: () => void, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } finally {
      release();
    }
  }
}

/**
 * Made once: refusing a burst of reads must not cost an error object each. Its stack would only
 * show module loading, yet graphql-ws reads it when it wraps the error: a plain one costs nothing.
 */
const QUEUE_FULL = new GraphQLError(
  'Too many subscription reads are waiting; subscribe again shortly.',
  {
    extensions: {
      code: 'SERVICE_UNAVAILABLE',
      status: ERROR_CODES.SERVICE_UNAVAILABLE.status,
      retryable: ERROR_CODES.SERVICE_UNAVAILABLE.retryable,
    },
  },
);
QUEUE_FULL.stack = `GraphQLError: ${QUEUE_FULL.message}`;
