// Ledger posting benchmark: balanced two-entry groups per second through the ledger's posting
// functions from CONNECTIONS concurrent connections, with the latency of each call. Creates its
// own database on the server named by DATABASE_URL and drops it again.
// Run: npx tsc -p tsconfig.json && node dist/bench/ledger.js [seconds] [mode|all] [groups per call] [months]
// `months`: that many past months of groups and entries attached first (ledger migration 0014,
// empty, as the worker made them), to show posting does not slow with the months of history.
// Modes (every commit durable, synchronous_commit on, unless the mode says otherwise):
//   post-groups   ledger.post_groups, DEFAULT_GROUPS_PER_CALL (or the 3rd arg) groups per call, each its own
//                 transaction and durable COMMIT (the target of issue #4 is measured here);
//   durable       ledger.post_group, every group its own transaction;
//   async-commit  as durable with synchronous_commit off (a crash may lose the last moments of
//                 whole groups, never half of one): for comparison only;
//   batched       ledger.post_group called BATCH_SIZE times inside one durable transaction.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { Pool, type PoolClient } from 'pg';
import { migrate } from '../platform/db/migrate';
import { serverUrl, withDatabase } from '../platform/db/testDb';
import { TOKEN } from '../core/test-support/spend-fixtures';
import { accountId, assetId } from '../subgraphs/ledger';
import { MAX_GROUPS_PER_BATCH, registerAsset } from '../subgraphs/ledger';

const CONNECTIONS = 8;
const DEFAULT_SECONDS_PER_MODE = 10;
const WARMUP_SECONDS = 2;
/** post_group calls per transaction in `batched` mode. */
const BATCH_SIZE = 10;
/** Groups per ledger.post_groups call (and per durable COMMIT) in `post-groups` mode. */
const DEFAULT_GROUPS_PER_CALL = 100;
/** Obligations spread over many accounts; every group also hits the one hot TREASURY account. */
const POLICY_ACCOUNTS = 1_000;
const TARGET_GROUPS_PER_SECOND = 5_000;
/** The mode the target is judged on: durable commits through the batch entry point. */
const TARGET_MODE = 'post-groups';
const MODES = ['post-groups', 'durable', 'async-commit', 'batched'] as const;
type Mode = (typeof MODES)[number];

const ASSET = assetId('eip155:196', TOKEN);
const TREASURY = accountId('TREASURY', ASSET, 'float');
const POST_GROUP = {
  name: 'bench_post_group',
  text: "SELECT ledger.post_group('FUNDING', $1, $2::jsonb, $3, NULL, $4, NULL)",
};
const POST_GROUPS = {
  name: 'bench_post_groups',
  text: 'SELECT ledger.post_groups($1::jsonb) AS ids',
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

// The JSON is assembled from pre-encoded pieces: on this 2-core machine the bench shares the
// CPUs with the server, so every microsecond it spends per group is one less for the server.
const TREASURY_JSON = `[{"account":${JSON.stringify(TREASURY)},"amount":"`;
const OBLIGATION_JSON = Array.from(
  { length: POLICY_ACCOUNTS },
  (_, index) =>
    `"},{"account":${JSON.stringify(accountId('USER_OBLIGATION', ASSET, String(index + 1)))},"amount":"-`,
);
const GROUP_JSON = `{"kind":"FUNDING","asset":${JSON.stringify(ASSET)},"entries":`;

function entriesFor(n: number): { entries: string; policyId: string } {
  const index = n % POLICY_ACCOUNTS;
  const amount = String((n % 9_973) + 1);
  return {
    policyId: String(index + 1),
    entries: `${TREASURY_JSON}${amount}${OBLIGATION_JSON[index]}${amount}"}]`,
  };
}

let sequence = 0;
const runId = randomBytes(4).toString('hex');

async function postOne(client: PoolClient): Promise<void> {
  const n = sequence++;
  const { entries, policyId } = entriesFor(n);
  await client.query({ ...POST_GROUP, values: [ASSET, entries, `bench:${runId}:${n}`, policyId] });
}

/** One ledger.post_groups call of `count` groups (its own transaction: autocommit). */
async function postMany(client: PoolClient, count: number): Promise<void> {
  const groups: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const n = sequence++;
    const { entries, policyId } = entriesFor(n);
    groups.push(
      `${GROUP_JSON}${entries},"idempotency_key":"bench:${runId}:${n}","policy_id":"${policyId}"}`,
    );
  }
  const result = await client.query<{ ids: string[] }>({
    ...POST_GROUPS,
    values: [`[${groups.join(',')}]`],
  });
  if (result.rows[0].ids.length !== count)
    throw new Error(`post_groups returned ${result.rows[0].ids.length} ids for ${count} groups`);
}

/** One connection's loop: counts groups and records the latency of each call (a group, a transaction or a batch). */
async function worker(
  client: PoolClient,
  mode: Mode,
  groupsPerCall: number,
  deadlineNs: bigint,
  latencies: number[],
): Promise<number> {
  let groups = 0;
  try {
    if (mode === 'async-commit') await client.query('SET synchronous_commit = off');
    while (process.hrtime.bigint() < deadlineNs) {
      const started = process.hrtime.bigint();
      if (mode === 'post-groups') {
        await postMany(client, groupsPerCall);
        groups += groupsPerCall;
      } else if (mode === 'batched') {
        await client.query('BEGIN');
        for (let i = 0; i < BATCH_SIZE; i += 1) await postOne(client);
        await client.query('COMMIT');
        groups += BATCH_SIZE;
      } else {
        await postOne(client);
        groups += 1;
      }
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  } finally {
    if (mode === 'async-commit') await client.query('RESET synchronous_commit');
  }
  return groups;
}

async function run(
  clients: readonly PoolClient[],
  pids: readonly number[],
  mode: Mode,
  groupsPerCall: number,
  seconds: number,
): Promise<ModeResult> {
  const latencies: number[] = [];
  const serverBefore = serverCpuUs(pids);
  const clientBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(Math.round(seconds * 1e9));
  const counts = await Promise.all(
    clients.map((client) => worker(client, mode, groupsPerCall, deadline, latencies)),
  );
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
    serverCpuUs:
      serverBefore === null || serverAfter === null ? null : (serverAfter - serverBefore) / groups,
  };
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** What is stored after the run: every group the bench counted, two entries each, every asset at 0. */
async function verify(
  pool: Pool,
): Promise<{ groups: number; entries: number; unbalancedAssets: number }> {
  const result = await pool.query<{ groups: string; entries: string; unbalanced: string }>(
    `SELECT (SELECT count(*) FROM ledger.groups)::text AS groups,
            (SELECT count(*) FROM ledger.entries)::text AS entries,
            (SELECT count(*) FROM ledger.trial_balance WHERE net <> 0)::text AS unbalanced`,
  );
  const row = result.rows[0];
  return {
    groups: Number(row.groups),
    entries: Number(row.entries),
    unbalancedAssets: Number(row.unbalanced),
  };
}

function label(mode: Mode, groupsPerCall: number): string {
  if (mode === 'post-groups') return `post-groups ×${groupsPerCall}`;
  if (mode === 'batched') return `batched ×${BATCH_SIZE}`;
  return mode;
}

interface BenchArgs {
  seconds: number;
  modes: readonly Mode[];
  groupsPerCall: number;
  /** Past months of ledger partitions attached before the run (0 to 116). */
  months: number;
}

interface ServerSettings {
  version: string;
  synchronous_commit: string;
  fsync: string;
}

function parseArgs(argv: readonly string[]): BenchArgs {
  const seconds = Number(argv[2] ?? DEFAULT_SECONDS_PER_MODE);
  const only = argv[3] ?? 'all';
  const groupsPerCall = Number(argv[4] ?? DEFAULT_GROUPS_PER_CALL);
  const months = Number(argv[5] ?? 0);
  const modes = only === 'all' ? MODES : MODES.filter((mode) => mode === only);
  if (
    !(seconds > 0) ||
    modes.length === 0 ||
    !Number.isInteger(groupsPerCall) ||
    groupsPerCall < 1 ||
    groupsPerCall > MAX_GROUPS_PER_BATCH ||
    !Number.isInteger(months) ||
    months < 0 ||
    months > 116
  ) {
    throw new Error(
      `usage: node dist/bench/ledger.js [seconds] [${MODES.join('|')}|all] [groups per post_groups call, 1..${MAX_GROUPS_PER_BATCH}] [past months attached, 0..116]`,
    );
  }
  return { seconds, modes, groupsPerCall, months };
}

/** The server's version and durability settings, printed with the machine before the run. */
async function describeRun(pool: Pool, seconds: number, months: number): Promise<ServerSettings> {
  const settings = (
    await pool.query<ServerSettings>(
      "SELECT current_setting('server_version') AS version, current_setting('synchronous_commit') AS synchronous_commit, current_setting('fsync') AS fsync",
    )
  ).rows[0];
  process.stdout.write(
    `ledger posting: balanced two-entry groups (every one hits the one TREASURY account), ${CONNECTIONS} connections, ` +
      `${seconds} s per mode, ${months} past months of ledger partitions attached, PostgreSQL ${settings.version} (synchronous_commit ${settings.synchronous_commit}, fsync ${settings.fsync}), ` +
      `${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)}\n`,
  );
  return settings;
}

/** Warm-up, then every selected mode on the same connections, one table row each. */
async function runModes(
  pool: Pool,
  args: BenchArgs,
): Promise<{ rates: Map<Mode, number>; counted: number }> {
  const { seconds, modes, groupsPerCall } = args;
  const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => pool.connect()));
  const rates = new Map<Mode, number>();
  let counted = 0;
  try {
    const pids = await Promise.all(
      clients.map(
        async (client) =>
          (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid,
      ),
    );
    counted += (await run(clients, pids, 'durable', groupsPerCall, WARMUP_SECONDS)).groups;
    counted += (await run(clients, pids, 'post-groups', groupsPerCall, WARMUP_SECONDS)).groups;
    process.stdout.write(
      'mode                groups   groups/s   p50 ms/call   p99 ms/call   server CPU µs/group   bench CPU µs/group\n',
    );
    for (const mode of modes) {
      const result = await run(clients, pids, mode, groupsPerCall, seconds);
      counted += result.groups;
      const rate = result.groups / result.seconds;
      rates.set(mode, rate);
      process.stdout.write(
        `${label(mode, groupsPerCall).padEnd(18)} ${String(result.groups).padStart(7)} ${rate.toFixed(0).padStart(10)} ` +
          `${percentile(result.latenciesMs, 50).toFixed(2).padStart(13)} ${percentile(result.latenciesMs, 99).toFixed(2).padStart(13)} ` +
          `${(result.serverCpuUs === null ? 'n/a' : result.serverCpuUs.toFixed(0)).padStart(21)} ${result.clientCpuUs.toFixed(0).padStart(20)}\n`,
      );
    }
  } finally {
    clients.forEach((client) => client.release());
  }
  return { rates, counted };
}

/** Fails unless every counted group is stored balanced; then the verdict on the target. */
async function checkAndJudge(
  pool: Pool,
  settings: ServerSettings,
  outcome: { rates: Map<Mode, number>; counted: number },
  groupsPerCall: number,
): Promise<void> {
  const { rates, counted } = outcome;
  const check = await verify(pool);
  if (check.groups !== counted || check.entries !== 2 * counted || check.unbalancedAssets !== 0) {
    throw new Error(
      `stored ${check.groups} groups and ${check.entries} entries for ${counted} posted, ${check.unbalancedAssets} unbalanced assets`,
    );
  }
  const target = rates.get(TARGET_MODE);
  const durable = settings.fsync === 'on' && settings.synchronous_commit !== 'off';
  const verdict =
    target === undefined
      ? `${TARGET_MODE} mode not run`
      : !durable
        ? 'not judged: the server does not commit durably (fsync or synchronous_commit off)'
        : `${target.toFixed(0)} groups/s = ${((100 * target) / TARGET_GROUPS_PER_SECOND).toFixed(0)}% of it, ` +
          (target >= TARGET_GROUPS_PER_SECOND ? 'met' : 'NOT met');
  process.stdout.write(
    `target ${TARGET_GROUPS_PER_SECOND} groups/s through ledger.post_groups (${groupsPerCall} groups per call, one durable COMMIT per call): ${verdict}\n` +
      `checked after the run: ${check.groups} groups and ${check.entries} entries stored = every group posted, 0 unbalanced assets\n` +
      'one group per durable COMMIT (`durable`) stays bound by the per-commit cost on this machine; see docs/ledger.md, Performance\n',
  );
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv);
  const server = serverUrl();
  const database = `bench_ledger_${runId}`;
  const admin = new Pool({ connectionString: server, max: 1 });
  await admin.query(`CREATE DATABASE ${database}`);
  const pool = new Pool({ connectionString: withDatabase(server, database), max: CONNECTIONS + 1 });
  // DROP DATABASE ... WITH (FORCE) below ends connections that pool.end() is still closing.
  pool.on('error', () => undefined);
  try {
    await migrate(pool, { subgraphs: ['ledger'] });
    await registerAsset(pool, {
      chain: 'eip155:196',
      token: TOKEN,
      symbol: 'USDT0',
      decimals: 6,
    });
    if (args.months > 0)
      await pool.query(
        'SELECT ledger.ensure_group_month_partitions(now() - make_interval(months => $1::int), now())',
        [args.months],
      );
    const settings = await describeRun(pool, args.seconds, args.months);
    const outcome = await runModes(pool, args);
    await checkAndJudge(pool, settings, outcome, args.groupsPerCall);
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
