// The async iterator every subscription resolver returns: `step` produces the next message from
// the topic's events; the listener (`events`) is freed on return(), on throw(), and when a step
// fails (nobody calls return() after a failed next()).
export function stepIterator<T>(
  step: () => Promise<IteratorResult<T>>,
  events: { return?(): unknown },
): AsyncIterableIterator<T> {
  const iterator: AsyncIterableIterator<T> = {
    // A plain function, not an async one: a subscriber waiting for its next event holds the
    // step's frame only, not a second one around it.
    next() {
      return step().catch(async (error: unknown) => {
        await events.return?.();
        throw error;
      });
    },
    async return() {
      await events.return?.();
      return { done: true, value: undefined };
    },
    async throw(error?: unknown) {
      await events.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
