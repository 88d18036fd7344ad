// The cluster and what lives in it: initdb with a generated superuser password, the passwords
// kept beside PostgreSQL's files, and the app database with its group roles and the service's
// login (idempotent, run on every start).
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
import { SERVICE_ROLE, ensureLoginRole, prepareDatabaseRoles } from '../roles';
import { EmbeddedPostgresError } from './errors';
import { run, type Binaries, type ServerUser } from './processes';

export const EMBEDDED_DATABASE_NAME = 'spend_control';
export const SUPERUSER = 'postgres';
/** The login the service connects as: a member of spend_control_service, owning nothing. */
export const EMBEDDED_SERVICE_LOGIN = 'spend_control_app';
/** Files we keep beside PostgreSQL's own in the data directory (PostgreSQL ignores them). */
const PASSWORD_FILE = 'spend-control.password';
const SERVICE_PASSWORD_FILE = 'spend-control.service-password';
const CONNECT_TIMEOUT_MS = 10_000;

/** Creates the cluster; the superuser password reaches initdb through a file only it can read. */
export async function initialise(
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

export function readPassword(dataDir: string): string {
  const file = path.join(dataDir, PASSWORD_FILE);
  if (!existsSync(file)) {
    throw new EmbeddedPostgresError(
      `${dataDir} holds a PostgreSQL cluster but not ${PASSWORD_FILE}, so it cannot be opened: it was not made by ` +
        'this service, or its creation was interrupted. Remove the directory to start afresh.',
    );
  }
  return readFileSync(file, 'utf8').trim();
}

/** The service login's password, generated into the data directory on first use. */
export function servicePassword(dataDir: string): string {
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
export async function prepareAppDatabase(
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
