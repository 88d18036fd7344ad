// A TCP proxy on 127.0.0.1 that a fault test can cut: while cut, every open connection through it
// is reset and new connections are refused (nothing listens on its port), exactly what a client
// sees when a node or a network path goes away; `restore()` listens again on the same port, so
// the client's URL stays valid. Bytes pass through untouched (HTTP, JSON-RPC, anything).
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  /** 127.0.0.1:<port> of the proxy. */
  readonly host: string;
  readonly port: number;
  /** `http://127.0.0.1:<port>`, for HTTP upstreams. */
  readonly url: string;
  /** Connections accepted so far (across cuts). */
  readonly accepted: number;
  readonly isCut: boolean;
  /** Resets every open connection and stops listening: new connections are refused. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTcpProxy(upstream: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  let server: net.Server | null = null;
  let port = 0;

  const onConnection = (client: net.Socket): void => {
    accepted += 1;
    const target = net.connect(upstream.port, upstream.host);
    sockets.add(client);
    sockets.add(target);
    const close = (): void => {
      client.destroy();
      target.destroy();
      sockets.delete(client);
      sockets.delete(target);
    };
    client.on('error', close).on('close', close);
    target.on('error', close).on('close', close);
    client.pipe(target);
    target.pipe(client);
  };

  const listen = async (): Promise<void> => {
    const next = net.createServer(onConnection);
    await new Promise<void>((resolve, reject) => {
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => resolve());
    });
    port = (next.address() as AddressInfo).port;
    server = next;
  };

  const close = async (): Promise<void> => {
    const current = server;
    server = null;
    // A socket whose end() is still under way cannot be reset: libuv refuses to reset a handle
    // that is shutting down (EINVAL), and Node 20 then leaves it closing forever, so the process
    // spins at 100 % CPU when it exits (jest's "a worker process has failed to exit gracefully").
    // That socket has sent or is sending its FIN already: a plain destroy closes it.
    for (const socket of sockets) {
      if (socket.writableEnded) socket.destroy();
      else socket.resetAndDestroy();
    }
    sockets.clear();
    if (current !== null) await new Promise<void>((resolve) => current.close(() => resolve()));
  };

  await listen();
  return {
    host: '127.0.0.1',
    get port() {
      return port;
    },
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get accepted() {
      return accepted;
    },
    get isCut() {
      return server === null;
    },
    cut: close,
    async restore() {
      if (server === null) await listen();
    },
    stop: close,
  };
}

/** host and port of an http URL, for a proxy's upstream. */
export function hostPortOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port) };
}
