// In-process fan-out from the LISTEN bridge to this replica's websocket subscribers, by topic. A
// topic is a plain name (`catalogChanged`) or a keyed one (`escalationUpdated:<owner>`), so an
// event costs only the subscribers of its key, never every socket. subscribe() registers its
// listener synchronously, so nothing published after it is lost, and return() ends a pending wait
// at once, so a client that leaves frees its listener immediately. A listener is a small queue of
// its own (node's events.on keeps two 2,048-slot queues per listener: 32 KB for each idle socket).
// Each subscriber takes one event per turn of the event loop: a burst of notifications is worked
// off between other requests instead of in one stretch that no request can interrupt.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Where a keyed topic's key starts: `escalationUpdated:0xabc…` belongs to `escalationUpdated`. */
const KEY_SEPARATOR = ':';

class Listener<TEvent> implements AsyncIterableIterator<TEvent> {
  private readonly queued: TEvent[] = [];
  private waiting: ((result: IteratorResult<TEvent>) => void) | null = null;
  private done = false;

  constructor(private readonly leave: (listener: Listener<TEvent>) => void) {}

  push(event: TEvent): void {
    if (this.done) return;
    const waiting = this.waiting;
    if (waiting === null) {
      this.queued.push(event);
      return;
    }
    this.waiting = null;
    waiting({ done: false, value: event });
  }

  async next(): Promise<IteratorResult<TEvent>> {
    if (this.done) return { done: true, value: undefined };
    const result =
      this.queued.length > 0
        ? { done: false as const, value: this.queued.shift() as TEvent }
        : await new Promise<IteratorResult<TEvent>>((resolve) => (this.waiting = resolve));
    if (result.done) return result;
    await nextTurn();
    return result;
  }

  async return(): Promise<IteratorResult<TEvent>> {
    this.finish();
    return { done: true, value: undefined };
  }

  async throw(error?: unknown): Promise<IteratorResult<TEvent>> {
    this.finish();
    throw error;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<TEvent> {
    return this;
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.queued.length = 0;
    this.leave(this);
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.({ done: true, value: undefined });
  }
}

export class Fanout<TEvent> {
  private readonly topics = new Map<string, Set<Listener<TEvent>>>();
  /** Listeners per topic family (the part before the key): what listenerCount(family) answers. */
  private readonly families = new Map<string, number>();

  publish(topic: string, event: TEvent): void {
    const listeners = this.topics.get(topic);
    if (listeners === undefined) return;
    for (const listener of listeners) listener.push(event);
  }

  /** Publishes on every topic that has listeners and starts with `prefix` (keyed topics' RESYNC). */
  publishUnder(prefix: string, event: TEvent): void {
    for (const [topic, listeners] of this.topics) {
      if (!topic.startsWith(prefix)) continue;
      for (const listener of listeners) listener.push(event);
    }
  }

  subscribe(topic: string): AsyncIterableIterator<TEvent> {
    let listeners = this.topics.get(topic);
    if (listeners === undefined) {
      listeners = new Set();
      this.topics.set(topic, listeners);
    }
    const family = familyOf(topic);
    const listener = new Listener<TEvent>((leaving) => {
      const current = this.topics.get(topic);
      if (current?.delete(leaving) && current.size === 0) this.topics.delete(topic);
      const left = (this.families.get(family) ?? 1) - 1;
      if (left > 0) this.families.set(family, left);
      else this.families.delete(family);
    });
    listeners.add(listener);
    this.families.set(family, (this.families.get(family) ?? 0) + 1);
    return listener;
  }

  /** The listeners of a keyed topic; of a plain name, those of the name and of all its keyed topics. */
  listenerCount(topic: string): number {
    if (topic.includes(KEY_SEPARATOR)) return this.topics.get(topic)?.size ?? 0;
    return this.families.get(topic) ?? 0;
  }
}

function familyOf(topic: string): string {
  const separator = topic.indexOf(KEY_SEPARATOR);
  return separator === -1 ? topic : topic.slice(0, separator);
}
