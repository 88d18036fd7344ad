// Abuse benchmark: does the process keep answering while it is attacked? Starts the real stack
// (all-in-one, subgraphs in-process, introspection off as in production, the production
// websocket limits) and runs, one after another, the GraphQL attacks of test/e2e/graphqlAbuse.test.ts
// (the same payloads, test/support/graphqlAttacks.ts) plus a deep query and a 1 MiB body, the
// websocket attacks of test/e2e/graphqlSubscriptionsAbuse.test.ts and the pool-starvation storm of
// test/e2e/poolStarvation.test.ts (bench/abuseSockets.ts). Each attack is repeated for a few
// seconds, every answer checked to be the refusal the tests expect, while a thread of its own
// (bench/healthProber.ts) asks GET /healthz back to back; the table shows the p50/p99/max of those
// answers per attack, beside a row with no attack, and the verdict on the target. The GraphQL
// senders share the server's thread (a fetch of a body serialised beforehand, the answer's JSON);
// the heavy websocket clients run on threads of their own. The tests assert only that every probe
// answers 200; how fast is this benchmark's business.
// Run: npm run bench:abuse   (args: [seconds per attack] [concurrent GraphQL senders])
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { RunningStack } from '../cli/stack';
import { freshWireIntent, policyDocument } from '../core/test-support/spend-fixtures';
import { signIn } from '../devnet/agents/signIn';
import { DEFAULT_SUBSCRIPTION_LIMITS } from '../platform/config';
import {
  GRAPHQL_ATTACKS,
  aliasedPreflights,
  type GraphQLAttack,
} from '../test/support/graphqlAttacks';
import * as sockets from './abuseSockets';
import { PROBE_GAP_MS, startHealthProber, type HealthProber } from './healthProber';
import { createScratchDatabase, startDeployedStack } from './service';
import { percentile } from './stats';
import { runBenchMain } from './entry';

const DEFAULT_SECONDS = 3;
const TARGET_MS = 100;

interface Row {
  name: string;
  rounds: number;
  probes: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  failures: number;
}

type Database = Awaited<ReturnType<typeof createScratchDatabase>>;
type Attack = { name: string; senders: number; round: () => Promise<void> };

/** One send of `body` to POST /graphql that must be refused with `status` and `code`. */
function graphqlRound(
  url: string,
  name: string,
  body: string,
  attack: Pick<GraphQLAttack, 'status' | 'code'>,
) {
  return async () => {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const answer = (await response.json()) as {
      code?: string;
      errors?: Array<{ extensions?: { code?: string } }>;
    };
    const code = answer.errors?.[0]?.extensions?.code ?? answer.code;
    if (response.status !== attack.status || code !== attack.code)
      throw new Error(
        `abuse bench: ${name} answered ${response.status} ${code}, not ${attack.status} ${attack.code}`,
      );
  };
}

/** The GraphQL attacks, each body serialised before the clock starts. */
function graphqlAttacks(
  url: string,
  policy: { policyId: string; policyHash: string },
  senders: number,
): Attack[] {
  let deep = 'id';
  for (let level = 0; level < 6; level += 1) deep = `capabilities { provider { ${deep} } }`;
  const intent = freshWireIntent(policy, Date.now()) as Record<string, unknown>;
  const tooLarge = { status: 400, code: 'GRAPHQL_QUERY_TOO_LARGE' };
  const all: Array<[string, string, Pick<GraphQLAttack, 'status' | 'code'>]> = [
    ...Object.entries(GRAPHQL_ATTACKS).map(
      ([name, attack]) =>
        [name, JSON.stringify(attack.request), attack] as [string, string, GraphQLAttack],
    ),
    [
      'aliasedPreflights×1000',
      JSON.stringify(aliasedPreflights(1000, policy.policyId, intent)),
      tooLarge,
    ],
    [
      'aliasedPreflights×50',
      JSON.stringify(aliasedPreflights(50, policy.policyId, intent)),
      tooLarge,
    ],
    [
      'deepQuery',
      JSON.stringify({ query: `{ provider(id: "spendctl-domains") { ${deep} } }` }),
      { status: 400, code: 'GRAPHQL_QUERY_TOO_DEEP' },
    ],
    [
      'hugeBody (1 MiB)',
      JSON.stringify({ query: '{ __typename }', variables: { padding: 'x'.repeat(1 << 20) } }),
      { status: 413, code: 'BODY_TOO_LARGE' },
    ],
  ];
  return all.map(([name, body, attack]) => ({
    name,
    senders,
    round: graphqlRound(url, name, body, attack),
  }));
}

/** Repeats `attack.round` with `attack.senders` senders until `seconds` passed; how many rounds ran. */
async function repeatFor(attack: Attack, seconds: number): Promise<number> {
  const until = Date.now() + seconds * 1000;
  let rounds = 0;
  await Promise.all(
    Array.from({ length: attack.senders }, async () => {
      do {
        await attack.round();
        rounds += 1;
      } while (Date.now() < until);
    }),
  );
  return rounds;
}

async function measure(prober: HealthProber, attack: Attack, seconds: number): Promise<Row> {
  await attack.round(); // once unwatched, so its code paths are compiled before the clock
  let rounds = 0;
  const report = await prober.beside(async () => {
    rounds = await repeatFor(attack, seconds);
  });
  const sorted = [...report.latenciesMs].sort((a, b) => a - b);
  return {
    name: attack.name,
    rounds,
    probes: sorted.length,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.at(-1) ?? 0,
    failures: report.failures,
  };
}

/** The websocket attacks and the pool storm, one sender each (each round is many requests). */
function socketAttacks(target: sockets.SocketTarget): Attack[] {
  return [
    {
      name: 'subscriptionFlood (2,000 on one socket)',
      senders: 1,
      round: () => sockets.subscriptionFlood(target),
    },
    {
      name: 'socketFlood (limit + 10 sockets)',
      senders: 1,
      round: () => sockets.socketFlood(target),
    },
    { name: 'badCredentials (5 sockets)', senders: 1, round: () => sockets.badCredentials(target) },
    {
      name: 'slowReader (1,500 × 7 KB notices)',
      senders: 1,
      round: () => sockets.slowReader(target),
    },
    {
      name: 'poolStorm (4 × pool, lock held 200 ms)',
      senders: 1,
      round: () => sockets.poolStorm(target),
    },
  ];
}

/** A signed-in owner with a policy of their own: what the escalation subscriptions need. */
async function prepareTarget(stack: RunningStack, database: Database, adminToken: string) {
  const owner = privateKeyToAccount(generatePrivateKey());
  const created = await fetch(`${stack.gateway.url}/create_spend_policy`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({ policy: policyDocument({ owner: owner.address.toLowerCase() }) }),
  });
  const policy = (await created.json()) as { policyId: string; policyHash: string };
  if (created.status !== 201) throw new Error(`policy refused: ${JSON.stringify(policy)}`);
  const target: sockets.SocketTarget = {
    stack,
    wsUrl: `${stack.gateway.url.replace(/^http/, 'ws')}/graphql`,
    database,
    adminToken,
    ownerToken: await signIn(stack.gateway.url, owner),
    policyId: policy.policyId,
    maxSocketsPerSession: DEFAULT_SUBSCRIPTION_LIMITS.maxSocketsPerSession,
  };
  await sockets.prepareStorms(target);
  return { target, policy };
}

function report(rows: Row[], seconds: number, senders: number): void {
  process.stdout.write(
    `\nGET /healthz beside each attack (${seconds}s each, ${senders} GraphQL sender(s); probes one after ` +
      `another, ${PROBE_GAP_MS} ms apart, from a thread of their own) on ${os.cpus().length} cores, ` +
      `load average ${os.loadavg()[0].toFixed(1)}\n`,
  );
  process.stdout.write(`${'attack'.padEnd(42)} rounds  probes   p50 ms   p99 ms   max ms\n`);
  for (const row of rows)
    process.stdout.write(
      `${row.name.padEnd(42)} ${String(row.rounds).padStart(6)} ${String(row.probes).padStart(7)} ` +
        `${row.p50Ms.toFixed(1).padStart(8)} ${row.p99Ms.toFixed(1).padStart(8)} ${row.maxMs.toFixed(1).padStart(8)}\n`,
    );
  const failed = rows.filter((row) => row.failures > 0 || row.probes === 0);
  if (failed.length > 0)
    throw new Error(
      `/healthz failed or never answered during ${failed.map((row) => row.name).join(', ')}`,
    );
  const slow = rows.filter((row) => row.maxMs >= TARGET_MS);
  process.stdout.write(
    `verdict: ${slow.length === 0 ? 'target met' : `target missed (${slow.map((row) => row.name).join(', ')})`} ` +
      `(target: /healthz within ${TARGET_MS} ms during every attack)\n`,
  );
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? DEFAULT_SECONDS);
  const senders = Number(process.argv[3] ?? 1);
  const database = await createScratchDatabase();
  const adminToken = randomBytes(32).toString('base64url');
  let stack: RunningStack | null = null;
  let prober: HealthProber | null = null;
  try {
    stack = await startDeployedStack(database, adminToken);
    const { target, policy } = await prepareTarget(stack, database, adminToken);
    prober = startHealthProber(stack.gateway.url);
    const idle: Attack = {
      name: '(no attack)',
      senders: 1,
      round: () => new Promise((resolve) => setTimeout(resolve, 100)),
    };
    const rows: Row[] = [];
    for (const attack of [
      idle,
      ...graphqlAttacks(stack.gateway.url, policy, senders),
      ...socketAttacks(target),
    ]) {
      process.stdout.write(`abuse: ${attack.name} …\n`);
      rows.push(await measure(prober, attack, seconds));
    }
    report(rows, seconds, senders);
  } finally {
    await prober?.close();
    await stack?.stop().catch(() => undefined);
    await database.drop();
  }
}

runBenchMain('bench abuse', main);
