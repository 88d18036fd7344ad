// What a stand-in received, in order, and a way to wait for the first item that matches. Keeps
// the most recent MAX_INBOX_ITEMS (a stand-in embedded in `npm start` runs for days), and every
// wait has a bounded timeout that rejects with a message saying what was awaited.
export const MAX_INBOX_ITEMS = 1_000;
export const DEFAULT_WAIT_TIMEOUT_MS = 5_000;
export const MAX_WAIT_TIMEOUT_MS = 120_000;

interface Waiter<T> {
  readonly predicate: (item: T) => boolean;
  readonly resolve: (item: T) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export class Inbox<T> {
  /** Oldest first. */
  readonly items: T[] = [];
  private readonly waiters = new Set<Waiter<T>>();
  private closed = false;

  constructor(private readonly what: string) {}

  record(item: T): void {
    this.items.push(item);
    if (this.items.length > MAX_INBOX_ITEMS)
      this.items.splice(0, this.items.length - MAX_INBOX_ITEMS);
    for (const waiter of this.waiters) {
      if (waiter.predicate(item)) this.settle(waiter, () => waiter.resolve(item));
    }
  }

  /** The first item already received or still to come that matches. */
  waitFor(
    predicate: (item: T) => boolean = () => true,
    timeoutMs = DEFAULT_WAIT_TIMEOUT_MS,
  ): Promise<T> {
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_WAIT_TIMEOUT_MS) {
      throw new RangeError(`timeoutMs must be an integer in 1..${MAX_WAIT_TIMEOUT_MS}`);
    }
    const found = this.items.find(predicate);
    if (found !== undefined) return Promise.resolve(found);
    if (this.closed)
      return Promise.reject(new Error(`no matching ${this.what}: the stand-in is stopped`));
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = {
        predicate,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.settle(waiter, () =>
            reject(
              new Error(
                `no matching ${this.what} within ${timeoutMs} ms (${this.items.length} received)`,
              ),
            ),
          );
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** Rejects every pending wait; later waits see only what was already received. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters) {
      this.settle(waiter, () =>
        waiter.reject(new Error(`no matching ${this.what}: the stand-in stopped`)),
      );
    }
  }

  private settle(waiter: Waiter<T>, action: () => void): void {
    if (!this.waiters.delete(waiter)) return;
    clearTimeout(waiter.timer);
    action();
  }
}
