// Pings for every open websocket from one timer: each socket is pinged once per interval and cut
// (terminate) when its previous ping had no pong by then. The sockets are spread over slices taken
// one per tick, so ten thousand sockets cost a few dozen pings per tick rather than a timer, a
// closure and a listener each, and never ten thousand pings in one stretch of the event loop.
import type { WebSocket } from 'ws';

/** Ticks per interval: each tick pings the sockets of one slice. */
const SLICES = 60;

export class KeepAlive {
  private readonly slices: Array<Set<WebSocket>> = Array.from({ length: SLICES }, () => new Set());
  /** Sockets pinged and not answered yet. */
  private readonly unanswered = new WeakSet<WebSocket>();
  /** One listener shared by every socket (an emitter calls it with the socket as `this`). */
  private readonly answered: (this: WebSocket) => void;
  private readonly timer: NodeJS.Timeout;
  private added = 0;
  private tick = 0;

  constructor(intervalMs: number) {
    const unanswered = this.unanswered;
    this.answered = function answered(this: WebSocket) {
      unanswered.delete(this);
    };
    this.timer = setInterval(() => this.sweep(), Math.max(1, Math.floor(intervalMs / SLICES)));
    this.timer.unref();
  }

  /** Watches the socket until remove() (call it when the socket closes). */
  add(socket: WebSocket): void {
    this.slices[this.added++ % SLICES].add(socket);
    socket.on('pong', this.answered);
  }

  remove(socket: WebSocket): void {
    for (const slice of this.slices) if (slice.delete(socket)) break;
    socket.off('pong', this.answered);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sweep(): void {
    const slice = this.slices[this.tick++ % SLICES];
    for (const socket of slice) {
      if (socket.readyState !== socket.OPEN) continue;
      if (this.unanswered.has(socket)) {
        socket.terminate();
        continue;
      }
      this.unanswered.add(socket);
      socket.ping();
    }
  }
}
