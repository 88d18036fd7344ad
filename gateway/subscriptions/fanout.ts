// In-process fan-out from the LISTEN bridge to this replica's websocket subscribers. events.on
// registers its listener synchronously, so nothing published after subscribe() is lost, and its
// return() ends a pending wait at once, so a client that leaves frees its listener immediately.
import { EventEmitter, on } from 'node:events';

export class Fanout<TEvent> {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  publish(topic: string, event: TEvent): void {
    this.emitter.emit(topic, event);
  }

  subscribe(topic: string): AsyncIterableIterator<TEvent> {
    const inner = on(this.emitter, topic);
    const iterator: AsyncIterableIterator<TEvent> = {
      async next() {
        const result = await inner.next();
        return result.done ? { done: true, value: undefined } : { done: false, value: result.value[0] as TEvent };
      },
      async return() {
        await inner.return?.();
        return { done: true, value: undefined };
      },
      async throw(error?: unknown) {
        await inner.return?.();
        throw error;
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }

  listenerCount(topic: string): number {
    return this.emitter.listenerCount(topic);
  }
}
