// The consumer execution worker alone in a process of its own, for the kill -9 tests: it reads
// its database, rails and keys from CONSUMER_WORKER_CONFIG (JSON), runs rounds every 100 ms and
// wakes on the intents' NOTIFY, exactly as the all-in-one process runs it. With
// SPEND_CONTROL_CRASH_AT set it kills itself with SIGKILL at that execution step
// (platform/crashSeam.ts). Run from dist/ (`node dist/test/support/consumerWorkerProcess.js`).
import { Pool } from 'pg';
import { startConsumerExecutionWorker } from '../../cli/consumerWorker';
import { RoleKey } from '../../platform/chain/keys';
import { createLogger } from '../../platform/log';
import { createRdapClient } from '../../platform/rdap';
import type { ConsumerRails } from '../../subgraphs/kit';

export const CONSUMER_WORKER_CONFIG_ENV = 'CONSUMER_WORKER_CONFIG';

export interface ConsumerWorkerProcessConfig {
  readonly databaseUrl: string;
  /** ConsumerRails with spreadBps as a decimal string (JSON has no bigint). */
  readonly rails: Omit<ConsumerRails, 'spreadBps'> & { readonly spreadBps: string };
  readonly treasuryPrivateKey: string;
  readonly relayerPrivateKey: string;
  /** The RDAP bootstrap the delivery check reads (the devnet registry's). */
  readonly rdapBootstrapUrl: string;
}

async function main(): Promise<void> {
  const raw = process.env[CONSUMER_WORKER_CONFIG_ENV];
  if (raw === undefined) throw new Error(`${CONSUMER_WORKER_CONFIG_ENV} is not set`);
  const config = JSON.parse(raw) as ConsumerWorkerProcessConfig;
  const db = new Pool({ connectionString: config.databaseUrl, max: 8 });
  const worker = await startConsumerExecutionWorker({
    db,
    rails: { ...config.rails, spreadBps: BigInt(config.rails.spreadBps) },
    log: createLogger({ level: 'warn' }),
    treasuryKey: RoleKey.fromPrivateKey('treasury', config.treasuryPrivateKey),
    relayerKey: RoleKey.fromPrivateKey('relayer', config.relayerPrivateKey),
    intervalMs: 100,
    requestTimeoutMs: 10_000,
    rdap: createRdapClient({
      addressPolicy: 'development',
      bootstrapSource: config.rdapBootstrapUrl,
      lookupTimeoutMs: 2_000,
    }),
  });
  process.stdout.write('consumer worker ready\n');
  const stop = () => {
    void worker
      .stop()
      .then(() => db.end())
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

// Runs only as a process of its own; importing it (for the config type) starts nothing.
if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`consumer worker failed: ${String(error)}\n`);
    process.exit(1);
  });
}
