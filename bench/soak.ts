// Soak: a mixed load against `spend-control start` for N minutes, one progress line a minute.
// By default it starts the service itself as `npm start` runs it (every role in one process, on
// the embedded defaults: its own PostgreSQL, two anvil chains, the devnet merchant and RDAP
// registry) in a fresh DATA_DIR, with the rate limits opened wide so the run measures the service;
// `--url <gateway> --data-dir <dir>` targets one already running (the data dir holds its admin
// token and devnet, for the faucet). Agents (own wallet, policy, consumer and owner sessions) loop
// over free calls, paid calls (x402), approved preflights, escalated preflights and whole purchases
// (create → fund over x402 → execute). Each minute prints operations/s, answers by class, 5xx by
// code, the service's memory from its /metrics (resident, V8 heap used and total, external, array
// buffers) and every 4xx kind (route, status, code) with its first body; then each operation kind's
// and each HTTP step's count and p50/p99 latency, and the service's queues from its /metrics (open
// intents by state, pending escalations and anchoring, pool waiters, event-loop lag); before the
// verdict, each operation's p50 minute by minute (soakLatency.ts). `--heap-snapshots <dir>`
// starts the service with a heap-snapshot signal and takes one at each `--snapshot-minutes`
// (default 2,8), for comparing by constructor in DevTools (a snapshot runs a full GC: diagnosis only).
// The service runs with the Node flags of package.json's start script; `--node-flags '…'` overrides them.
// Run: npm run soak -- --minutes 30 [--agents 4] [--url http://127.0.0.1:4000 --data-dir .data]
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { freshWireIntent, policyDocument } from '../core/test-support/spend-fixtures';
import { signIn } from '../devnet/agents/signIn';
import { challengeOf, signedPaymentHeader } from '../devnet/agents/x402Payer';
import { faucet } from '../devnet/faucet';
import { readDevnetFile } from '../devnet/devnetFile';
import { freeLoopbackPort } from '../platform/db/embedded/launch';
import { projectRoot } from '../platform/paths';
import { LatencyTrend } from './soakLatency';
import { memoryText, residentParts, routeOf, serviceBacklog, serviceMemory } from './soakProbe';
import { addTally, minuteLine, newTally, type Tally } from './soakTally';

/** A JSON answer as the soak reads it: plain objects, fields checked where used. */
type Body = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const OPERATIONS = ['free', 'paid', 'preflight', 'escalation', 'purchase'] as const;
type Operation = (typeof OPERATIONS)[number];

interface Agent {
  readonly account: PrivateKeyAccount;
  readonly policyId: string;
  readonly policyHash: string;
  /** The consumer session; renewed by signing in again before it lapses (sessions live 30 min). */
  session: string;
  sessionRenewAt: number;
}

/** A session lives 30 minutes (docs/auth.md); the soak signs in again 5 minutes before that. */
const SESSION_RENEW_AFTER_MS = 25 * 60_000;

/** The service as `npm start` runs it, in a fresh data dir, limits wide open; resolves once ready. */
/** The Node flags `npm start` runs the service with (package.json's start script). */
function startScriptFlags(): string[] {
  const manifest = JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8'));
  const script = String(manifest.scripts.start);
  const flags = /\bnode((?: --[\w-]+(?:=\S+)?)*) dist\/cli\/main\.js start\b/.exec(script);
  if (!flags) throw new Error(`cannot read the node flags of the start script: ${script}`);
  return flags[1]!.split(' ').filter((flag) => flag !== '');
}

async function startService(
  dataDir: string,
  port: number,
  options: { snapshotDir: string | undefined; nodeFlags: readonly string[] },
): Promise<ChildProcess> {
  const wide = '1000000';
  const limits = ['IP', 'CHALLENGE', 'PRINCIPAL', 'PAYER', 'PAID_IP', 'SIGN_IN', 'OUTBOUND'];
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port) };
  delete env.DATABASE_URL;
  for (const name of limits) {
    env[`RATE_LIMIT_${name}_PER_MINUTE`] = wide;
    env[`RATE_LIMIT_${name}_BURST`] = wide;
  }
  const main = path.join(__dirname, '..', 'cli', 'main.js');
  const diagnostics = options.snapshotDir
    ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${options.snapshotDir}`]
    : [];
  const flags = [...options.nodeFlags, ...diagnostics];
  const shown = flags.join(' ') || 'without flags';
  process.stdout.write(
    `soak: starting the service (npm start's assembly, node ${shown}) in ${dataDir} …\n`,
  );
  const child = spawn(process.execPath, [...flags, main, 'start'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (/^ready /m.test(seen)) resolve();
    });
    child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    child.once('exit', (code) => reject(new Error(`the service exited (${code}) before ready`)));
  });
  return child;
}

async function json(response: Response): Promise<Body> {
  return response.json().then(
    (body) => body as Body,
    () => ({}),
  );
}

async function newAgent(url: string, dataDir: string, adminToken: string): Promise<Agent> {
  const account = privateKeyToAccount(generatePrivateKey());
  await faucet({ dataDir, address: account.address, amount: '100000' });
  const funding = readDevnetFile(dataDir).chains.funding;
  const created = await fetch(`${url}/create_spend_policy`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({
      policy: policyDocument({
        owner: account.address.toLowerCase(),
        asset: {
          network: funding.caip2,
          token: funding.token.address.toLowerCase(),
          symbol: 'USDT0',
          decimals: 6,
        },
        categories: { allow: ['domains', 'market-data'], deny: [] },
        rateLimit: { callsPerHour: 100_000 },
        dailyBudget: '1000000.00',
        hardCap: '1000000.00',
        escalation: { timeoutMinutes: 1, channels: ['dashboard'] },
        duplicates: { windowMinutes: 0, keys: ['capability'] },
      }),
    }),
  });
  const policy = await json(created);
  if (created.status !== 201) throw new Error(`policy refused: ${JSON.stringify(policy)}`);
  const session = await signIn(url, account, policy.policyId);
  return {
    account,
    policyId: policy.policyId,
    policyHash: policy.policyHash,
    session,
    sessionRenewAt: Date.now() + SESSION_RENEW_AFTER_MS,
  };
}

class SoakClient {
  constructor(
    private readonly url: string,
    private readonly agent: Agent,
    private readonly tally: () => Tally,
    private readonly fundingNetwork: { network: string; token: string },
  ) {}

  private async send(path: string, init: RequestInit, payment?: string): Promise<Response> {
    const headers = new Headers(init.headers);
    if (payment) headers.set('payment-signature', payment);
    const started = performance.now();
    const answer = await fetch(`${this.url}${path}`, { ...init, headers });
    const bytes = await answer.arrayBuffer(); // the step ends when its whole body is in
    const step = `${routeOf(init.method ?? 'GET', path)}${payment ? ' (paid)' : ''}`;
    const t = this.tally();
    t.steps.record(step, performance.now() - started);
    const response = new Response(bytes.byteLength > 0 ? bytes : null, {
      status: answer.status,
      headers: answer.headers,
    });
    if (response.status === 402) t.answers['402'] += 1;
    else if (response.status >= 500) {
      t.answers['5xx'] += 1;
      const code = String((await json(response.clone())).code ?? response.status);
      t.serverErrors[code] = (t.serverErrors[code] ?? 0) + 1;
    } else if (response.status >= 400) {
      t.answers['4xx'] += 1;
      const route = routeOf(init.method ?? 'GET', path);
      t.clientErrors.record(route, response.status, await json(response.clone()));
    } else t.answers['2xx'] += 1;
    return response;
  }

  /** Sends once unpaid; a 402 is paid once with a fresh authorization. The final answer's body, or null. */
  private async call(path: string, init: RequestInit): Promise<Body | null> {
    let response = await this.send(path, init);
    if (response.status === 402) {
      const started = performance.now();
      const header = await signedPaymentHeader(challengeOf(response), this.agent.account);
      this.tally().steps.record('sign x402 authorization (client)', performance.now() - started);
      response = await this.send(path, init, header);
    }
    return response.ok ? json(response) : null;
  }

  private preflight(amount: string): Promise<Body | null> {
    const intent = freshWireIntent(this.agent, Date.now(), {
      amount,
      ...this.fundingNetwork,
      endpoint: 'https://api.vendor.example/ticks',
    });
    return this.call('/preflight_payment', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ policyId: this.agent.policyId, intent }),
    });
  }

  /** Signs in again when the session nears its end, as a client must (else 401 SESSION_INVALID). */
  private async freshSession(): Promise<void> {
    if (Date.now() < this.agent.sessionRenewAt) return;
    this.agent.session = await signIn(this.url, this.agent.account, this.agent.policyId);
    this.agent.sessionRenewAt = Date.now() + SESSION_RENEW_AFTER_MS;
  }

  async operate(op: Operation): Promise<boolean> {
    await this.freshSession();
    const bearer = { authorization: `Bearer ${this.agent.session}` };
    switch (op) {
      case 'free':
        return (await this.call('/consumer/policy', { headers: bearer })) !== null;
      case 'paid':
        return (await this.call('/ping_service', {})) !== null;
      case 'preflight':
        return (await this.preflight('200000')) !== null;
      case 'escalation':
        return (await this.preflight('1500000')) !== null;
      case 'purchase': {
        const domain = `soak-${randomBytes(6).toString('hex')}.test`;
        const post = (body: unknown) => ({
          method: 'POST',
          headers: { ...bearer, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const created = await this.call(
          '/consumer/intents',
          post({ capability: 'domains.check', params: { domain } }),
        );
        if (created?.intent?.state !== 'AWAITING_FUNDING') return false;
        const base = `/consumer/intents/${created.intent.intentId}`;
        if ((await this.call(`${base}/fund`, { method: 'POST', headers: bearer })) === null)
          return false;
        return (await this.call(`${base}/execute`, post({}))) !== null;
      }
    }
  }
}

function soakArgs() {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string', default: '1' },
      agents: { type: 'string', default: '4' },
      url: { type: 'string' },
      'data-dir': { type: 'string' },
      'heap-snapshots': { type: 'string' },
      'snapshot-minutes': { type: 'string', default: '2,8' },
      'node-flags': { type: 'string' },
    },
  });
  const minutes = Number(values.minutes);
  const agentCount = Number(values.agents);
  if (!Number.isInteger(minutes) || minutes < 1 || !Number.isInteger(agentCount) || agentCount < 1)
    throw new Error('--minutes and --agents take positive integers');
  if ((values.url === undefined) !== (values['data-dir'] === undefined))
    throw new Error('--url needs --data-dir (its admin token and devnet), and the other way round');
  if (values['heap-snapshots'] !== undefined && values.url !== undefined)
    throw new Error('--heap-snapshots needs the service started here (no --url)');
  const snapshotMinutes = new Set(values['snapshot-minutes'].split(',').map(Number));
  const snapshotDir = values['heap-snapshots'] && path.resolve(values['heap-snapshots']);
  const nodeFlags =
    values['node-flags'] === undefined
      ? startScriptFlags()
      : values['node-flags'].split(' ').filter((flag) => flag !== '');
  return { values, minutes, agentCount, snapshotMinutes, snapshotDir, nodeFlags };
}

/** One agent's loop until endAt: the operations in turn, each timed into the minute's tally. */
async function runAgent(
  client: SoakClient,
  first: number,
  endAt: number,
  tally: () => Tally,
): Promise<void> {
  for (let turn = first; Date.now() < endAt; turn += 1) {
    const op = OPERATIONS[turn % OPERATIONS.length]!;
    const started = performance.now();
    const ok = await client.operate(op).catch(() => false);
    const counts = tally();
    counts.operations.record(op, performance.now() - started);
    counts.ops += 1;
    if (!ok) counts.failedOps += 1;
  }
}

async function main(): Promise<number> {
  const { values, minutes, agentCount, snapshotMinutes, snapshotDir, nodeFlags } = soakArgs();

  let child: ChildProcess | null = null;
  let tempDir: string | null = null;
  let url = values.url;
  let dataDir = values['data-dir'] ? path.resolve(values['data-dir']) : '';
  if (url === undefined) {
    tempDir = mkdtempSync(path.join(os.tmpdir(), 'spend-control-soak-'));
    chmodSync(tempDir, 0o755); // the embedded server runs as the postgres user
    dataDir = tempDir;
    const port = await freeLoopbackPort();
    child = await startService(dataDir, port, { snapshotDir, nodeFlags });
    url = `http://127.0.0.1:${port}`;
  }
  try {
    const adminToken = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    const funding = readDevnetFile(dataDir).chains.funding;
    const agents: Agent[] = [];
    for (let i = 0; i < agentCount; i += 1) agents.push(await newAgent(url, dataDir, adminToken));
    process.stdout.write(
      `soak: ${agentCount} agents on ${url} for ${minutes} min; service pid ${child?.pid ?? 'n/a'}, ${memoryText(await serviceMemory(url))}\n`,
    );
    let tally = newTally();
    const total = newTally();
    const endAt = Date.now() + minutes * 60_000;
    const network = { network: funding.caip2, token: funding.token.address.toLowerCase() };
    const loops = agents.map((agent, index) =>
      runAgent(new SoakClient(url!, agent, () => tally, network), index, endAt, () => tally),
    );
    let minute = 0;
    const trend = new LatencyTrend();
    const ticker = setInterval(() => {
      minute += 1;
      const at = minute;
      const ended = tally;
      tally = newTally();
      addTally(total, ended);
      trend.addMinute(ended.operations);
      void Promise.all([serviceMemory(url!), serviceBacklog(url!)]).then(([memory, backlog]) => {
        const parts = residentParts(child?.pid);
        const text = `${memoryText(memory)}${parts === null ? '' : ` (${parts})`}`;
        process.stdout.write(`${minuteLine(at, ended, 60, text, backlog)}\n`);
        if (snapshotDir && snapshotMinutes.has(at)) child?.kill('SIGUSR2');
      });
    }, 60_000);
    await Promise.all(loops);
    clearInterval(ticker);
    addTally(total, tally); // what the last, partial minute counted
    for (const line of trend.lines()) process.stdout.write(`${line}\n`);
    const verdict = total.answers['5xx'] === 0 && total.failedOps === 0 ? 'PASS' : 'FAIL';
    process.stdout.write(
      `soak ${verdict}: ${minutes} min, ${total.ops} ops, ${total.failedOps} failed, 5xx ${total.answers['5xx']}, 4xx ${total.answers['4xx']} (target: zero 5xx; resident memory at the end within 10% of minute 5)\n` +
        total.clientErrors.lines().join('\n') +
        (total.clientErrors.size > 0 ? '\n' : ''),
    );
    return verdict === 'PASS' ? 0 : 1;
  } finally {
    if (child !== null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child!.once('exit', resolve));
    }
    if (tempDir !== null) rmSync(tempDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`soak failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
