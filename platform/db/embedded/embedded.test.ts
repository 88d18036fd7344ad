// The embedded PostgreSQL wrapper, for real: start as root in a temporary directory, restart on the
// same data, recover after its owner was SIGKILLed (orphaned server, then a stale pid file), refuse
// unreachable or busy directories, and leave no server process behind after stop.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { projectRoot } from '../../paths';
import {
  EmbeddedPostgresError,
  isRunning,
  startEmbeddedPostgres,
  type RunningEmbeddedPostgres,
} from '.';

const isRoot = process.getuid?.() === 0;
let workDir: string;
const started: RunningEmbeddedPostgres[] = [];

/** Throwaway servers skip fsync; the first test runs the durable default. */
async function start(dataDir: string, durable = false): Promise<RunningEmbeddedPostgres> {
  const server = await startEmbeddedPostgres({ dataDir, durable });
  started.push(server);
  return server;
}

async function query<T extends object>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** Processes whose command line names `dataDir`: the postmaster is started with `-D <dataDir>`. */
function serverProcessesFor(dataDir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args.some((arg) => arg === dataDir)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A separate Node process that starts the server on `dataDir` and reports its URL. */
async function startInChildProcess(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const script = `
    require(${JSON.stringify(path.join(__dirname, 'index.ts'))})
      .startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, durable: false })
      .then((pg) => process.stdout.write(JSON.stringify({ url: pg.url }) + '\\n'))
      .catch((error) => { console.error(error); process.exit(1); });`;
  const child = spawn(
    process.execPath,
    ['-r', require.resolve('ts-node/register/transpile-only'), '-e', script],
    {
      cwd: projectRoot(),
      env: { ...process.env, TS_NODE_PROJECT: path.join(projectRoot(), 'tsconfig.json') },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n').find((candidate) => candidate.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.on('exit', (code) =>
      reject(new Error(`child exited (${code}) before reporting a URL: ${stderr}`)),
    );
  });
  return { child, url };
}

async function sigkill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

beforeAll(() => {
  workDir = mkdtempSync(path.join(os.tmpdir(), 'embedded-pg-'));
  chmodSync(workDir, 0o755);
});

afterEach(async () => {
  await Promise.all(started.splice(0).map((server) => server.stop()));
});

afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
});

test('starts on a fresh directory, answers SELECT 1, and listens on 127.0.0.1 only', async () => {
  const dataDir = path.join(workDir, 'fresh');
  const server = await start(dataDir, true);

  expect(new URL(server.url).hostname).toBe('127.0.0.1');
  expect(new URL(server.url).pathname).toBe('/spend_control');
  expect(await query(server.url, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
  expect(
    await query(
      server.url,
      "SELECT current_setting('listen_addresses') AS l, current_setting('unix_socket_directories') AS u",
    ),
  ).toEqual([{ l: '127.0.0.1', u: '' }]);
  if (isRoot) {
    // PostgreSQL refuses root; the wrapper hands the directory and the server to `postgres`.
    expect(statSync(dataDir).uid).not.toBe(0);
  }
});

test('a restart reuses the data directory and its data', async () => {
  const dataDir = path.join(workDir, 'restart');
  const first = await start(dataDir);
  await query(first.url, 'CREATE TABLE kept (v text)');
  await query(first.url, 'INSERT INTO kept VALUES ($1)', ['before restart']);
  await first.stop();

  const second = await start(dataDir);
  expect(await query(second.url, 'SELECT v FROM kept')).toEqual([{ v: 'before restart' }]);
});

test('stop shuts the server down and leaves no process for its directory', async () => {
  const dataDir = path.join(workDir, 'stop');
  const server = await start(dataDir);
  expect(serverProcessesFor(dataDir)).toHaveLength(1);

  await server.stop();
  await server.stop();
  expect(serverProcessesFor(dataDir)).toEqual([]);
  expect(existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(false);
});

test('recovers after the owning Node process was SIGKILLed and its server orphaned', async () => {
  const dataDir = path.join(workDir, 'orphaned');
  const { child, url } = await startInChildProcess(dataDir);
  await query(url, 'CREATE TABLE kept (v text)');
  await query(url, 'INSERT INTO kept VALUES ($1)', ['written before the kill']);

  await sigkill(child);
  const orphan = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  expect(isRunning(orphan)).toBe(true);

  const server = await start(dataDir);
  expect(isRunning(orphan)).toBe(false);
  expect(await query(server.url, 'SELECT v FROM kept')).toEqual([{ v: 'written before the kill' }]);
  await server.stop();
  expect(serverProcessesFor(dataDir)).toEqual([]);
});

test('recovers from a stale postmaster.pid whose server is gone too', async () => {
  const dataDir = path.join(workDir, 'stale-pid');
  const { child, url } = await startInChildProcess(dataDir);
  await query(url, 'CREATE TABLE kept (v text)');
  await query(url, 'INSERT INTO kept VALUES ($1)', ['survives a crash']);

  await sigkill(child);
  const postmaster = Number(
    readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0],
  );
  process.kill(postmaster, 'SIGKILL');
  await waitUntil(() => serverProcessesFor(dataDir).length === 0, 10_000);
  expect(existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(true);

  const server = await start(dataDir);
  expect(await query(server.url, 'SELECT v FROM kept')).toEqual([{ v: 'survives a crash' }]);
});

test('refuses a data directory that a live server of this process holds', async () => {
  const dataDir = path.join(workDir, 'busy');
  const server = await start(dataDir);
  await expect(startEmbeddedPostgres({ dataDir, durable: false })).rejects.toThrow(
    /is in use by a PostgreSQL server/,
  );
  // The refusal did not disturb the running server.
  expect(await query(server.url, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
});

test('refuses, with the blocking directory named, a path the server user cannot traverse', async () => {
  // Root may enter a 0700 directory, the postgres user may not; a non-root owner may not enter 0000.
  const closed = path.join(workDir, 'closed');
  mkdirSync(closed, { mode: isRoot ? 0o700 : 0o000 });
  chmodSync(closed, isRoot ? 0o700 : 0o000);
  try {
    const attempt = startEmbeddedPostgres({ dataDir: path.join(closed, 'pg'), durable: false });
    await expect(attempt).rejects.toThrow(EmbeddedPostgresError);
    await expect(attempt).rejects.toThrow(`${closed} (mode ${isRoot ? '0700' : '0000'})`);
    expect(existsSync(path.join(closed, 'pg'))).toBe(false);
  } finally {
    chmodSync(closed, 0o755);
  }
});
