// A counting semaphore: at most `permits` holders at once, waiters served in arrival order, and a
// bound on how many may wait (past it, tryAcquire answers null instead of queueing without end).
export type Release = () => void;

export class Semaphore {
  private held = 0;
  private readonly waiting: Array<(release: Release) => void> = [];

  constructor(
    private readonly permits: number,
    private readonly maxWaiting: number,
  ) {
    if (!Number.isInteger(permits) || permits < 1)
      throw new RangeError('permits must be a positive integer');
    if (!Number.isInteger(maxWaiting) || maxWaiting < 0)
      throw new RangeError('maxWaiting must be a non-negative integer');
  }

  /** Resolves with a release function once a permit is free; null when the wait queue is full. */
  tryAcquire(): Promise<Release> | null {
    if (this.held < this.permits) {
      this.held += 1;
      return Promise.resolve(this.releaser());
    }
    if (this.waiting.length >= this.maxWaiting) return null;
    return new Promise<Release>((resolve) => this.waiting.push(resolve));
  }

  /**
   * Resolves with a release function once a permit is free, waiting however many wait already: for
   * callers whose own number is bounded elsewhere (one per keyed topic, say), never for requests.
   */
  acquire(): Promise<Release> {
    if (this.held < this.permits) {
      this.held += 1;
      return Promise.resolve(this.releaser());
    }
    return new Promise<Release>((resolve) => this.waiting.push(resolve));
  }

  /** Each permit is released once; a second call of the same release does nothing. */
  private releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next === undefined) this.held -= 1;
      else next(this.releaser());
    };
  }
}
