// Configuration as a specification: defaults, strict parsing, production requirements, refusal of
// published development keys in every environment, redaction, admin token checks and the local
// secrets that development generates once into DATA_DIR.
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { adminTokenMatches, ConfigError, loadConfig, prepareLocalSecrets } from '.';
import { projectRoot } from '../paths';

/** anvil's account 0: the best-known private key in the world. */
const ANVIL_KEY_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const ANVIL_ADDRESS_0 = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');
const randomAddress = (): string => `0x${hex(20)}`;

function productionEnv(): NodeJS.ProcessEnv {
  return {
    NODE_ENV: 'production',
    PUBLIC_URL: 'https://spend.example.com',
    DATABASE_URL: 'postgres://app:db-password-123@db.example.com:5432/spend',
    FUNDING_RPC_URL: 'https://rpc.xlayer.example.com/v1/rpc-api-key-123',
    SETTLEMENT_RPC_URL: 'https://base.example.com/v2/other-api-key-456',
    FUNDING_TOKEN_ADDRESS: randomAddress(),
    SETTLEMENT_TOKEN_ADDRESS: randomAddress(),
    TREASURY_PRIVATE_KEY: generatePrivateKey(),
    RELAYER_PRIVATE_KEY: generatePrivateKey(),
    FEE_RECEIVER_ADDRESS: privateKeyToAccount(generatePrivateKey()).address,
    ADMIN_TOKEN_HASHES: `${sha256Hex('admin token one')},${sha256Hex('admin token two')}`,
    SESSION_SECRET: hex(32),
    INTERNAL_ACTOR_SECRET: hex(32),
  };
}

/** Both RPC URLs and token addresses: the configured chains, not the devnet. */
function realNetworks(): NodeJS.ProcessEnv {
  return {
    FUNDING_RPC_URL: 'http://127.0.0.1:8545',
    SETTLEMENT_RPC_URL: 'http://127.0.0.1:8546',
    FUNDING_TOKEN_ADDRESS: randomAddress(),
    SETTLEMENT_TOKEN_ADDRESS: randomAddress(),
  };
}

/** The ConfigError thrown for `env`; fails the test when the configuration loads. */
function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('defaults', () => {
  test('an empty environment is the embedded development setup', () => {
    const config = loadConfig({});
    expect(config.nodeEnv).toBe('development');
    expect(config.isProduction).toBe(false);
    expect(config.port).toBe(4000);
    expect(config.host).toBe('127.0.0.1');
    expect(config.publicUrl).toBe('http://127.0.0.1:4000');
    expect(config.dataDir).toBe(path.join(projectRoot(), '.data'));
    expect(config.logLevel).toBe('info');
    expect(config.databaseUrl).toBeNull();
    expect(config.decisionThread).toBe(false);
    expect(config.devnet).toBe(true);
    expect(config.funding).toEqual({
      chainId: 196,
      rpcUrl: null,
      tokenAddress: null,
      tokenName: 'USD₮0',
      tokenVersion: '1',
      tokenSymbol: 'USDT0',
      tokenDecimals: 6,
    });
    expect(config.settlement).toEqual({
      chainId: 8453,
      rpcUrl: null,
      tokenAddress: null,
      tokenName: 'USD Coin',
      tokenVersion: '2',
      tokenSymbol: 'USDC',
      tokenDecimals: 6,
    });
    expect(config.feeReceiverAddress).toBeNull();
    expect(config.treasuryAddress).toBeNull();
    expect(config.secrets.adminTokenHashes).toEqual([]);
    expect(config.secrets.sessionSecret).toBeNull();
    expect(config.subgraphUrls).toEqual({
      catalog: null,
      ledger: null,
      policy: null,
      intent: null,
      builder: null,
    });
    expect(config.subgraphPortBase).toBe(4101);
    expect(config.graphql).toEqual({
      maxDepth: 10,
      maxCost: 5000,
      maxTokens: 1000,
      maxFields: 1000,
      maxAliases: 30,
      maxRootFields: 10,
      introspection: true,
    });
    expect(config.http).toEqual({
      bodyLimitBytes: 65536,
      consumerAuthRequired: true,
      trustProxy: false,
      drainDelayMs: 0,
    });
    expect(config.rateLimit).toEqual({
      store: 'postgres',
      ip: { perMinute: 600, burst: 120 },
      challenge: { perMinute: 600, burst: 60 },
      principal: { perMinute: 600, burst: 120 },
      payer: { perMinute: 600, burst: 60 },
      paidIp: { perMinute: 6000, burst: 600 },
      signIn: { perMinute: 10, burst: 10 },
      outbound: { perMinute: 10, burst: 5 },
    });
    expect(config.identity.serviceName).toBe('Agent Spend-Control Service');
    expect(config.identity.docsBaseUrl).toBe('http://127.0.0.1:4000/docs');
  });

  test('DECISION_THREAD=true decides preflights on a thread of their own; a non-boolean is a problem', () => {
    expect(loadConfig({ DECISION_THREAD: 'true' }).decisionThread).toBe(true);
    expect(configError({ DECISION_THREAD: 'sometimes' }).problems).toEqual([
      expect.stringMatching(/^DECISION_THREAD: /),
    ]);
  });

  test('DEVNET_RELAYER_SLOT picks the devnet relayer (0 by default, 1–4 the fleet keys); anything else is a problem', () => {
    expect(loadConfig({}).devnetRelayerSlot).toBe(0);
    expect(loadConfig({ DEVNET_RELAYER_SLOT: '4' }).devnetRelayerSlot).toBe(4);
    for (const value of ['5', '-1', '1.5', 'two'])
      expect(configError({ DEVNET_RELAYER_SLOT: value }).problems).toEqual([
        expect.stringMatching(/^DEVNET_RELAYER_SLOT: /),
      ]);
    const onRealNetworks = {
      FUNDING_RPC_URL: 'http://127.0.0.1:8545',
      SETTLEMENT_RPC_URL: 'http://127.0.0.1:8546',
      FUNDING_TOKEN_ADDRESS: '0x1111111111111111111111111111111111111111',
      SETTLEMENT_TOKEN_ADDRESS: '0x2222222222222222222222222222222222222222',
    };
    expect(configError({ ...onRealNetworks, DEVNET_RELAYER_SLOT: '1' }).problems).toEqual([
      'DEVNET_RELAYER_SLOT: is set with the RPC URLs; on real networks each process sends from RELAYER_PRIVATE_KEY',
    ]);
  });

  test('PORT and PUBLIC_URL flow into the derived URLs; blank values mean unset', () => {
    expect(loadConfig({ PORT: '5050' }).publicUrl).toBe('http://127.0.0.1:5050');
    const config = loadConfig({
      PUBLIC_URL: 'https://spend.example.com/',
      HOST: '  ',
      LOG_LEVEL: '',
    });
    expect(config.publicUrl).toBe('https://spend.example.com');
    expect(config.identity.docsBaseUrl).toBe('https://spend.example.com/docs');
    expect(config.host).toBe('127.0.0.1');
    expect(config.logLevel).toBe('info');
  });

  test('the configuration is frozen', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.graphql)).toBe(true);
  });
});

describe('parsing', () => {
  test.each(['12abc', '1e3', '0x10', '-1', '1.5', '70000', '0'])(
    'PORT=%s is refused, naming PORT',
    (value) => {
      expect(configError({ PORT: value }).problems).toEqual([expect.stringMatching(/^PORT: /)]);
    },
  );

  test('every problem is reported at once', () => {
    const error = configError({
      PORT: 'x',
      GRAPHQL_MAX_DEPTH: '5levels',
      NODE_ENV: 'staging',
      PUBLIC_URL: 'not a url',
    });
    expect(error.problems.map((problem) => problem.split(':')[0]).sort()).toEqual([
      'GRAPHQL_MAX_DEPTH',
      'NODE_ENV',
      'PORT',
      'PUBLIC_URL',
    ]);
    expect(error.message).toContain('PORT');
    expect(error.message).toContain('GRAPHQL_MAX_DEPTH');
  });

  test('URLs are parsed and their scheme checked', () => {
    expect(configError({ DATABASE_URL: 'mysql://db/x' }).problems).toEqual([
      expect.stringMatching(/^DATABASE_URL: must use postgres:/),
    ]);
    expect(configError({ SUBGRAPH_URL_LEDGER: 'ledger:4103' }).problems).toEqual([
      expect.stringMatching(/^SUBGRAPH_URL_LEDGER: /),
    ]);
    expect(
      loadConfig({ SUBGRAPH_URL_LEDGER: 'http://ledger:4103/graphql' }).subgraphUrls.ledger,
    ).toBe('http://ledger:4103/graphql');
  });

  test('addresses are 0x + 40 hex, and a mixed-case address must carry a correct checksum', () => {
    const rpc = {
      FUNDING_RPC_URL: 'http://127.0.0.1:8545',
      SETTLEMENT_RPC_URL: 'http://127.0.0.1:8546',
      SETTLEMENT_TOKEN_ADDRESS: randomAddress(),
    };
    const checksummed = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
    expect(configError({ ...rpc, FUNDING_TOKEN_ADDRESS: '0x1234' }).problems).toEqual([
      expect.stringMatching(/^FUNDING_TOKEN_ADDRESS: must be 0x/),
    ]);
    expect(
      configError({ ...rpc, FUNDING_TOKEN_ADDRESS: checksummed.replace('fCD6', 'fcD6') }).problems,
    ).toEqual([expect.stringMatching(/^FUNDING_TOKEN_ADDRESS: has a wrong EIP-55 checksum/)]);
    expect(
      loadConfig({ ...rpc, FUNDING_TOKEN_ADDRESS: checksummed.toLowerCase() }).funding.tokenAddress,
    ).toBe(checksummed);
  });

  test('RPC URLs come both or neither; with them, token addresses are needed', () => {
    expect(configError({ FUNDING_RPC_URL: 'http://127.0.0.1:8545' }).problems).toContainEqual(
      expect.stringMatching(/^SETTLEMENT_RPC_URL: set both/),
    );
    expect(configError({ FUNDING_TOKEN_ADDRESS: randomAddress() }).problems).toEqual([
      expect.stringMatching(/^FUNDING_TOKEN_ADDRESS: is set without the RPC URLs/),
    ]);
    const config = loadConfig({
      FUNDING_RPC_URL: 'http://127.0.0.1:8545',
      SETTLEMENT_RPC_URL: 'ws://127.0.0.1:8546',
      FUNDING_TOKEN_ADDRESS: randomAddress(),
      SETTLEMENT_TOKEN_ADDRESS: randomAddress(),
    });
    expect(config.devnet).toBe(false);
    expect(config.settlement.rpcUrl).toBe('ws://127.0.0.1:8546');
  });

  test("the tokens' ledger symbol and decimals: defaults, overrides, and refusals", () => {
    const rpc = realNetworks();
    const config = loadConfig({
      ...rpc,
      SETTLEMENT_TOKEN_SYMBOL: 'USDbC',
      SETTLEMENT_TOKEN_DECIMALS: '18',
    });
    expect(config.funding).toMatchObject({ tokenSymbol: 'USDT0', tokenDecimals: 6 });
    expect(config.settlement).toMatchObject({ tokenSymbol: 'USDbC', tokenDecimals: 18 });
    expect(
      configError({ ...rpc, FUNDING_TOKEN_SYMBOL: 'USD T0', SETTLEMENT_TOKEN_DECIMALS: '37' })
        .problems,
    ).toEqual([
      expect.stringMatching(/^FUNDING_TOKEN_SYMBOL: must not contain whitespace/),
      expect.stringMatching(/^SETTLEMENT_TOKEN_DECIMALS: "37" is outside 0\.\.36/),
    ]);
  });

  test("TREASURY_ADDRESS, or TREASURY_PRIVATE_KEY's address; the two must agree, and the devnet has its own", () => {
    const rpc = realNetworks();
    const key = generatePrivateKey();
    const address = privateKeyToAccount(key).address;
    expect(loadConfig({ ...rpc, TREASURY_PRIVATE_KEY: key }).treasuryAddress).toBe(address);
    expect(loadConfig({ ...rpc, TREASURY_ADDRESS: address.toLowerCase() }).treasuryAddress).toBe(
      address,
    );
    expect(
      loadConfig({ ...rpc, TREASURY_ADDRESS: address, TREASURY_PRIVATE_KEY: key }).treasuryAddress,
    ).toBe(address);
    expect(
      configError({
        ...rpc,
        TREASURY_ADDRESS: privateKeyToAccount(generatePrivateKey()).address,
        TREASURY_PRIVATE_KEY: key,
      }).problems,
    ).toEqual([
      expect.stringMatching(/^TREASURY_ADDRESS: is not the address of TREASURY_PRIVATE_KEY/),
    ]);
    expect(configError({ TREASURY_ADDRESS: address }).problems).toEqual([
      expect.stringMatching(/^TREASURY_ADDRESS: is set without the RPC URLs/),
    ]);
    expect(configError({ ...rpc, TREASURY_ADDRESS: ANVIL_ADDRESS_0 }).problems).toEqual([
      expect.stringMatching(/^TREASURY_ADDRESS: belongs to a published development key/),
    ]);
  });

  test('POLICY_REGISTRY_ADDRESS is optional on real networks and refused beside the devnet', () => {
    expect(loadConfig({}).policyRegistryAddress).toBeNull();
    expect(configError({ POLICY_REGISTRY_ADDRESS: randomAddress() }).problems).toEqual([
      expect.stringMatching(/^POLICY_REGISTRY_ADDRESS: is set without the RPC URLs/),
    ]);
    const registry = randomAddress();
    const networks = {
      FUNDING_RPC_URL: 'http://127.0.0.1:8545',
      SETTLEMENT_RPC_URL: 'http://127.0.0.1:8546',
      FUNDING_TOKEN_ADDRESS: randomAddress(),
      SETTLEMENT_TOKEN_ADDRESS: randomAddress(),
    };
    expect(loadConfig(networks).policyRegistryAddress).toBeNull();
    expect(
      loadConfig({
        ...networks,
        POLICY_REGISTRY_ADDRESS: registry,
      }).policyRegistryAddress?.toLowerCase(),
    ).toBe(registry);
    expect(configError({ ...networks, POLICY_REGISTRY_ADDRESS: '0x12' }).problems).toEqual([
      expect.stringMatching(/^POLICY_REGISTRY_ADDRESS: must be 0x followed by 40 hex/),
    ]);
  });

  test('secrets are hex of at least 32 bytes; admin token hashes are 64 hex each', () => {
    expect(configError({ SESSION_SECRET: hex(31) }).problems).toEqual([
      expect.stringMatching(/^SESSION_SECRET: must be at least 32 bytes/),
    ]);
    expect(
      configError({ INTERNAL_ACTOR_SECRET: Buffer.from(hex(32)).toString('base64') }).problems,
    ).toEqual([expect.stringMatching(/^INTERNAL_ACTOR_SECRET: must be hex/)]);
    expect(configError({ ADMIN_TOKEN_HASHES: `${sha256Hex('a')},abc` }).problems).toEqual([
      expect.stringMatching(/^ADMIN_TOKEN_HASHES: entry 2 /),
    ]);
    const config = loadConfig({ ADMIN_TOKEN_HASHES: ` ${sha256Hex('a')} , ${sha256Hex('b')} ` });
    expect(config.secrets.adminTokenHashes.map((hash) => hash.toString('hex'))).toEqual([
      sha256Hex('a'),
      sha256Hex('b'),
    ]);
  });

  test('rate limits: a store name, and whole numbers 1..1,000,000 per bucket', () => {
    const config = loadConfig({
      RATE_LIMIT_STORE: 'memory',
      RATE_LIMIT_IP_PER_MINUTE: '120',
      RATE_LIMIT_SIGN_IN_BURST: '3',
    });
    expect(config.rateLimit.store).toBe('memory');
    expect(config.rateLimit.ip).toEqual({ perMinute: 120, burst: 120 });
    expect(config.rateLimit.signIn).toEqual({ perMinute: 10, burst: 3 });
    const error = configError({
      RATE_LIMIT_STORE: 'redis',
      RATE_LIMIT_PAYER_PER_MINUTE: '0',
      RATE_LIMIT_OUTBOUND_BURST: '2000000',
      RATE_LIMIT_PAID_IP_BURST: '1.5',
    });
    expect(error.problems.map((problem) => problem.split(':')[0]).sort()).toEqual([
      'RATE_LIMIT_OUTBOUND_BURST',
      'RATE_LIMIT_PAID_IP_BURST',
      'RATE_LIMIT_PAYER_PER_MINUTE',
      'RATE_LIMIT_STORE',
    ]);
  });

  test('TRUST_PROXY names the proxies or a hop count; trusting everyone is refused', () => {
    expect(loadConfig({ TRUST_PROXY: '2' }).http.trustProxy).toBe(2);
    expect(
      loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8, fd00::/8, 192.0.2.10' }).http.trustProxy,
    ).toEqual(['loopback', '10.0.0.0/8', 'fd00::/8', '192.0.2.10']);
    for (const value of ['true', '*', '10.0.0.0/33', 'proxy.example.com', '0', '11']) {
      expect(configError({ TRUST_PROXY: value }).problems).toEqual([
        expect.stringMatching(/^TRUST_PROXY: /),
      ]);
    }
  });

  test('group settlement: the overlap after a hand-over defaults to 50 ms and is bounded', () => {
    expect(loadConfig({}).x402.group).toMatchObject({
      maxSize: 64,
      maxWaitMs: 2,
      overlapAfterMs: 50,
    });
    expect(loadConfig({ X402_GROUP_OVERLAP_MS: '0' }).x402.group.overlapAfterMs).toBe(0);
    for (const value of ['-1', '60001', '5.5'])
      expect(configError({ X402_GROUP_OVERLAP_MS: value }).problems).toEqual([
        expect.stringMatching(/^X402_GROUP_OVERLAP_MS: /),
      ]);
  });

  test('SUBGRAPH_PORT_BASE 0 lets the system pick every subgraph port, so nothing can collide', () => {
    const config = loadConfig({ SUBGRAPH_PORT_BASE: '0', PORT: '3', METRICS_PORT: '0' });
    expect(config.subgraphPortBase).toBe(0);
    expect(config.port).toBe(3);
  });

  test('the subgraph ports must not collide with the gateway port', () => {
    expect(configError({ PORT: '4103' }).problems).toEqual([
      expect.stringMatching(/^PORT: 4103 collides with the subgraph ports 4101\.\.4105/),
    ]);
  });
});

describe('production', () => {
  test('a complete production environment loads, with introspection forced off', () => {
    const config = loadConfig({ ...productionEnv(), GRAPHQL_INTROSPECTION: '1' });
    expect(config.isProduction).toBe(true);
    expect(config.devnet).toBe(false);
    expect(config.graphql.introspection).toBe(false);
    expect(config.secrets.adminTokenHashes).toHaveLength(2);
  });

  test.each([
    'DATABASE_URL',
    'FUNDING_RPC_URL',
    'SETTLEMENT_RPC_URL',
    'FUNDING_TOKEN_ADDRESS',
    'SETTLEMENT_TOKEN_ADDRESS',
    'TREASURY_PRIVATE_KEY',
    'RELAYER_PRIVATE_KEY',
    'FEE_RECEIVER_ADDRESS',
    'ADMIN_TOKEN_HASHES',
    'SESSION_SECRET',
    'INTERNAL_ACTOR_SECRET',
    'PUBLIC_URL',
  ])('without %s it refuses to start, naming the variable', (name) => {
    const env = productionEnv();
    delete env[name];
    const error = configError(env);
    expect(error.problems).toContainEqual(expect.stringMatching(new RegExp(`^${name}: `)));
    expect(error.problems).toHaveLength(1);
  });

  test('an empty production environment lists every requirement', () => {
    const names = configError({ NODE_ENV: 'production' }).problems.map(
      (problem) => problem.split(':')[0],
    );
    expect(names.sort()).toEqual(
      [
        'PUBLIC_URL',
        'DATABASE_URL',
        'FUNDING_RPC_URL',
        'SETTLEMENT_RPC_URL',
        'FUNDING_TOKEN_ADDRESS',
        'SETTLEMENT_TOKEN_ADDRESS',
        'TREASURY_PRIVATE_KEY',
        'RELAYER_PRIVATE_KEY',
        'FEE_RECEIVER_ADDRESS',
        'ADMIN_TOKEN_HASHES',
        'SESSION_SECRET',
        'INTERNAL_ACTOR_SECRET',
      ].sort(),
    );
  });

  test('MIGRATION_DATABASE_URL must log in as another role than DATABASE_URL, and its password is redacted', () => {
    expect(
      configError({
        ...productionEnv(),
        MIGRATION_DATABASE_URL: 'postgres://app:other@db.example.com:5432/spend',
      }).problems,
    ).toEqual([
      expect.stringMatching(/^MIGRATION_DATABASE_URL: logs in as the same role as DATABASE_URL/),
    ]);
    const config = loadConfig({
      ...productionEnv(),
      MIGRATION_DATABASE_URL: 'postgres://owner:owner-password-789@db.example.com:5432/spend',
    });
    expect(config.migrationDatabaseUrl).toBe(
      'postgres://owner:owner-password-789@db.example.com:5432/spend',
    );
    expect(JSON.stringify(config)).not.toContain('owner-password-789');
    expect(inspect(config, { depth: null })).not.toContain('owner-password-789');
  });

  test('consumer authentication cannot be switched off in production', () => {
    expect(configError({ ...productionEnv(), CONSUMER_AUTH_REQUIRED: '0' }).problems).toEqual([
      expect.stringMatching(/^CONSUMER_AUTH_REQUIRED: /),
    ]);
    expect(loadConfig({ CONSUMER_AUTH_REQUIRED: '0' }).http.consumerAuthRequired).toBe(false);
  });
});

describe('published development keys', () => {
  const spellings = [
    ANVIL_KEY_0,
    ANVIL_KEY_0.slice(2),
    ANVIL_KEY_0.toUpperCase().replace('0X', '0x'),
  ];

  test.each(['development', 'test', 'production'])(
    'TREASURY_PRIVATE_KEY = anvil key 0 is refused in %s, named, without the key',
    (nodeEnv) => {
      for (const key of spellings) {
        const env = nodeEnv === 'production' ? productionEnv() : { NODE_ENV: nodeEnv };
        const error = configError({ ...env, TREASURY_PRIVATE_KEY: key });
        expect(error.problems).toEqual([
          expect.stringMatching(/^TREASURY_PRIVATE_KEY: is a published development key/),
        ]);
        expect(error.message.toLowerCase()).not.toContain(ANVIL_KEY_0.slice(2, 20));
        expect(inspect(error).toLowerCase()).not.toContain(ANVIL_KEY_0.slice(2, 20));
      }
    },
  );

  test('RELAYER_PRIVATE_KEY and FEE_RECEIVER_ADDRESS are checked too', () => {
    const error = configError({
      RELAYER_PRIVATE_KEY: ANVIL_KEY_0,
      FEE_RECEIVER_ADDRESS: ANVIL_ADDRESS_0,
    });
    expect(error.problems.map((problem) => problem.split(':')[0]).sort()).toEqual([
      'FEE_RECEIVER_ADDRESS',
      'RELAYER_PRIVATE_KEY',
    ]);
  });

  test('DEV_KEY_DENYLIST adds keys and addresses to the refusal', () => {
    const key = generatePrivateKey();
    const address = privateKeyToAccount(key).address;
    const byKey = configError({
      DEV_KEY_DENYLIST: `${randomAddress()},${key.slice(2)}`,
      TREASURY_PRIVATE_KEY: key,
    });
    expect(byKey.problems).toEqual([
      expect.stringMatching(/^TREASURY_PRIVATE_KEY: is listed in DEV_KEY_DENYLIST/),
    ]);
    expect(byKey.message).not.toContain(key.slice(2, 20));
    const byAddress = configError({
      DEV_KEY_DENYLIST: address,
      RELAYER_PRIVATE_KEY: key,
      FEE_RECEIVER_ADDRESS: address,
    });
    expect(byAddress.problems.map((problem) => problem.split(':')[0]).sort()).toEqual([
      'FEE_RECEIVER_ADDRESS',
      'RELAYER_PRIVATE_KEY',
    ]);
    expect(configError({ DEV_KEY_DENYLIST: 'not-a-key' }).problems).toEqual([
      expect.stringMatching(/^DEV_KEY_DENYLIST: entry 1 /),
    ]);
  });

  test('a malformed key is refused without echoing it', () => {
    const almostKey = `0x${hex(31)}`;
    const error = configError({ TREASURY_PRIVATE_KEY: almostKey });
    expect(error.problems).toEqual([
      expect.stringMatching(/^TREASURY_PRIVATE_KEY: must be 32 bytes/),
    ]);
    expect(error.message).not.toContain(almostKey.slice(2, 20));
  });
});

describe('redaction', () => {
  test('JSON and inspect never show keys, secrets, token hashes or credentials', () => {
    const env = productionEnv();
    const config = loadConfig(env);
    const secretsInEnv = [
      env.TREASURY_PRIVATE_KEY!.slice(2),
      env.RELAYER_PRIVATE_KEY!.slice(2),
      env.SESSION_SECRET!,
      env.INTERNAL_ACTOR_SECRET!,
      ...env.ADMIN_TOKEN_HASHES!.split(','),
      'db-password-123',
      'rpc-api-key-123',
      'other-api-key-456',
    ];
    const renderings = [
      JSON.stringify(config),
      JSON.stringify({ config }),
      inspect(config, { depth: null }),
      inspect({ nested: config }, { depth: null }),
      JSON.stringify(config.secrets),
      inspect(config.secrets, { depth: null }),
    ];
    for (const rendering of renderings) {
      for (const secret of secretsInEnv) expect(rendering).not.toContain(secret);
      expect(rendering).toContain('[redacted]');
    }
    const json = JSON.parse(JSON.stringify(config)) as Record<string, unknown>;
    expect(json.databaseUrl).toBe('postgres://app:%5Bredacted%5D@db.example.com:5432/spend');
    expect(json.port).toBe(4000);
    // The values themselves stay usable by the code that needs them.
    expect(config.secrets.treasuryPrivateKey).toBe(env.TREASURY_PRIVATE_KEY);
    expect(config.secrets.sessionSecret!.toString('hex')).toBe(env.SESSION_SECRET);
  });
});

describe('subscription limits', () => {
  test('default to 5 sockets per session, 20 subscriptions per socket, 1 MiB of send queue, 2 reads at once and 500 waiting', () => {
    expect(loadConfig({}).subscriptions).toEqual({
      maxSocketsPerSession: 5,
      maxSubscriptionsPerSocket: 20,
      maxBufferedBytes: 1_048_576,
      readConcurrency: 2,
      readQueueLength: 500,
    });
  });

  test('are read from the environment and bounded', () => {
    const config = loadConfig({
      SUBSCRIPTION_MAX_SOCKETS_PER_SESSION: '2',
      SUBSCRIPTION_MAX_PER_SOCKET: '3',
      SUBSCRIPTION_READ_QUEUE: '9',
    });
    expect(config.subscriptions).toMatchObject({
      maxSocketsPerSession: 2,
      maxSubscriptionsPerSocket: 3,
      readQueueLength: 9,
    });
    expect(
      configError({ SUBSCRIPTION_MAX_BUFFERED_BYTES: '1024', SUBSCRIPTION_READ_CONCURRENCY: '0' })
        .problems,
    ).toEqual([
      expect.stringMatching(
        /^SUBSCRIPTION_MAX_BUFFERED_BYTES: "1024" is outside 16384\.\.67108864/,
      ),
      expect.stringMatching(/^SUBSCRIPTION_READ_CONCURRENCY: "0" is outside 1\.\.32/),
    ]);
  });
});

describe('adminTokenMatches', () => {
  const hashes = [
    createHash('sha256').update('first token').digest(),
    createHash('sha256').update('second token').digest(),
  ];

  test('accepts a token whose sha256 is listed, and only such a token', () => {
    expect(adminTokenMatches('first token', hashes)).toBe(true);
    expect(adminTokenMatches('second token', hashes)).toBe(true);
    expect(adminTokenMatches('third token', hashes)).toBe(false);
    expect(adminTokenMatches('', hashes)).toBe(false);
    expect(adminTokenMatches('first token', [])).toBe(false);
  });

  test('a malformed hash in the list neither matches nor throws', () => {
    expect(adminTokenMatches('first token', [Buffer.alloc(3), hashes[0]])).toBe(true);
    expect(adminTokenMatches('first token', [Buffer.alloc(3)])).toBe(false);
  });
});

describe('prepareLocalSecrets', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = path.join(mkdtempSync(path.join(os.tmpdir(), 'config-')), 'data');
  });
  afterEach(() => {
    rmSync(path.dirname(dataDir), { recursive: true, force: true });
  });
  const modeOf = (file: string): number => statSync(file).mode & 0o777;

  test('generates an admin token and secrets once, mode 0600, and reuses them', async () => {
    const first = await prepareLocalSecrets(loadConfig({ DATA_DIR: dataDir }));
    expect(first.generatedAdminToken).toBe(true);
    expect(first.adminTokenFile).toBe(path.join(dataDir, 'admin-token'));
    expect(modeOf(path.join(dataDir, 'admin-token'))).toBe(0o600);
    expect(modeOf(path.join(dataDir, 'secrets.json'))).toBe(0o600);
    const token = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    expect(adminTokenMatches(token, first.config.secrets.adminTokenHashes)).toBe(true);
    expect(first.config.secrets.sessionSecret).toHaveLength(32);
    expect(first.config.secrets.internalActorSecret).toHaveLength(32);
    expect(
      first.config.secrets.sessionSecret!.equals(first.config.secrets.internalActorSecret!),
    ).toBe(false);
    expect(JSON.stringify(first.config)).not.toContain(
      first.config.secrets.sessionSecret!.toString('hex'),
    );

    const second = await prepareLocalSecrets(loadConfig({ DATA_DIR: dataDir }));
    expect(second.generatedAdminToken).toBe(false);
    expect(second.config.secrets.adminTokenHashes).toEqual(first.config.secrets.adminTokenHashes);
    expect(second.config.secrets.sessionSecret).toEqual(first.config.secrets.sessionSecret);
    expect(second.config.secrets.internalActorSecret).toEqual(
      first.config.secrets.internalActorSecret,
    );
  });

  test('values given in the environment win over generated ones', async () => {
    const session = hex(32);
    const adminHash = sha256Hex('my admin token');
    const { config, adminTokenFile, generatedAdminToken } = await prepareLocalSecrets(
      loadConfig({ DATA_DIR: dataDir, SESSION_SECRET: session, ADMIN_TOKEN_HASHES: adminHash }),
    );
    expect(config.secrets.sessionSecret!.toString('hex')).toBe(session);
    expect(config.secrets.internalActorSecret).toHaveLength(32);
    expect(adminTokenFile).toBeUndefined();
    expect(generatedAdminToken).toBe(false);
    expect(adminTokenMatches('my admin token', config.secrets.adminTokenHashes)).toBe(true);
  });

  test('refuses production, where the values must be explicit', async () => {
    await expect(
      prepareLocalSecrets(loadConfig({ ...productionEnv(), DATA_DIR: dataDir })),
    ).rejects.toThrow(ConfigError);
  });

  test('refuses an admin token file that other users can read', async () => {
    await prepareLocalSecrets(loadConfig({ DATA_DIR: dataDir }));
    chmodSync(path.join(dataDir, 'admin-token'), 0o644);
    await expect(prepareLocalSecrets(loadConfig({ DATA_DIR: dataDir }))).rejects.toThrow(
      /admin-token: is readable by other users/,
    );
  });

  test('refuses a secrets file it cannot use, rather than silently replacing it', async () => {
    await prepareLocalSecrets(loadConfig({ DATA_DIR: dataDir }));
    writeFileSync(path.join(dataDir, 'secrets.json'), '{"sessionSecret": "abcd"}', { mode: 0o600 });
    await expect(prepareLocalSecrets(loadConfig({ DATA_DIR: dataDir }))).rejects.toThrow(
      /secrets\.json: SESSION_SECRET: must be at least 32 bytes/,
    );
  });
});
