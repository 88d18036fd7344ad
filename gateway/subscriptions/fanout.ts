// In-process fan-out from the LISTEN bridge to this replica's websocket subscribers. events.on
// registers its listener synchronously, so nothing published after subscribe() is lost, and its
// return() ends a pending wait at once, so a client that leaves frees its listener immediately.
// Each subscriber takes one event per turn of the event loop: a burst of notifications is worked
// off between other requests instead of in one stretch that no request can interrupt.
import { EventEmitter, on } from 'node:events';
import { setImmediate as nextTurn } from 'node:timers/promises';

export class Fanout<TEvent> {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  publish(topic: string, event: TEvent): void {
    this.emitter.emit(topic, event);
  }

  /** Publishes on every topic that has listeners and starts with `prefix` (keyed topics' RESYNC). */
  publishUnder(prefix: string, event: TEvent): void {
    for (const topic of this.emitter.eventNames()) {
      if (typeof topic === 'string' && topic.startsWith(prefix)) this.emitter.emit(topic, event);
    }
  }

  subscribe(topic: string): AsyncIterableIterator<TEvent> {
    const inner = on(this.emitter, topic);
    const iterator: AsyncIterableIterator<TEvent> = {
      async next() {
        const result = await inner.next();
        if (result.done) return { done: true, value: undefined };
        await nextTurn();
        return { done: false, value: result.value[0] as TEvent };
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
