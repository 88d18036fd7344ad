// A fleet on one machine for the replica tests: PgBouncer in transaction mode in front of the
// machine's PostgreSQL, gateway replicas and a worker as real `spend-control start` processes, and haproxy
// balancing them round-robin with a /readyz health check. Each program runs in the foreground as
// a child of the test with a configuration the test writes into a temporary folder.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { aptProgram } from './aptPackages';
import { CLI, freePort } from './cliProcess';

// One free-port finder for every process test.
export { freePort };

export interface FleetProcess {
  readonly child: ChildProcess;
  output(): string;
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after 5 s; resolves once it exited. */
  stop(): Promise<void>;
}

/** Spawns `command` and resolves once `ready(output)` holds (or rejects when it exits first). */
export function spawnUntil(
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; ready: (output: string) => boolean; timeoutMs?: number },
): Promise<FleetProcess> {
  const child = spawn(command, args, {
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const running: FleetProcess = {
    child,
    output: () => output,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${path.basename(command)} did not become ready:\n${output}`));
    }, options.timeoutMs ?? 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (options.ready(output)) {
        clearTimeout(timer);
        resolve(running);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    if (options.ready('')) {
      clearTimeout(timer);
      resolve(running);
    }
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${path.basename(command)} exited with ${code} before ready:\n${output}`));
    });
  });
}

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  // PgBouncer refuses to run as root and drops to `nobody`, who must read the folder.
  chmodSync(dir, 0o755);
  return dir;
}

export interface PgBouncer extends FleetProcess {
  readonly port: number;
  /** `url` with its host and port turned to PgBouncer's. */
  through(url: string): string;
  stopAndClean(): Promise<void>;
}

/** PgBouncer, pool_mode=transaction, in front of the PostgreSQL of `serverUrl`, for `users`. */
export async function startPgBouncer(
  serverUrl: string,
  users: readonly string[],
  options: { poolSize?: number } = {},
): Promise<PgBouncer> {
  const program = aptProgram({ packageName: 'pgbouncer', paths: ['/usr/sbin/pgbouncer'] });
  const dir = tempDir('fleet-pgbouncer-');
  const port = await freePort();
  const server = new URL(serverUrl);
  writeFileSync(
    path.join(dir, 'users.txt'),
    users.map((user) => `"${user}" ""`).join('\n') + '\n',
    { mode: 0o644 },
  );
  writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 1000',
      `default_pool_size = ${options.poolSize ?? 20}`,
      // node-postgres sends these as startup parameters; the service role carries them instead
      // (docs/operations.md, "PgBouncer").
      'ignore_startup_parameters = extra_float_digits,statement_timeout,idle_in_transaction_session_timeout',
      'server_reset_query =',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const running = await spawnUntil(program, ['-u', 'nobody', path.join(dir, 'pgbouncer.ini')], {
    ready: (output) => output.includes('process up'),
    timeoutMs: 20_000,
  });
  return {
    ...running,
    port,
    through(url: string) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    async stopAndClean() {
      await running.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Haproxy extends FleetProcess {
  readonly url: string;
  readonly port: number;
  stopAndClean(): Promise<void>;
}

/** haproxy on `port`: round-robin over `backends`, checked on /readyz every 250 ms. */
export async function startHaproxy(port: number, backends: readonly number[]): Promise<Haproxy> {
  const program = aptProgram({ packageName: 'haproxy', paths: ['/usr/sbin/haproxy'] });
  const dir = tempDir('fleet-haproxy-');
  const file = path.join(dir, 'haproxy.cfg');
  writeFileSync(
    file,
    [
      'global',
      '  maxconn 4000',
      'defaults',
      '  mode http',
      '  option http-server-close',
      '  option redispatch',
      '  retries 3',
      '  timeout connect 2s',
      '  timeout client 60s',
      '  timeout server 60s',
      // A websocket is a tunnel once upgraded: idle subscribers keep it for up to an hour.
      '  timeout tunnel 1h',
      'frontend edge',
      `  bind 127.0.0.1:${port}`,
      '  option forwardfor',
      '  default_backend replicas',
      'backend replicas',
      '  balance roundrobin',
      '  option httpchk GET /readyz',
      '  http-check expect status 200',
      '  default-server inter 250ms fall 2 rise 2',
      ...backends.map((backend, index) => `  server replica${index} 127.0.0.1:${backend} check`),
      '',
    ].join('\n'),
  );
  const running = await spawnUntil(program, ['-db', '-f', file], {
    // haproxy prints nothing when it starts well: ready once its port answers (below).
    ready: () => true,
    timeoutMs: 10_000,
  });
  await waitForPort(port);
  return {
    ...running,
    url: `http://127.0.0.1:${port}`,
    port,
    async stopAndClean() {
      await running.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => resolve(socket.end() !== undefined));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface Replica extends FleetProcess {
  readonly port: number;
  readonly url: string;
}

/** `spend-control start` (role all: the gateway and every subgraph in one process) on `port`. */
export async function startReplica(port: number, env: Record<string, string>): Promise<Replica> {
  const dataDir = tempDir('fleet-replica-');
  const running = await spawnUntil(process.execPath, [CLI, 'start'], {
    env: {
      ...process.env,
      ...env,
      DATA_DIR: dataDir,
      PORT: String(port),
      // Each replica's subgraphs keep a port range of their own, clear of the other's.
      SUBGRAPH_PORT_BASE: String(port + 1),
      LOG_LEVEL: 'warn',
    },
    ready: (output) => output.includes('ready           role all'),
  });
  void running.exited.then(() => rmSync(dataDir, { recursive: true, force: true }));
  return { ...running, port, url: `http://127.0.0.1:${port}` };
}

/**
 * `spend-control start --role worker` (escalations, anchoring and, with the consumer rails and the
 * treasury key configured, the consumer execution worker); its probes on a free METRICS_PORT.
 */
export async function startWorkerRole(env: Record<string, string>): Promise<FleetProcess> {
  const dataDir = tempDir('fleet-worker-');
  const running = await spawnUntil(process.execPath, [CLI, 'start', '--role', 'worker'], {
    env: {
      ...process.env,
      ...env,
      DATA_DIR: dataDir,
      METRICS_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
    },
    ready: (output) => output.includes('ready           role worker'),
  });
  void running.exited.then(() => rmSync(dataDir, { recursive: true, force: true }));
  return running;
}
