#!/usr/bin/env node
// The `spend-control` command: start (all roles, or one with --role), migrate, compose, and the
// devnet helpers, dispatched from one table (COMMANDS). Errors print one clear message (no stack
// for expected failures) and exit 1; a usage error also prints the usage text.
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
// Second: tracing (when configured) must see http and pg required after it.
import { tracing } from './tracing';
import 'reflect-metadata';
import path from 'node:path';
import { ChainLayerError } from '../platform/chain/errors';
import { ConfigError, loadConfig } from '../platform/config';
import { MigrationError, migrate } from '../platform/db/migrate';
import { EmbeddedPostgresError } from '../platform/db/embedded';
import { DevnetAlreadyRunningError, DevnetFileError, startDevnetChains } from '../devnet/chains';
import { receiptsMain } from './receiptsVerify';
import { archiveMain } from './archive';
import { withOwnerPool } from './ownerPool';
import { FaucetRefusedError, faucet } from '../devnet/faucet';
import { main as composeMain } from './compose';
import { main as schemaMain } from './schemaDump';
import { parseCommandArgs, parseStartArgs, UsageError } from './args';
import { runDemo } from './demo';
import { ROLES, StartupError, start } from './start';

/** Runs until SIGINT/SIGTERM, then stops cleanly; a second signal exits at once. */
function untilSignal(stop: () => Promise<void>): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        process.stderr.write(`${signal} again: exiting without waiting\n`);
        process.exit(130);
      }
      stopping = true;
      process.stdout.write(`${signal}: stopping …\n`);
      stop()
        .then(() => {
          process.stdout.write('stopped\n');
          resolve(0);
        })
        .catch((error: Error) => {
          process.stderr.write(`error while stopping: ${error.message}\n`);
          resolve(1);
        });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

async function runMigrate(): Promise<number> {
  return withOwnerPool('spend-control-migrate', async (pool) => {
    const result = await migrate(pool, {
      onApplied: (migration) =>
        process.stdout.write(
          `applied ${migration.subgraph} ${migration.version} ${migration.name}\n`,
        ),
    });
    process.stdout.write(`${result.applied.length} migrations applied\n`);
    return 0;
  });
}

const FAUCET_USAGE = 'usage: spend-control devnet faucet <address> [amount]';

/** `<address> [amount]`, nothing else. */
function parseFaucetArgs(argv: readonly string[]): { address: string; amount?: string } {
  let positionals: string[];
  try {
    positionals = parseCommandArgs(argv, {}, true).positionals;
  } catch {
    throw new UsageError(FAUCET_USAGE);
  }
  const [address, amount] = positionals;
  if (!address || positionals.length > 2) throw new UsageError(FAUCET_USAGE);
  return { address, amount };
}

async function runDevnet(argv: readonly string[]): Promise<number> {
  const config = loadConfig();
  const [sub, ...rest] = argv;
  if (sub === 'start') {
    const chains = await startDevnetChains({ dataDir: config.dataDir });
    process.stdout.write(
      `funding    eip155:${chains.info.chains.funding.chainId} ${chains.info.chains.funding.rpcUrl}\n`,
    );
    process.stdout.write(
      `settlement eip155:${chains.info.chains.settlement.chainId} ${chains.info.chains.settlement.rpcUrl}\n`,
    );
    process.stdout.write(`registry   PolicyRegistry ${chains.info.contracts.policyRegistry}\n`);
    process.stdout.write(
      `devnet ready (${path.join(config.dataDir, 'devnet.json')}); Ctrl-C stops it\n`,
    );
    return untilSignal(() => chains.stop());
  }
  if (sub === 'faucet') {
    const { address, amount } = parseFaucetArgs(rest);
    const result = await faucet({ dataDir: config.dataDir, address, amount });
    process.stdout.write(
      `${JSON.stringify(result, (_key, value) => (typeof value === 'bigint' ? value.toString() : value), 2)}\n`,
    );
    return 0;
  }
  throw new UsageError('usage: spend-control devnet start | devnet faucet <address> [amount]');
}

/** Failures whose message says everything a user needs; anything else prints its stack. */
function isExpectedFailure(error: unknown): boolean {
  return [
    ConfigError,
    StartupError,
    EmbeddedPostgresError,
    MigrationError,
    DevnetFileError,
    DevnetAlreadyRunningError,
    FaucetRefusedError,
    ChainLayerError,
  ].some((kind) => error instanceof kind);
}

/**
 * The subcommands, in the order the usage text lists them. A subcommand is one entry: its usage
 * lines (indented two spaces, the description from column 23) and `run`, which receives the
 * arguments after its name and resolves to the exit code; refuse bad arguments with a UsageError.
 */
const COMMANDS: Readonly<Record<string, Command>> = {
  start: {
    usage: `  start [--role <${ROLES.join('|')}>] [--transport in-process|http]
                      run the service (default: every role in one process, on the embedded
                      defaults when DATABASE_URL and the RPC URLs are unset)`,
    run: async (argv) => {
      const running = await start(parseStartArgs(argv));
      return untilSignal(running.stop);
    },
  },
  migrate: {
    usage: `  migrate             apply pending database migrations and exit (as MIGRATION_DATABASE_URL,
                      else DATABASE_URL outside production)`,
    run: () => runMigrate(),
  },
  compose: {
    usage: '  compose [--check]   write schema/ from the subgraphs, or check it has not drifted',
    run: (argv) => composeMain(argv),
  },
  schema: {
    usage: `  schema dump [--check]
                      write schema/sql/ (the database schema after every migration), or check it
                      has not drifted`,
    run: (argv) => schemaMain(argv),
  },
  demo: {
    usage: `  demo                the whole story of one purchase on the embedded default, step by step:
                      policy, sign-in, quote, x402 funding, the merchant paid, the registry's
                      check, the public receipt and the trial balance; exit 1 if a step fails`,
    run: (argv) => {
      if (argv.length > 0) throw new UsageError('usage: spend-control demo');
      return runDemo();
    },
  },
  receipts: {
    usage: `  receipts verify <receiptId|intentId> --rpc <url> [--contract <address>]
                      [--service <url>] [--receipt-file <path>] [--writer-delay <seconds>]
                      check a receipt's inclusion proof against the ReceiptAnchor contract on
                      chain (yours with --contract; the service's otherwise, with a warning) and
                      that its writer delay is three days (or --writer-delay); exit 0 verified,
                      1 not (docs/receipts.md)`,
    run: (argv) => receiptsMain(argv),
  },
  archive: {
    usage: `  archive detach --before <YYYY-MM-DD> [--log <schema.table>]
                      detach the append-only logs', the ledger's (ledger.groups, with its
                      entries, once inside the balance checkpoint), the decisions'
                      (intent.decisions) and the payment records' (ledger.service_payments),
                      each once no longer in use, whole months that end by that date (never
                      the current month), each left as a plain table to dump and drop (as
                      migrate's login; docs/operations.md)`,
    run: (argv) => archiveMain(argv),
  },
  devnet: {
    usage: `  devnet start        run only the local anvil chains (DATA_DIR/devnet.json)
  devnet faucet <address> [amount]
                      send devnet USDT0, USDC and gas to an address (the devnet must be running)`,
    run: (argv) => runDevnet(argv),
  },
};

interface Command {
  readonly usage: string;
  run(argv: readonly string[]): Promise<number>;
}

const USAGE = `usage: spend-control <command>

commands:
${Object.values(COMMANDS)
  .map((command) => command.usage)
  .join('\n')}
  help                show this text

Configuration comes from the environment: see docs/operations.md.`;

const HELP = new Set(['help', '--help', '-h']);

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || HELP.has(command)) {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 1 : 0;
  }
  if (!Object.hasOwn(COMMANDS, command)) throw new UsageError(`unknown command ${command}`);
  return COMMANDS[command]!.run(rest);
}

if (require.main === module) {
  main(process.argv.slice(2))
    .then(async (code) => {
      await tracing?.shutdown();
      process.exit(code);
    })
    .catch((error: unknown) => {
      if (error instanceof UsageError) process.stderr.write(`${error.message}\n\n${USAGE}\n`);
      else if (isExpectedFailure(error)) process.stderr.write(`${(error as Error).message}\n`);
      else
        process.stderr.write(
          `spend-control failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
        );
      process.exit(1);
    });
}
