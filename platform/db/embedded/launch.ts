// Starting the postmaster: a free loopback port, the server on 127.0.0.1 only (no Unix socket),
// ready when it logs so; its output is read for its whole life so a full pipe never blocks it.
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import { EmbeddedPostgresError } from './errors';
import { spawnAs, type Binaries, type ServerUser } from './processes';

const START_TIMEOUT_MS = 30_000;
const READY_LINE = 'database system is ready to accept connections';

export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() =>
        port > 0 ? resolve(port) : reject(new EmbeddedPostgresError('no free loopback port')),
      );
    });
  });
}

/** Spawns the postmaster and resolves once it accepts connections; rejects if it exits first. */
export function launch(
  dataDir: string,
  port: number,
  bin: Binaries,
  user: ServerUser,
  durable: boolean,
  onLine: (line: string) => void,
): Promise<ChildProcess> {
  // Never a wildcard address, and no Unix socket: nothing but 127.0.0.1 can reach it.
  const args = [
    '-D',
    dataDir,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
  ];
  if (!durable) args.push('-c', 'fsync=off', '-c', 'full_page_writes=off');
  const child = spawnAs(bin.postgres, args, user);
  let pending = '';
  let ready = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGQUIT');
      reject(new EmbeddedPostgresError(`PostgreSQL was not ready within ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    // Read the output for the server's whole life: a full pipe would block its logging.
    const onData = (chunk: Buffer): void => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() !== '') onLine(line);
        if (!ready && line.includes(READY_LINE)) {
          ready = true;
          clearTimeout(timer);
          resolve(child);
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (!ready)
        reject(
          new EmbeddedPostgresError(
            `PostgreSQL exited during start (code ${code}, signal ${signal})`,
          ),
        );
    });
  });
}
