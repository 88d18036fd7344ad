// A bounded queue for the state reads of subscriptions (snapshots, changed escalations): at most
// `concurrency` run at once, so subscribers can never hold more than that many of the database
// pool's connections, and at most `maxWaiting` wait; a read beyond that fails at once with
// SERVICE_UNAVAILABLE (the subscriber is told, never left silent) instead of piling up in memory.
import { GraphQLError } from 'graphql';
import { ERROR_CODES } from '../../core/errors';

export class ReadQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly concurrency: number,
    private readonly maxWaiting: number,
  ) {
    if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new Error('read concurrency must be a positive integer');
    if (!Number.isSafeInteger(maxWaiting) || maxWaiting < 0) throw new Error('the read queue length must be a non-negative integer');
  }

  async run<T>(read: () => Promise<T>): Promise<T> {
    if (this.running < this.concurrency) {
      this.running += 1;
    } else {
      if (this.waiting.length >= this.maxWaiting) throw QUEUE_FULL;
      // The finishing read hands its slot over, so `running` stays as it is.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    try {
      return await read();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}

/**
 * Made once: refusing a burst of reads must not cost an error object each. Its stack would only
 * show module loading, yet graphql-ws reads it when it wraps the error: a plain one costs nothing.
 */
const QUEUE_FULL = new GraphQLError('Too many subscription reads are waiting; subscribe again shortly.', {
  extensions: { code: 'SERVICE_UNAVAILABLE', status: ERROR_CODES.SERVICE_UNAVAILABLE.status, retryable: ERROR_CODES.SERVICE_UNAVAILABLE.retryable },
});
QUEUE_FULL.stack = `GraphQLError: ${QUEUE_FULL.message}`;
