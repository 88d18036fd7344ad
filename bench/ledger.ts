// Ledger posting benchmark: balanced two-entry groups per second through ledger.post_group from
// CONNECTIONS concurrent connections, with per-call latency. Creates its own database on the
// server named by DATABASE_URL and drops it again. Run: npx tsc -p tsconfig.json && node dist/bench/ledger.js
// Modes: `durable` (every group its own transaction, synchronous_commit on: what production does),
// `async-commit` (synchronous_commit off: a crash may lose the last moments of whole groups, never
// half of one), `batched` (BATCH_SIZE groups per durable transaction). Args: [seconds] [mode|all].
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { Pool, type PoolClient } from 'pg';
import { migrate } from '../platform/db/migrate';
import { serverUrl, withDatabase } from '../platform/db/testDb';
import { accountId, assetId } from '../subgraphs/ledger/accounts';
import { registerAsset } from '../subgraphs/ledger/posting';

const CONNECTIONS = 8;
const DEFAULT_SECONDS_PER_MODE = 10;
const WARMUP_SECONDS = 2;
const BATCH_SIZE = 10;
/** Obligations spread over many accounts; every group also hits the one hot TREASURY account. */
const POLICY_ACCOUNTS = 1_000;
const TARGET_GROUPS_PER_SECOND = 5_000;
const MODES = ['durable', 'async-commit', 'batched'] as const;
/** Printed with the results, so a reader knows what the numbers already include (docs/ledger.md). */
const OPTIMISATIONS =
  'in place: one posting statement (generic plan), entry rules checked once per INSERT statement (no foreign key, no row lock), ' +
  'one commit check per group (one index range scan), domains instead of table CHECKs, BRIN on created_at; ' +
  'CPU-bound: next steps are a batch entry point or C triggers (see docs/ledger.md, Performance)';
type Mode = (typeof MODES)[number];

const ASSET = assetId('eip155:196', '0x779ded0c9e1022225f8e0630b35a9b54be713736');
const TREASURY = accountId('TREASURY', ASSET, 'float');
const POST_GROUP = {
  name: 'bench_post_group',
  text: "SELECT ledger.post_group('FUNDING', $1, $2::jsonb, $3, NULL, $4, NULL)",
};

interface ModeResult {
  mode: Mode;
  groups: number;
  seconds: number;
  latenciesMs: Float64Array;
  clientCpuUs: number;
  /** Null when the server's processes are not visible in this host's /proc. */
  serverCpuUs: number | null;
}

/** user + system CPU of the server processes serving this benchmark, from /proc (same host only). */
function serverCpuUs(pids: readonly number[]): number | null {
  try {
    const ticksPerSecond = 100;
    return pids.reduce((total, pid) => {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return total + ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticksPerSecond;
    }, 0);
  } catch {
    return null;
  }
}

// The entries' JSON is assembled from pre-encoded account ids: on this 2-core machine the bench
// shares the CPUs with the server, so every microsecond it spends per group is one less for it.
const TREASURY_JSON = `[{"account":${JSON.stringify(TREASURY)},"amount":"`;
const OBLIGATION_JSON = Array.from(
  { length: POLICY_ACCOUNTS },
  (_, index) => `"},{"account":${JSON.stringify(accountId('USER_OBLIGATION', ASSET, String(index + 1)))},"amount":"-`,
);

function entriesFor(n: number): { entries: string; policyId: string } {
  const index = n % POLICY_ACCOUNTS;
  const amount = String((n % 9_973) + 1);
  return { policyId: String(index + 1), entries: `${TREASURY_JSON}${amount}${OBLIGATION_JSON[index]}${amount}"}]` };
}

let sequence = 0;
const runId = randomBytes(4).toString('hex');

async function postOne(client: PoolClient): Promise<void> {
  const n = sequence++;
  const { entries, policyId } = entriesFor(n);
  await client.query({ ...POST_GROUP, values: [ASSET, entries, `bench:${runId}:${n}`, policyId] });
}

/** One connection's loop: records the latency of each call (a batch counts per group). */
async function worker(client: PoolClient, mode: Mode, deadlineNs: bigint, latencies: number[]): Promise<number> {
  let groups = 0;
  try {
    if (mode === 'async-commit') await client.query('SET synchronous_commit = off');
    while (process.hrtime.bigint() < deadlineNs) {
      const started = process.hrtime.bigint();
      if (mode === 'batched') {
        await client.query('BEGIN');
        for (let i = 0; i < BATCH_SIZE; i += 1) await postOne(client);
        await client.query('COMMIT');
        groups += BATCH_SIZE;
        const perGroupMs = Number(process.hrtime.bigint() - started) / 1e6 / BATCH_SIZE;
        for (let i = 0; i < BATCH_SIZE; i += 1) latencies.push(perGroupMs);
      } else {
        await postOne(client);
        groups += 1;
        latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }
  } finally {
    if (mode === 'async-commit') await client.query('RESET synchronous_commit');
  }
  return groups;
}

async function run(clients: readonly PoolClient[], pids: readonly number[], mode: Mode, seconds: number): Promise<ModeResult> {
  const latencies: number[] = [];
  const serverBefore = serverCpuUs(pids);
  const clientBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(Math.round(seconds * 1e9));
  const counts = await Promise.all(clients.map((client) => worker(client, mode, deadline, latencies)));
  const elapsedS = Number(process.hrtime.bigint() - started) / 1e9;
  const clientUsage = process.cpuUsage(clientBefore);
  const serverAfter = serverCpuUs(pids);
  const groups = counts.reduce((a, b) => a + b, 0);
  return {
    mode,
    groups,
    seconds: elapsedS,
    latenciesMs: Float64Array.from(latencies).sort(),
    clientCpuUs: (clientUsage.user + clientUsage.system) / groups,
    serverCpuUs: serverBefore === null || serverAfter === null ? null : (serverAfter - serverBefore) / groups,
  };
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function verify(pool: Pool): Promise<{ groups: string; unbalancedAssets: string }> {
  const result = await pool.query<{ groups: string; unbalanced: string }>(
    `SELECT (SELECT count(*) FROM ledger.groups)::text AS groups,
            (SELECT count(*) FROM ledger.trial_balance WHERE net <> 0)::text AS unbalanced`,
  );
  return { groups: result.rows[0].groups, unbalancedAssets: result.rows[0].unbalanced };
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? DEFAULT_SECONDS_PER_MODE);
  const only = process.argv[3] ?? 'all';
  const modes = only === 'all' ? MODES : MODES.filter((mode) => mode === only);
  if (!(seconds > 0) || modes.length === 0) throw new Error(`usage: node dist/bench/ledger.js [seconds] [${MODES.join('|')}|all]`);

  const server = serverUrl();
  const database = `bench_ledger_${runId}`;
  const admin = new Pool({ connectionString: server, max: 1 });
  await admin.query(`CREATE DATABASE ${database}`);
  const pool = new Pool({ connectionString: withDatabase(server, database), max: CONNECTIONS + 1 });
  // DROP DATABASE ... WITH (FORCE) below ends connections that pool.end() is still closing.
  pool.on('error', () => undefined);
  try {
    await migrate(pool, { subgraphs: ['ledger'] });
    await registerAsset(pool, { chain: 'eip155:196', token: ASSET.split('|')[1], symbol: 'USDT0', decimals: 6 });
    const version = (await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0].v;
    process.stdout.write(
      `ledger.post_group: balanced two-entry groups, ${CONNECTIONS} connections, ${seconds} s per mode, ` +
        `PostgreSQL ${version}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)}\n`,
    );
    const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => pool.connect()));
    const rates = new Map<Mode, number>();
    try {
      const pids = await Promise.all(clients.map(async (client) => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid));
      await run(clients, pids, 'durable', WARMUP_SECONDS);
      process.stdout.write('mode            groups   groups/s   p50 ms   p99 ms   server CPU µs/group   bench CPU µs/group\n');
      for (const mode of modes) {
        const result = await run(clients, pids, mode, seconds);
        const rate = result.groups / result.seconds;
        rates.set(mode, rate);
        process.stdout.write(
          `${mode.padEnd(14)} ${String(result.groups).padStart(7)} ${rate.toFixed(0).padStart(10)} ` +
            `${percentile(result.latenciesMs, 50).toFixed(2).padStart(8)} ${percentile(result.latenciesMs, 99).toFixed(2).padStart(8)} ` +
            `${(result.serverCpuUs === null ? 'n/a' : result.serverCpuUs.toFixed(0)).padStart(21)} ${result.clientCpuUs.toFixed(0).padStart(20)}\n`,
        );
      }
    } finally {
      clients.forEach((client) => client.release());
    }
    const check = await verify(pool);
    const durable = rates.get('durable');
    const verdict =
      durable === undefined
        ? 'durable mode not run'
        : `durable ${durable.toFixed(0)} groups/s = ${((100 * durable) / TARGET_GROUPS_PER_SECOND).toFixed(0)}% of it, ` +
          (durable >= TARGET_GROUPS_PER_SECOND ? 'met' : 'NOT met');
    process.stdout.write(
      `target ${TARGET_GROUPS_PER_SECOND} groups/s (durable): ${verdict}; ${check.groups} groups stored, ${check.unbalancedAssets} unbalanced assets\n` +
        `${OPTIMISATIONS}\n`,
    );
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
