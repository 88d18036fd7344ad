// prepareConsumer from a configuration off the devnet: the rails are built from the environment
// (chains, tokens, treasury, merchant, read bounds), the worker's keys come with the roles that run
// it, and each missing piece stops the start with its code.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { DevnetChainInfo, DevnetInfo } from '../devnet/devnetFile';
import { generateKeyStore, keyStoreAddresses } from '../platform/chain/keys';
import { loadConfig } from '../platform/config';
import { createRdapClient } from '../platform/rdap';
import { prepareConsumer, type ConsumerInputs } from './consumerSetup';
import { StartupError, type Role } from './startup';

const fundingToken = privateKeyToAccount(generatePrivateKey()).address;
const settlementToken = privateKeyToAccount(generatePrivateKey()).address;
const treasuryKey = generatePrivateKey();
const treasury = privateKeyToAccount(treasuryKey).address;
const relayerKey = generatePrivateKey();
const rdap = createRdapClient({
  bootstrapSource: 'http://127.0.0.1:1/dns.json',
  addressPolicy: 'development',
});

const configured = {
  FUNDING_RPC_URL: 'http://127.0.0.1:8545',
  SETTLEMENT_RPC_URL: 'http://127.0.0.1:8546',
  FUNDING_TOKEN_ADDRESS: fundingToken,
  SETTLEMENT_TOKEN_ADDRESS: settlementToken,
  PROVIDER_DOMAINS_URL: 'http://127.0.0.1:4999',
  CHAIN_LOG_PAGE_BLOCKS: '500',
};

function inputs(role: Role, env: Record<string, string>): ConsumerInputs & { lines: string[] } {
  const lines: string[] = [];
  const config = loadConfig(env);
  return {
    config,
    role,
    devnet: null,
    devnetKeys: null,
    providerUrls: config.providerUrls,
    rdap,
    out: (line) => lines.push(line),
    lines,
  };
}

function startupError(run: () => unknown): StartupError {
  try {
    run();
  } catch (error) {
    if (error instanceof StartupError) return error;
    throw error;
  }
  throw new Error('expected a StartupError');
}

test('role all with TREASURY_ADDRESS only: the rails from the configuration, no worker in this process', () => {
  const given = inputs('all', { ...configured, TREASURY_ADDRESS: treasury });
  const setup = prepareConsumer(given);
  expect(setup.rails).toEqual({
    funding: {
      network: 'eip155:196',
      chainId: 196,
      rpcUrl: 'http://127.0.0.1:8545',
      token: fundingToken,
      decimals: 6,
      symbol: 'USDT0',
      name: 'USD₮0',
      version: '1',
      treasury,
      logPageBlocks: 500n,
    },
    settlement: {
      network: 'eip155:8453',
      chainId: 8453,
      rpcUrl: 'http://127.0.0.1:8546',
      token: settlementToken,
      decimals: 6,
      symbol: 'USDC',
      name: 'USD Coin',
      version: '2',
      treasury,
      logPageBlocks: 500n,
    },
    providers: { 'spendctl-domains': 'http://127.0.0.1:4999' },
    spreadBps: 50n,
    reportRpcCalls: 1000,
  });
  expect(setup.execution).toBeUndefined();
  expect(given.lines.join('\n')).toMatch(/no execution worker here: TREASURY_PRIVATE_KEY unset/);
});

test('roles all and worker with both keys run the worker: the treasury and relayer keys, RDAP, the default interval', () => {
  for (const role of ['all', 'worker'] as const) {
    const setup = prepareConsumer(
      inputs(role, {
        ...configured,
        TREASURY_PRIVATE_KEY: treasuryKey,
        RELAYER_PRIVATE_KEY: relayerKey,
      }),
    );
    expect(setup.rails?.funding.treasury).toBe(treasury);
    expect(setup.execution?.treasuryKey.address).toBe(treasury);
    expect(setup.execution?.relayerKey.address).toBe(privateKeyToAccount(relayerKey).address);
    expect(setup.execution?.rdap).toBe(rdap);
    expect(setup.execution?.intervalMs).toBe(250);
  }
});

test('a subgraph role gets the rails and never the worker', () => {
  const setup = prepareConsumer(
    inputs('intent', {
      ...configured,
      TREASURY_PRIVATE_KEY: treasuryKey,
      RELAYER_PRIVATE_KEY: relayerKey,
    }),
  );
  expect(setup.rails?.settlement.token).toBe(settlementToken);
  expect(setup.execution).toBeUndefined();
});

test('the worker role without a key stops the start: CONSUMER_WORKER_KEYS_MISSING naming each', () => {
  const missingBoth = startupError(() =>
    prepareConsumer(inputs('worker', { ...configured, TREASURY_ADDRESS: treasury })),
  );
  expect(missingBoth.code).toBe('CONSUMER_WORKER_KEYS_MISSING');
  expect(missingBoth.message).toMatch(
    /^CONSUMER_WORKER_KEYS_MISSING: .* needs TREASURY_PRIVATE_KEY and RELAYER_PRIVATE_KEY/,
  );
  const noRelayer = startupError(() =>
    prepareConsumer(inputs('all', { ...configured, TREASURY_PRIVATE_KEY: treasuryKey })),
  );
  expect(noRelayer.message).toMatch(/needs RELAYER_PRIVATE_KEY:/);
});

test('a merchant without a treasury stops the start: CONSUMER_TREASURY_MISSING', () => {
  for (const role of ['all', 'worker', 'intent'] as const) {
    const error = startupError(() => prepareConsumer(inputs(role, configured)));
    expect(error.code).toBe('CONSUMER_TREASURY_MISSING');
    expect(error.message).toMatch(/set TREASURY_ADDRESS/);
  }
});

test('no merchant, or the gateway role: no rails, nothing required', () => {
  const { PROVIDER_DOMAINS_URL: _merchant, ...noMerchant } = configured;
  const without = inputs('worker', noMerchant);
  expect(prepareConsumer(without)).toEqual({ rails: undefined, execution: undefined });
  expect(without.lines).toEqual([
    'consumer        purchases unavailable: no merchant (PROVIDER_DOMAINS_URL unset)',
  ]);
  expect(prepareConsumer(inputs('gateway', configured))).toEqual({
    rails: undefined,
    execution: undefined,
  });
});

test("on the devnet, the worker role runs the worker with the devnet's treasury and the relayer of its DEVNET_RELAYER_SLOT", () => {
  const keys = generateKeyStore();
  const chain = (chainId: number, symbol: string): DevnetChainInfo => ({
    caip2: `eip155:${chainId}`,
    chainId,
    rpcUrl: `http://127.0.0.1:${chainId}`,
    token: { address: fundingToken, name: symbol, symbol, version: '1', decimals: 6 },
  });
  const devnet: DevnetInfo = {
    chains: { funding: chain(196, 'USDT0'), settlement: chain(8453, 'USDC') },
    contracts: { policyRegistry: null, receiptAnchor: null },
    addresses: keyStoreAddresses(keys),
    startedAt: new Date(0).toISOString(),
    stoppedAt: null,
    pids: { owner: 1, funding: 2, settlement: 3 },
  };
  const env = { PROVIDER_DOMAINS_URL: 'http://127.0.0.1:4999' };
  const onDevnet = (role: Role, slot?: string) => ({
    ...inputs(role, slot === undefined ? env : { ...env, DEVNET_RELAYER_SLOT: slot }),
    devnet,
    devnetKeys: keys,
  });
  const worker = prepareConsumer(onDevnet('worker', '3')).execution;
  expect(worker?.treasuryKey).toBe(keys.treasury);
  expect(worker?.relayerKey).toBe(keys.fleetRelayer3);
  // The all-in-one process keeps the devnet's own relayer (slot 0, the default).
  expect(prepareConsumer(onDevnet('all')).execution?.relayerKey).toBe(keys.relayer);
});
