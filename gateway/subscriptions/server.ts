// graphql-ws on the gateway's HTTP server, path /graphql, over our own `ws` adapter (graphql-ws's
// makeServer): the credential is checked once at connection_init and the socket is closed when its
// session ends; a session holds a bounded number of sockets and a socket a bounded number of
// subscriptions; a client that stops reading is closed once its unsent data passes a bound, so
// nothing queues without limit. Only subscriptions are served (queries go to POST /graphql).
import type { Server } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  GraphQLError,
  parse,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLSchema,
} from 'graphql';
import {
  CloseCode,
  handleProtocols,
  makeServer,
  type Context,
  type Server as ProtocolServer,
} from 'graphql-ws';
import { WebSocket, WebSocketServer } from 'ws';
import { ERROR_CODES } from '../../core/errors';
import type { Actor } from '../../platform/actor';
import type { SubscriptionLimits } from '../../platform/config';
import type { Logger } from '../../platform/log';
import type { Authenticator } from '../auth/credentials';
import type { SubscriptionContext } from './schema';
import { KeepAlive } from './keepAlive';
import { type SocketSession, SocketSessions } from './socketSessions';

export const WS_MAX_PAYLOAD_BYTES = 64 * 1024;
/** A ping every 12 s; a socket with no pong by the next one is cut (graphql-ws's own default). */
const KEEP_ALIVE_MS = 12_000;
/** How long a slow consumer has to complete the close handshake before its socket is cut. */
const SLOW_CONSUMER_GRACE_MS = 5_000;
/** Distinct subscription documents whose parse and validation are remembered. */
const DOCUMENT_CACHE_SIZE = 200;
/** Messages read from one socket and not yet handled; beyond it the socket is read no further until they are. */
const INBOX_HIGH_WATER = 64;

/** The close codes this server sends besides graphql-ws's own (docs/graphql.md, "Subscription limits"). */
export const CLOSE_CODES = {
  /** A credential nobody accepts (also a non-string `authorization`), or the session ended. */
  forbidden: CloseCode.Forbidden,
  /** The session already holds SUBSCRIPTION_MAX_SOCKETS_PER_SESSION sockets. */
  tooManySockets: 4429,
  /** The socket kept subscribing at its cap: more refusals in a row than the cap itself. */
  tooManySubscriptions: 4429,
  /** The socket's unsent data passed SUBSCRIPTION_MAX_BUFFERED_BYTES: the client does not read. */
  slowConsumer: 4008,
} as const;

export type SocketLimits = Pick<
  SubscriptionLimits,
  'maxSocketsPerSession' | 'maxSubscriptionsPerSocket' | 'maxBufferedBytes'
>;

export interface SubscriptionServerOptions {
  readonly httpServer: Server;
  readonly path: string;
  readonly schema: GraphQLSchema;
  readonly authenticator: Authenticator;
  /** When the session behind an accepted Authorization value ends; null: it does not (admin token). */
  readonly sessionExpiresAt: (authorization: string) => Date | null;
  readonly limits: SocketLimits;
  readonly now: () => Date;
  readonly log: Logger;
}

/** What the server keeps per socket (the upgrade request is not kept: nothing reads it after). */
interface Extra {
  readonly socket: WebSocket;
  session?: SocketSession;
}

type ConnectionContext = Context<Record<string, unknown> | undefined, Extra>;

/** One refusal per limit, made once: a socket flooding subscribe messages costs no error object each. */
const limitErrors = new Map<number, readonly GraphQLError[]>();

function limitErrorsFor(max: number): readonly GraphQLError[] {
  let errors = limitErrors.get(max);
  if (!errors) {
    const spec = ERROR_CODES.SUBSCRIPTION_LIMIT_REACHED;
    errors = [
      new GraphQLError(
        `This socket already runs ${max} subscriptions; complete one first or open another socket.`,
        {
          extensions: {
            code: 'SUBSCRIPTION_LIMIT_REACHED',
            status: spec.status,
            retryable: spec.retryable,
          },
        },
      ),
    ];
    limitErrors.set(max, errors);
  }
  return errors;
}

export function attachSubscriptionServer(options: SubscriptionServerOptions): {
  close(): Promise<void>;
  connectionCount(): number;
} {
  const { log } = options;
  const wss = new WebSocketServer({
    server: options.httpServer,
    path: options.path,
    maxPayload: WS_MAX_PAYLOAD_BYTES,
    handleProtocols: (protocols) => handleProtocols(protocols),
  });
  const closeExpired = (socket: WebSocket): void =>
    socket.close(CLOSE_CODES.forbidden, 'Session expired');
  const sessions = new SocketSessions({
    maxSocketsPerSession: options.limits.maxSocketsPerSession,
    now: options.now,
    onExpired: closeExpired,
  });

  const server = makeServer<Record<string, unknown> | undefined, Extra>({
    schema: options.schema,
    onConnect: (ctx) => acceptConnection(ctx, options, sessions),
    onSubscribe: (ctx, id, payload) => subscribeArgs(ctx, id, payload, options, sessions),
    // Called once for every operation onSubscribe let run, however it ended.
    onComplete(ctx, id) {
      const session = ctx.extra.session;
      if (session?.running.delete(id)) session.refusedInARow = 0;
    },
    onNext(ctx) {
      // A clock that jumped past the session's end, before the timer fired: nothing more is sent.
      if (sessions.expired(ctx.extra.session)) closeExpired(ctx.extra.socket);
    },
  });

  const keepAlive = new KeepAlive(KEEP_ALIVE_MS);
  wss.on('connection', (socket) =>
    serveSocket(server, socket, options, keepAlive, (extra) => {
      if (extra.session) sessions.close(extra.session);
      extra.session = undefined;
    }),
  );
  wss.on('error', (error) => log.error({ err: error }, 'websocket server error'));

  return {
    async close() {
      keepAlive.stop();
      for (const client of wss.clients) client.close(1001, 'Going away');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
    connectionCount: () => wss.clients.size,
  };
}

/** connection_init: the socket's credential becomes its session, or the socket is refused. */
async function acceptConnection(
  ctx: ConnectionContext,
  options: SubscriptionServerOptions,
  sessions: SocketSessions,
): Promise<boolean> {
  const authorization = ctx.connectionParams?.authorization;
  // A credential that is not a string is a bad credential, never the anonymous actor.
  if (authorization !== undefined && typeof authorization !== 'string') {
    options.log.info('websocket connection refused: authorization is not a string');
    return false;
  }
  const actor: Actor | null = await options.authenticator
    .authenticate(authorization)
    .catch(() => null);
  if (actor === null) {
    options.log.info('websocket connection refused: bad credential');
    return false;
  }
  // Closed while its credential was checked: a session opened now would never be closed.
  if (ctx.extra.socket.readyState !== WebSocket.OPEN) return false;
  const expiresAt = authorization ? options.sessionExpiresAt(authorization) : null;
  const session = sessions.open(ctx.extra.socket, actor, expiresAt);
  if (session === null) {
    options.log.info(
      { actor: actor.kind },
      'websocket connection refused: too many sockets for this session',
    );
    ctx.extra.socket.close(CLOSE_CODES.tooManySockets, 'Too many connections for this session');
    return false;
  }
  ctx.extra.session = session;
  // The session holds all the socket needs: the credential's text is not kept for the socket's life.
  (ctx as { connectionParams?: unknown }).connectionParams = undefined;
  return true;
}

/** The execution arguments of a subscribe message, or the errors that refuse it. */
function subscribeArgs(
  ctx: ConnectionContext,
  id: string,
  payload: {
    query: string;
    operationName?: string | null;
    variables?: Record<string, unknown> | null;
  },
  options: SubscriptionServerOptions,
  sessions: SocketSessions,
): ExecutionArgs | readonly GraphQLError[] {
  const session = ctx.extra.session;
  if (!session || sessions.expired(session)) {
    ctx.extra.socket.close(CLOSE_CODES.forbidden, 'Session expired');
    return [
      new GraphQLError('The session expired; sign in again.', {
        extensions: { code: 'SESSION_INVALID' },
      }),
    ];
  }
  const max = options.limits.maxSubscriptionsPerSocket;
  if (session.running.size >= max) {
    // A client may bump into the cap; one that keeps subscribing at it is flooding: it is cut off
    // rather than answered a thousand times.
    session.refusedInARow += 1;
    if (session.refusedInARow > max) {
      session.cut = true;
      // Closed once the refusals already given are on their way (they are sent after this returns).
      setImmediate(() =>
        ctx.extra.socket.close(
          CLOSE_CODES.tooManySubscriptions,
          'Too many subscriptions on this socket',
        ),
      );
    }
    return limitErrorsFor(max);
  }
  const checked = checkedDocument(options.schema, payload.query);
  if (!('document' in checked)) return checked.errors;
  const { document } = checked;
  const contextValue: SubscriptionContext = { actor: session.actor };
  session.running.add(id);
  return {
    schema: options.schema,
    document,
    operationName: payload.operationName ?? undefined,
    variableValues: payload.variables ?? undefined,
    contextValue,
  };
}

type CheckedDocument =
  { readonly document: DocumentNode } | { readonly errors: readonly GraphQLError[] };
const checkedBySchema = new WeakMap<GraphQLSchema, Map<string, CheckedDocument>>();

/**
 * A subscription document parsed, validated and confirmed to hold only subscriptions; clients send
 * the same few documents over and over, so the result is remembered (least recently used first out).
 */
function checkedDocument(schema: GraphQLSchema, query: string): CheckedDocument {
  let checkedDocuments = checkedBySchema.get(schema);
  if (!checkedDocuments) {
    checkedDocuments = new Map();
    checkedBySchema.set(schema, checkedDocuments);
  }
  const known = checkedDocuments.get(query);
  if (known) {
    checkedDocuments.delete(query);
    checkedDocuments.set(query, known);
    return known;
  }
  const checked = checkDocument(schema, query);
  checkedDocuments.set(query, checked);
  if (checkedDocuments.size > DOCUMENT_CACHE_SIZE)
    checkedDocuments.delete(checkedDocuments.keys().next().value as string);
  return checked;
}

function checkDocument(schema: GraphQLSchema, query: string): CheckedDocument {
  let document: DocumentNode;
  try {
    document = parse(query);
  } catch (error) {
    return {
      errors: [error instanceof GraphQLError ? error : new GraphQLError('unparseable document')],
    };
  }
  const errors = validate(schema, document);
  if (errors.length > 0) return { errors };
  if (
    document.definitions.some(
      (definition) =>
        definition.kind === 'OperationDefinition' && definition.operation !== 'subscription',
    )
  ) {
    return {
      errors: [
        new GraphQLError(
          'Only subscriptions are served over the websocket; send queries and mutations to POST /graphql.',
        ),
      ],
    };
  }
  return { document };
}

/**
 * One socket, as graphql-ws's own `ws` adapter does it, except for two things. Sending: a message
 * is queued without waiting for the network (so one stalled client never holds a subscription's
 * iterator) and a socket whose queue would pass the bound is closed as a slow consumer. Receiving:
 * one message per turn of the event loop, so a burst of messages never runs in one stretch that
 * other requests wait behind; a client sending faster is read more slowly (TCP backpressure).
 */
function serveSocket(
  server: ProtocolServer<Extra>,
  socket: WebSocket,
  options: SubscriptionServerOptions,
  keepAlive: KeepAlive,
  unregister: (extra: Extra) => void,
): void {
  const { log, limits } = options;
  const extra: Extra = { socket };
  socket.once('error', (error) => {
    log.warn({ err: error.message }, 'websocket error');
    socket.close(CloseCode.InternalServerError, 'Internal server error');
  });
  keepAlive.add(socket);
  const closed = server.opened(
    {
      protocol: socket.protocol,
      send(data) {
        if (socket.readyState !== WebSocket.OPEN) return;
        if (socket.bufferedAmount + Buffer.byteLength(data) > limits.maxBufferedBytes) {
          closeSlowConsumer(socket, log);
          return;
        }
        socket.send(data);
      },
      close: (code, reason) => socket.close(code, reason),
      onMessage: (receive) => readOnePerTurn(socket, extra, receive, log),
    },
    extra,
  );
  socket.once('close', (code, reason) => {
    keepAlive.remove(socket);
    unregister(extra);
    closed(code, String(reason)).catch((error: unknown) =>
      log.error({ err: error }, 'websocket close handling failed'),
    );
  });
}

/** Hands the socket's messages to graphql-ws one per turn of the event loop, in order. */
function readOnePerTurn(
  socket: WebSocket,
  extra: Extra,
  receive: (message: string) => Promise<void>,
  log: Logger,
): void {
  const inbox: string[] = [];
  let draining = false;
  // Frames still arriving on a socket being closed (a flood, say) are not worth handling.
  const ignored = (): boolean =>
    socket.readyState !== WebSocket.OPEN || extra.session?.cut === true;
  const drain = async (): Promise<void> => {
    draining = true;
    while (inbox.length > 0 && !ignored()) {
      receive(inbox.shift()!).catch((error: unknown) => {
        log.error({ err: error }, 'websocket message failed');
        socket.close(CloseCode.InternalServerError, 'Internal server error');
      });
      await nextTurn();
      if (socket.isPaused && inbox.length <= INBOX_HIGH_WATER / 4) socket.resume();
    }
    inbox.length = 0;
    draining = false;
    if (socket.isPaused) socket.resume();
  };
  socket.on('message', (message) => {
    if (ignored()) return;
    inbox.push(String(message));
    if (inbox.length >= INBOX_HIGH_WATER) socket.pause();
    if (!draining) void drain();
  });
}

function closeSlowConsumer(socket: WebSocket, log: Logger): void {
  log.warn({ bufferedBytes: socket.bufferedAmount }, 'websocket closed: slow consumer');
  socket.close(CLOSE_CODES.slowConsumer, 'Slow consumer: send queue full');
  // A client that does not read will not read the close frame either: cut it after a grace.
  const cut = setTimeout(() => socket.terminate(), SLOW_CONSUMER_GRACE_MS);
  socket.once('close', () => clearTimeout(cut));
}
