// Who holds which websocket: each acknowledged socket's actor, the principal its session counts
// against (a bounded number of sockets each), the instant its session ends (a timer closes the
// socket then) and the operations running on it. In memory, per gateway replica.
import type { WebSocket } from 'ws';
import type { Actor } from '../../platform/actor';

/** setTimeout's longest delay; a later session end is checked again when the timer fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface SocketSession {
  readonly socket: WebSocket;
  readonly actor: Actor;
  /** Whose socket count this socket is in; null: not counted (anonymous). */
  readonly principal: string | null;
  /** When the session behind the socket's credential ends; null: it does not (admin token, anonymous). */
  readonly expiresAt: Date | null;
  expiryTimer: NodeJS.Timeout | null;
  /** The ids of the operations running on the socket (accepted, not yet completed). */
  readonly running: Set<string>;
  /** Subscribes refused since a running operation last completed. */
  refusedInARow: number;
  /** Set once the socket is being closed for flooding: what it still sends is not read. */
  cut: boolean;
}

/** Sockets are counted per signed-in principal, so signing in again does not buy more of them. */
export function principalOf(actor: Actor): string | null {
  switch (actor.kind) {
    case 'owner':
      return `owner:${actor.address}`;
    case 'consumer':
      return `consumer:${actor.address}:${actor.policyId}`;
    case 'admin':
      return 'admin';
    default:
      // Anonymous sockets read only public feeds: the catalog (no reads) and one receipt's anchor,
      // whose reads go through the bounded ReadQueue and are shared per notification.
      return null;
  }
}

export class SocketSessions {
  private readonly socketsPerPrincipal = new Map<string, number>();

  constructor(
    private readonly options: {
      readonly maxSocketsPerSession: number;
      readonly now: () => Date;
      /** Closes a socket whose session has ended. */
      readonly onExpired: (socket: WebSocket) => void;
    },
  ) {}

  /** The session of a newly authenticated socket; null when its principal holds the most sockets already. */
  open(socket: WebSocket, actor: Actor, expiresAt: Date | null): SocketSession | null {
    const principal = principalOf(actor);
    if (principal !== null) {
      const held = this.socketsPerPrincipal.get(principal) ?? 0;
      if (held >= this.options.maxSocketsPerSession) return null;
      this.socketsPerPrincipal.set(principal, held + 1);
    }
    const session: SocketSession = {
      socket,
      actor,
      principal,
      expiresAt,
      expiryTimer: null,
      running: new Set(),
      refusedInARow: 0,
      cut: false,
    };
    this.armExpiry(session);
    return session;
  }

  close(session: SocketSession): void {
    if (session.expiryTimer) clearTimeout(session.expiryTimer);
    if (session.principal === null) return;
    const left = (this.socketsPerPrincipal.get(session.principal) ?? 1) - 1;
    if (left > 0) this.socketsPerPrincipal.set(session.principal, left);
    else this.socketsPerPrincipal.delete(session.principal);
  }

  /** Whether the session has ended by the gateway's clock (which tests may move). */
  expired(session: SocketSession | undefined): boolean {
    return (
      session?.expiresAt != null && this.options.now().getTime() >= session.expiresAt.getTime()
    );
  }

  /** A timer at the session's end; if the clock says it is not over yet when it fires, another. */
  private armExpiry(session: SocketSession): void {
    if (session.expiresAt === null) return;
    const delayMs = Math.max(
      0,
      Math.min(session.expiresAt.getTime() - this.options.now().getTime(), MAX_TIMER_MS),
    );
    session.expiryTimer = setTimeout(() => {
      if (this.expired(session)) this.options.onExpired(session.socket);
      else this.armExpiry(session);
    }, delayMs);
  }
}
