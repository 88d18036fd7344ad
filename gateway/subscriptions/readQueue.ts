// A bounded queue for the state reads of subscriptions (snapshots, changed escalations): at most
// `concurrency` run at once, so subscribers can never hold more than that many of the database
// pool's connections, and at most `maxWaiting` wait; a read beyond that fails at once with
// SERVICE_UNAVAILABLE (the subscriber is told, never left silent) instead of piling up in memory.
// The reads of notifications (at most one running or waiting per keyed topic, however many
// subscribers it has) share the same slots but wait their turn instead of being refused.
import { GraphQLError } from 'graphql';
import { ERROR_CODES } from '../../core/errors';
import { Semaphore } from '../../platform/semaphore';

export class ReadQueue {
  private readonly slots: Semaphore;

  constructor(concurrency: number, maxWaiting: number) {
    this.slots = new Semaphore(concurrency, maxWaiting);
  }

  async run<T>(read: () => Promise<T>): Promise<T> {
    const acquiring = this.slots.tryAcquire();
    if (acquiring === null) throw QUEUE_FULL;
    return this.holding(await acquiring, read);
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
