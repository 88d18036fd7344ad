// Growth benchmark: do preflight, posting and the owner's reads stay flat as history grows? On empty
// tables it measures preflights/s (POST /preflight_payment through the in-process gateway, the
// preflight bench's clients on a worker thread), posting groups/s (ledger.post_groups, durable
// commits, as bench:ledger) and the owner's activity and ledger reads (spendDecisions and
// ledgerGroups of the owner's policy, newest page, through POST /graphql, one at a time); then loads
// DECISIONS decisions and ENTRIES ledger entries of history by SQL (growthHistory.ts) and measures
// the same again, in one run. The host's speed drifts by up to a quarter over the minutes the load
// takes, so both rates are then also measured side by side: SIDE_BY_SIDE_PAIRS windows on the
// loaded tables, each paired with one on empty tables (preflight: a twin stack on a database of its
// own, started and measured alongside the loaded one from the beginning but given no history;
// posting: a fresh empty ledger per pair), which of the two goes first alternating from pair to
// pair, and the verdict compares their medians, measured in the same minutes. Creates and drops its
// own databases on DATABASE_URL's server.
// Run: npm run bench:growth   (args: [seconds per measurement] [decisions] [entries])
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { RunningStack } from '../cli/stack';
import { newConsumerIntentId, newServicePaymentId } from '../core/canon/ids';
import { loadPersistedDocuments } from '../gateway/rest/documents';
import { advanceCheckpoint } from '../subgraphs/ledger';
import { loadHistory } from './growthHistory';
import type { ClientJob, ClientReport } from './preflightClients';
import {
  ASSET,
  type Database,
  emptyLedger,
  jobOf,
  OBLIGATION_PREFIX,
  POLICIES,
  type PreflightJob,
  startStack,
  TREASURY,
} from './growthStacks';
import { percentile } from './stats';
import {
  printSideBySide,
  ratioOf,
  SIDE_BY_SIDE_PAIRS,
  type SideBySide,
  sideBySide,
} from './growthSideBySide';
import { benchFailed } from './entry';

const DEFAULT_SECONDS = 8;
const DEFAULT_ROWS = 5_000_000;
const POSTING_CONNECTIONS = 4;
const GROUPS_PER_CALL = 100;
const READS = 300;
const MIN_RATIO = 0.9;
const READ_P99_MS = 50;
/** Reads of the treasury's balance and of the trial balance, each, per measurement. */
const BALANCE_READS = 50;

interface Figures {
  preflightsPerSecond: number;
  groupsPerSecond: number;
  activityMs: { p50: number; p99: number };
  ledgerMs: { p50: number; p99: number };
  /** The treasury float's balance (ledger.balance_of) and the trial balance, read through the checkpoint. */
  balanceMs: { p50: number; p99: number };
  trialMs: { p50: number; p99: number };
}

/** p50 and p99 ms of `count` runs of `read`, one at a time. */
async function latencyOf(count: number, read: () => Promise<unknown>) {
  const latencies: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const started = performance.now();
    await read();
    latencies.push(performance.now() - started);
  }
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/** `count` runs of one statement on the pool, one at a time: p50/p99 ms. */
function sqlLatency(database: Database, count: number, text: string, values: unknown[] = []) {
  return latencyOf(count, () => database.pool.query(text, values));
}

const TREASURY_BALANCE = 'SELECT ledger.balance_of($1)::text';
const TRIAL_BALANCE = 'SELECT asset, net::text, entry_count::text FROM ledger.trial_balance';

/**
 * The balance reads as they cost with the checkpoint as current as the worker keeps it (it moves
 * it once 10,000 entries are behind; the posting just measured left hundreds of thousands).
 */
async function balanceReads(database: Database): Promise<Pick<Figures, 'balanceMs' | 'trialMs'>> {
  const advanced = await advanceCheckpoint(database.pool, 10_000);
  if (!advanced.marked) throw new Error('the balance checkpoint could not be advanced');
  return {
    balanceMs: await sqlLatency(database, BALANCE_READS, TREASURY_BALANCE, [TREASURY]),
    trialMs: await sqlLatency(database, BALANCE_READS, TRIAL_BALANCE),
  };
}

/**
 * The worker keeps the balance checkpoint current as history accumulates; history loaded by SQL
 * all at once has none yet. Reads the two balances once as they cost with no checkpoint, advances
 * it (timed), and says so.
 */
async function checkpointAfterLoad(database: Database): Promise<void> {
  const before = await sqlLatency(database, 1, TREASURY_BALANCE, [TREASURY]);
  const trialBefore = await sqlLatency(database, 1, TRIAL_BALANCE);
  const started = performance.now();
  const advanced = await advanceCheckpoint(database.pool, 10_000);
  if (!advanced.marked)
    throw new Error('the balance checkpoint could not be advanced after the load');
  process.stdout.write(
    `balance checkpoint through seq ${advanced.throughSeq} in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
      `before it, one treasury balance read took ${before.p50.toFixed(0)} ms and one trial balance ${trialBefore.p50.toFixed(0)} ms\n`,
  );
}

/**
 * One window of preflights on `job`'s stack, in preflights/s; `round` keeps every window's nonces
 * apart. Each window's listeners go when it ends (a run has a dozen windows on one worker).
 */
function preflightWindow(clients: Worker, job: PreflightJob, round: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onReport = (report: ClientReport) => {
      clients.off('error', onError);
      const failed = report.statuses.filter(([status]) => status !== 200);
      if (failed.length > 0) reject(new Error(`preflights answered ${JSON.stringify(failed)}`));
      else resolve(Math.round(report.latenciesMs.length / report.elapsedSeconds));
    };
    const onError = (error: Error) => {
      clients.off('message', onReport);
      reject(error);
    };
    clients.once('message', onReport);
    clients.once('error', onError);
    const window: ClientJob = { ...job, nonceStart: String(BigInt(round + 1) * 1_000_000_000n) };
    clients.postMessage(window);
  });
}

let posted = 0;
/** Balanced two-entry groups through ledger.post_groups from several connections for `seconds`. */
async function groupsPerSecond(database: Database, seconds: number): Promise<number> {
  const until = Date.now() + seconds * 1000;
  const started = Date.now();
  let groups = 0;
  const connection = async () => {
    while (Date.now() < until) {
      const batch = Array.from({ length: GROUPS_PER_CALL }, () => {
        const n = (posted += 1);
        const amount = String((n % 9_973) + 1);
        return {
          kind: 'FUNDING',
          asset: ASSET,
          // Keys shaped as production's: a fee's or a consumer funding's, on a time-ordered id.
          idempotency_key:
            n % 2 === 0 ? `x402:fee:${newServicePaymentId()}` : `funding:${newConsumerIntentId()}`,
          policy_id: String((n % 1_000) + 1),
          entries: [
            { account: TREASURY, amount },
            { account: `${OBLIGATION_PREFIX}${(n % 1_000) + 1}`, amount: `-${amount}` },
          ],
        };
      });
      await database.pool.query('SELECT ledger.post_groups($1::jsonb)', [JSON.stringify(batch)]);
      groups += GROUPS_PER_CALL;
    }
  };
  await Promise.all(Array.from({ length: POSTING_CONNECTIONS }, connection));
  return Math.round(groups / ((Date.now() - started) / 1000));
}

/** p50 and p99 of READS calls of one GraphQL read, one at a time, as the admin. */
function readLatency(gatewayUrl: string, adminToken: string, query: string) {
  return latencyOf(READS, async () => {
    const response = await fetch(`${gatewayUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ query }),
    });
    const body = (await response.json()) as { errors?: unknown; data?: unknown };
    if (response.status !== 200 || body.errors) throw new Error(JSON.stringify(body));
  });
}

/** A stack the bench measures: its database, its gateway, and the clients' job against it. */
interface Context {
  database: Database;
  clients: Worker;
  gatewayUrl: string;
  adminToken: string;
  job: PreflightJob;
}

async function measure(
  context: Context,
  round: number,
  /** Runs after the rates and before the reads (the first checkpoint over loaded history). */
  beforeReads: () => Promise<void> = async () => undefined,
): Promise<Figures> {
  const owner = context.job.policies[0].policyId;
  const preflights = await preflightWindow(context.clients, context.job, round);
  const groups = await groupsPerSecond(context.database, context.job.seconds);
  await beforeReads();
  const activity = `{ spendDecisions(policyId: "${owner}", first: 50) { nodes { id decision evaluatedAt } pageInfo { endCursor hasNextPage } } }`;
  const ledger = `{ ledgerGroups(filter: { policyId: "${owner}" }, first: 50) { nodes { id kind createdAt entries { accountKey amountAtomic } } pageInfo { endCursor hasNextPage } } }`;
  return {
    preflightsPerSecond: preflights,
    groupsPerSecond: groups,
    activityMs: await readLatency(context.gatewayUrl, context.adminToken, activity),
    ledgerMs: await readLatency(context.gatewayUrl, context.adminToken, ledger),
    ...(await balanceReads(context.database)),
  };
}

function printFigures(label: string, figures: Figures): void {
  const ms = (value: { p50: number; p99: number }) =>
    `${value.p50.toFixed(1).padStart(6)} ${value.p99.toFixed(1).padStart(6)}`;
  process.stdout.write(
    `${label.padEnd(22)} ${String(figures.preflightsPerSecond).padStart(12)} ${String(figures.groupsPerSecond).padStart(10)}   ` +
      `${ms(figures.activityMs)}      ${ms(figures.ledgerMs)}      ${ms(figures.balanceMs)}     ${ms(figures.trialMs)}   load ${os.loadavg()[0].toFixed(1)}\n`,
  );
}

function printVerdict(
  grown: Figures,
  sideBySide: { preflight: SideBySide; posting: SideBySide },
  rows: string,
): void {
  const preflightRatio = ratioOf(sideBySide.preflight);
  const postingRatio = ratioOf(sideBySide.posting);
  const worstRead = Math.max(grown.activityMs.p99, grown.ledgerMs.p99);
  const met = preflightRatio >= MIN_RATIO && postingRatio >= MIN_RATIO && worstRead < READ_P99_MS;
  process.stdout.write(
    `target at ${rows}: preflight/s and posting groups/s ≥ ${MIN_RATIO * 100} % of empty, owner reads p99 < ${READ_P99_MS} ms: ` +
      `preflight ${(preflightRatio * 100).toFixed(0)} %, posting ${(postingRatio * 100).toFixed(0)} % (both side by side), ` +
      `reads p99 ${worstRead.toFixed(1)} ms — ${met ? 'met' : 'NOT met'}\n`,
  );
}

/**
 * Both rates side by side after the load. Preflight: the loaded stack against its twin, started and
 * measured alongside it from the beginning but given no history (so the reservations the windows
 * left, lapsing with no worker to sweep them, are alike on both); posting: a fresh empty ledger for
 * each pair, since posting fills the ledger it measures.
 */
async function measureSideBySide(parts: {
  loaded: Context;
  twin: Context;
  emptyLedger: () => Promise<Database>;
}): Promise<{ preflight: SideBySide; posting: SideBySide }> {
  const { loaded, twin } = parts;
  const preflight = await sideBySide(
    (pair) => preflightWindow(loaded.clients, loaded.job, 10 + pair),
    (pair) => preflightWindow(twin.clients, twin.job, 20 + pair),
  );
  printSideBySide('preflights/s', preflight);
  const empties: Database[] = [];
  for (let i = 0; i < SIDE_BY_SIDE_PAIRS; i += 1) empties.push(await parts.emptyLedger());
  const posting = await sideBySide(
    () => groupsPerSecond(loaded.database, loaded.job.seconds),
    (pair) => groupsPerSecond(empties[pair]!, loaded.job.seconds),
  );
  printSideBySide('posting groups/s', posting);
  return { preflight, posting };
}

/** Loads the history by SQL, reporting each chunk, and says how long it took. */
async function loadAndReport(
  database: Database,
  ownerPolicyId: string,
  decisions: number,
  entries: number,
): Promise<string> {
  const started = Date.now();
  // The history is written as the database's administrator: the service role may only call the
  // ledger's functions and the intent subgraph's statements, never insert rows of its own.
  await loadHistory(
    database.adminPool,
    {
      ownerPolicyId,
      asset: ASSET,
      treasuryAccount: TREASURY,
      obligationPrefix: OBLIGATION_PREFIX,
    },
    { decisions, entries },
    (table, rows, chunkSeconds) =>
      process.stderr.write(`  ${table}: ${rows} rows (${chunkSeconds.toFixed(0)} s)\n`),
  );
  const rows = `${decisions.toLocaleString('en')} decisions + ${entries.toLocaleString('en')} entries`;
  process.stdout.write(
    `history loaded by SQL in ${((Date.now() - started) / 1000).toFixed(0)} s: ${rows}\n`,
  );
  return rows;
}

function printHeader(seconds: number): void {
  process.stdout.write(
    `growth: ${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(1)}; ${seconds} s per rate, ${READS} reads each, owner's policy of ${POLICIES}\n` +
      'history                preflights/s   groups/s   activity p50/p99 ms   ledger p50/p99 ms   treasury balance ms   trial balance ms\n',
  );
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? DEFAULT_SECONDS);
  const decisions = Number(process.argv[3] ?? DEFAULT_ROWS);
  const entries = Number(process.argv[4] ?? DEFAULT_ROWS);
  const databases: Database[] = [];
  const stacks: RunningStack[] = [];
  const dropAll = () => Promise.all(databases.map((db) => db.drop()));
  // A run stopped midway still drops its databases (gigabytes at full size).
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void dropAll().finally(() => process.exit(130)));
  const secrets = {
    actorSecret: randomBytes(32),
    adminToken: randomBytes(32).toString('base64url'),
  };
  const document = loadPersistedDocuments().get('preflightPayment');
  if (!document) throw new Error('no persisted preflightPayment document');
  const clients = new Worker(path.join(__dirname, 'preflight.js'), {
    workerData: { clients: true },
  });
  const start = async (): Promise<Context> => {
    const started = await startStack(secrets);
    databases.push(started.database);
    stacks.push(started.stack);
    const job = jobOf(started, { seconds, actorSecret: secrets.actorSecret, document });
    const { database, stack } = started;
    return {
      database,
      clients,
      gatewayUrl: stack.gateway.url,
      adminToken: secrets.adminToken,
      job,
    };
  };
  try {
    const loaded = await start();
    const twin = await start();
    printHeader(seconds);
    printFigures('empty tables', await measure(loaded, 0));
    printFigures('twin, empty', await measure(twin, 2));
    const { database } = loaded;
    const rows = await loadAndReport(database, loaded.job.policies[0].policyId, decisions, entries);
    const grown = await measure(loaded, 1, () => checkpointAfterLoad(database));
    printFigures('with history', grown);
    printFigures('twin, no history', await measure(twin, 3));
    const pairs = await measureSideBySide({
      loaded,
      twin,
      emptyLedger: async () => {
        const ledger = await emptyLedger(POSTING_CONNECTIONS + 1);
        databases.push(ledger);
        return ledger;
      },
    });
    printVerdict(grown, pairs, rows);
  } finally {
    await clients.terminate();
    for (const stack of stacks) await stack.stop();
    await dropAll();
  }
}

main().catch(benchFailed('bench'));
