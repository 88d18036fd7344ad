// The async iterator every subscription resolver returns: `step` produces the next message from
// the topic's events; the listener (`events`) is freed on return(), on throw(), and when a step
// fails (nobody calls return() after a failed next()).
export function stepIterator<T>(
  step: () => Promise<IteratorResult<T>>,
  events: { return?(): unknown },
): AsyncIterableIterator<T> {
  const iterator: AsyncIterableIterator<T> = {
    async next() {
      try {
        return await step();
      } catch (error) {
        await events.return?.();
        throw error;
      }
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
