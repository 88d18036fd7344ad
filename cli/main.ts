#!/usr/bin/env node
// The `spend-control` command: start (all roles, or one with --role), migrate, compose, and the
// devnet helpers. Errors print one clear message (no stack for expected failures) and exit 1.
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import 'reflect-metadata';
import path from 'node:path';
import { ChainLayerError } from '../platform/chain/errors';
import { ConfigError, loadConfig } from '../platform/config';
import { createPool } from '../platform/db/pool';
import { MigrationError, migrate } from '../platform/db/migrate';
import { EmbeddedPostgresError, startEmbeddedPostgres } from '../platform/db/embedded';
import { DevnetAlreadyRunningError, DevnetFileError, startDevnetChains } from '../devnet/chains';
import { FaucetRefusedError, faucet } from '../devnet/faucet';
import { main as composeMain } from './compose';
import { main as schemaMain } from './schemaDump';
import { ROLES, StartupError, start, type Role, type StartArgs } from './start';

const USAGE = `usage: spend-control <command>

commands:
  start [--role <${ROLES.join('|')}>] [--transport in-process|http]
                      run the service (default: every role in one process, on the embedded
                      defaults when DATABASE_URL and the RPC URLs are unset)
  migrate             apply pending database migrations and exit (as MIGRATION_DATABASE_URL,
                      else DATABASE_URL outside production)
  compose [--check]   write schema/ from the subgraphs, or check it has not drifted
  schema dump [--check]
                      write schema/sql/ (the database schema after every migration), or check it
  devnet start        run only the local anvil chains (DATA_DIR/devnet.json)
  devnet faucet <address> [amount]
                      send devnet USDT0, USDC and gas to an address (the devnet must be running)
  help                show this text

Configuration comes from the environment: see docs/operations.md.`;

class UsageError extends Error {}

function option(argv: string[], name: string): string | undefined {
  const index = argv.indexOf(name);
  if (index === -1) return undefined;
  const value = argv[index + 1];
  if (value === undefined || value.startsWith('--')) throw new UsageError(`${name} needs a value`);
  return value;
}

function parseStartArgs(argv: string[]): StartArgs {
  const known = new Set(['--role', '--transport']);
  for (let index = 0; index < argv.length; index += 2) {
    if (!known.has(argv[index])) throw new UsageError(`unknown option ${argv[index]}`);
  }
  const role = option(argv, '--role') ?? 'all';
  if (!(ROLES as readonly string[]).includes(role))
    throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
  const transport = option(argv, '--transport') ?? 'in-process';
  if (transport !== 'in-process' && transport !== 'http')
    throw new UsageError('--transport must be in-process or http');
  return { role: role as Role, transport };
}

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
  const config = loadConfig();
  let stopEmbedded: (() => Promise<void>) | null = null;
  let url = config.migrationDatabaseUrl;
  if (url === null && config.databaseUrl !== null) {
    if (config.isProduction)
      throw new StartupError(
        'MIGRATION_DATABASE_URL (a login of spend_control_owner) is required in production',
      );
    url = config.databaseUrl;
  }
  if (url === null) {
    const embedded = await startEmbeddedPostgres({ dataDir: path.join(config.dataDir, 'pg') });
    stopEmbedded = () => embedded.stop();
    url = embedded.url;
  }
  const pool = createPool(url, { applicationName: 'spend-control-migrate' });
  try {
    const result = await migrate(pool, {
      onApplied: (migration) =>
        process.stdout.write(
          `applied ${migration.subgraph} ${migration.version} ${migration.name}\n`,
        ),
    });
    process.stdout.write(`${result.applied.length} migrations applied\n`);
    return 0;
  } finally {
    await pool.end();
    await stopEmbedded?.();
  }
}

async function runDevnet(argv: string[]): Promise<number> {
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
    const [address, amount] = rest;
    if (!address || rest.length > 2)
      throw new UsageError('usage: spend-control devnet faucet <address> [amount]');
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

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start': {
      const running = await start(parseStartArgs(rest));
      return untilSignal(running.stop);
    }
    case 'migrate':
      return runMigrate();
    case 'compose':
      return composeMain(rest);
    case 'schema':
      return schemaMain(rest);
    case 'devnet':
      return runDevnet(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? 1 : 0;
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

if (require.main === module) {
  main(process.argv.slice(2))
    .then((code) => process.exit(code))
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
