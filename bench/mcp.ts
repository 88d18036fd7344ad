// MCP benchmark: what the MCP transport costs over REST for a paid call. One gateway taking x402
// payment on the devnet (anvil eip155:196, automine); the same paid GET /ping_service called as
// REST (PAYMENT-SIGNATURE header) and as the MCP tool `ping_service` through the MCP SDK's own
// client (payment in params._meta["x402/payment"]), with the same number of concurrent clients, in
// the same run, alternating REST and MCP rounds so neither gets the warmer chain. Every call settles
// on chain and books its fee: the paywall and ledger are one path behind both transports. Clients
// sign before the clock starts, as a real agent's wallet would.
// Run: npm run bench:mcp   (args: [seconds per round])
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import 'reflect-metadata';
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader } from '@x402/core/http';
import { startAllInOne, type RunningStack } from '../cli/stack';
import { startDevnetChains } from '../devnet/chains';
import { signedPaymentHeader } from '../devnet/agents/x402Payer';
import { uniformLimits } from '../gateway/rateLimit/limiter';
import { silentLogger } from '../platform/log';
import { devnetX402, fundedPayers } from './paidStack';
import { benchServiceInfo, createScratchDatabase } from './service';
import { percentile } from './stats';
import { runBenchMain } from './entry';

const DEFAULT_SECONDS = 5;
const ROUNDS = 2;
const CLIENTS = 8;
/** MCP may cost at most this much more than REST per paid call (calls/s ratio). */
const MAX_OVERHEAD = 0.15;

type Database = Awaited<ReturnType<typeof createScratchDatabase>>;
type Devnet = Awaited<ReturnType<typeof startDevnetChains>>;
type Call = (client: number) => Promise<{ ok: boolean; ms: number }>;

interface Tally {
  calls: number;
  failures: number;
  seconds: number;
  latencies: number[];
}

/** `clients` loops calling for `seconds`; adds what they did to `tally`. */
async function round(tally: Tally, seconds: number, call: Call): Promise<void> {
  const started = Date.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_value, client) => {
      while (Date.now() < until) {
        const { ok, ms } = await call(client);
        tally.calls += 1;
        if (!ok) tally.failures += 1;
        tally.latencies.push(ms);
      }
    }),
  );
  tally.seconds += (Date.now() - started) / 1000;
}

async function startPaidStack(database: Database, devnet: Devnet): Promise<RunningStack> {
  const funding = devnet.info.chains.funding;
  return startAllInOne({
    host: '127.0.0.1',
    port: 0,
    db: database.pool,
    transport: 'in-process',
    subgraphPortBase: 0,
    actorSecret: randomBytes(32),
    adminTokenHashes: [createHash('sha256').update(randomBytes(32)).digest()],
    sessionSecret: randomBytes(32),
    listenDatabaseUrl: null,
    graphql: { maxDepth: 10, maxCost: 5000, introspection: false },
    bodyLimitBytes: 65_536,
    rateLimit: { limits: uniformLimits(), store: 'postgres', databaseUrl: database.url },
    log: silentLogger,
    service: benchServiceInfo(funding.token.address, devnet.info.addresses.feeReceiver),
    x402: devnetX402(database, devnet),
  });
}

/** The table and the verdict: MCP's calls/s against REST's. */
function report(tallies: Record<'rest' | 'mcp', Tally>): void {
  process.stdout.write(
    `\npaid GET /ping_service vs paid MCP tool ping_service, ${CLIENTS} clients, ${os.cpus().length} cores, devnet anvil (automine)\n`,
  );
  process.stdout.write('transport  calls  failures   calls/s   p50 ms   p99 ms\n');
  const rates: Record<string, number> = {};
  for (const [name, tally] of Object.entries(tallies)) {
    tally.latencies.sort((a, b) => a - b);
    rates[name] = tally.calls / tally.seconds;
    process.stdout.write(
      `${name.padEnd(9)} ${String(tally.calls).padStart(6)} ${String(tally.failures).padStart(9)} ${rates[name]!.toFixed(1).padStart(9)} ${percentile(tally.latencies, 50).toFixed(1).padStart(8)} ${percentile(tally.latencies, 99).toFixed(1).padStart(8)}\n`,
    );
  }
  const overhead = rates.rest! / rates.mcp! - 1;
  const met = overhead <= MAX_OVERHEAD && tallies.rest.failures + tallies.mcp.failures === 0;
  process.stdout.write(
    `MCP costs ${(overhead * 100).toFixed(1)}% more per paid call than REST\n` +
      `verdict: ${met ? 'target met' : 'target missed'} (MCP transport costs at most ${MAX_OVERHEAD * 100}% more, no failed call)\n`,
  );
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? DEFAULT_SECONDS);
  const database = await createScratchDatabase({ poolSize: 20 });
  process.stdout.write('mcp: starting the devnet chains …\n');
  const devnet = await startDevnetChains({ dataDir: null });
  let stack: RunningStack | null = null;
  const clients: Client[] = [];
  try {
    stack = await startPaidStack(database, devnet);
    const url = stack.gateway.url;
    const payers = await fundedPayers(devnet, CLIENTS);
    const challenge = await fetch(`${url}/ping_service`);
    const required = decodePaymentRequiredHeader(challenge.headers.get('payment-required')!);
    for (let index = 0; index < CLIENTS; index += 1) {
      const client = new Client({ name: 'bench-mcp', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
      clients.push(client);
    }

    const rest: Call = async (client) => {
      const header = await signedPaymentHeader(required, payers[client]!);
      const started = process.hrtime.bigint();
      const response = await fetch(`${url}/ping_service`, {
        headers: { 'payment-signature': header },
      });
      await response.arrayBuffer();
      return { ok: response.status === 200, ms: Number(process.hrtime.bigint() - started) / 1e6 };
    };
    const mcp: Call = async (client) => {
      const payment = decodePaymentSignatureHeader(
        await signedPaymentHeader(required, payers[client]!),
      );
      const started = process.hrtime.bigint();
      const result = await clients[client]!.callTool({
        name: 'ping_service',
        arguments: {},
        _meta: { 'x402/payment': payment },
      });
      const settled = (result._meta as Record<string, { success?: boolean }> | undefined)?.[
        'x402/payment-response'
      ];
      return {
        ok: !result.isError && settled?.success === true,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
      };
    };

    const tallies = {
      rest: { calls: 0, failures: 0, seconds: 0, latencies: [] } as Tally,
      mcp: { calls: 0, failures: 0, seconds: 0, latencies: [] } as Tally,
    };
    // Warm-up, unmeasured: both transports once.
    await round({ calls: 0, failures: 0, seconds: 0, latencies: [] }, 1, rest);
    await round({ calls: 0, failures: 0, seconds: 0, latencies: [] }, 1, mcp);
    for (let index = 0; index < ROUNDS; index += 1) {
      process.stdout.write(
        `mcp: round ${index + 1}/${ROUNDS}, ${CLIENTS} clients, ${seconds}s per transport …\n`,
      );
      await round(tallies.rest, seconds, rest);
      await round(tallies.mcp, seconds, mcp);
    }

    report(tallies);
  } finally {
    for (const client of clients) await client.close().catch(() => undefined);
    await stack?.stop().catch(() => undefined);
    await devnet.stop();
    await database.drop();
  }
}

runBenchMain('bench mcp', main);
