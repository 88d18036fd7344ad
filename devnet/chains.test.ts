// The devnet chains as the embedded default and the tests use them: two anvils with the right ids,
// our tokens with the real tokens' EIP-712 names, funded fresh keys, a treasury float, and a
// dataDir that survives restarts (and lost state, and a crashed owner) without losing anything.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { eip3009TokenAbi, policyRegistryAbi, receiptAnchorAbi } from '../contracts/artifacts/abis';
import { type AnvilNode, startAnvil } from '../platform/chain/anvil';
import { createChainPublicClient, createChainWalletClient } from '../platform/chain/clients';
import { KEY_ROLES } from '../platform/chain/keys';
import {
  readTokenBalance,
  readTokenDomain,
  signTransferWithAuthorization,
  submitTransferWithAuthorization,
} from '../platform/chain/tokens';
import {
  DEFAULT_TREASURY_FLOAT_ATOMIC,
  GAS_FUND_WEI,
  DevnetAlreadyRunningError,
  type DevnetChains,
  type DevnetInfo,
  readDevnetFile,
  startDevnetChains,
} from './chains';

const running = new Set<DevnetChains>();
const elsewhere: AnvilNode[] = [];
const tempDirs: string[] = [];

function tempDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devnet-chains-test-'));
  tempDirs.push(dir);
  return dir;
}

async function start(dataDir: string | null): Promise<DevnetChains> {
  const devnet = await startDevnetChains({ dataDir });
  running.add(devnet);
  return devnet;
}

async function stop(devnet: DevnetChains): Promise<void> {
  await devnet.stop();
  running.delete(devnet);
}

function publicClientOf(info: DevnetInfo, role: 'funding' | 'settlement') {
  return createChainPublicClient(info.chains[role], { pollingIntervalMs: 20 });
}

/** Pays 1.5 tokens from the treasury to a fresh address with a relayed EIP-3009 authorization. */
async function payFromTreasury(devnet: DevnetChains, role: 'funding' | 'settlement') {
  const chain = devnet.info.chains[role];
  const publicClient = publicClientOf(devnet.info, role);
  const payee = privateKeyToAccount(generatePrivateKey()).address;
  const now = (await publicClient.getBlock()).timestamp;
  const authorization = await signTransferWithAuthorization({
    publicClient,
    token: chain.token.address,
    signer: devnet.keys.treasury.account,
    to: payee,
    valueAtomic: 1_500_000n,
    validBeforeUnixS: now + 600n,
  });
  await submitTransferWithAuthorization({
    publicClient,
    relayer: createChainWalletClient(chain, devnet.keys.relayer.account, { pollingIntervalMs: 20 }),
    authorization,
  });
  return payee;
}

afterAll(async () => {
  await Promise.all([...running].map((devnet) => devnet.stop()));
  await Promise.all(elsewhere.map((node) => node.stop()));
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('startDevnetChains (ephemeral)', () => {
  let devnet: DevnetChains;

  beforeAll(async () => {
    devnet = await start(null);
  });

  it('runs eip155:196 and eip155:8453 on distinct loopback ports', async () => {
    const { funding, settlement } = devnet.info.chains;
    expect([funding.caip2, funding.chainId, settlement.caip2, settlement.chainId]).toEqual([
      'eip155:196',
      196,
      'eip155:8453',
      8453,
    ]);
    expect(funding.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(settlement.rpcUrl).not.toBe(funding.rpcUrl);
    expect(await publicClientOf(devnet.info, 'funding').getChainId()).toBe(196);
    expect(await publicClientOf(devnet.info, 'settlement').getChainId()).toBe(8453);
  });

  it('deploys USD₮0 (version 1) and USD Coin (version 2) with the domains the tokens report', async () => {
    const { funding, settlement } = devnet.info.chains;
    expect(funding.token).toMatchObject({
      name: 'USD\u20AE0',
      symbol: 'USDT0',
      version: '1',
      decimals: 6,
    });
    expect(settlement.token).toMatchObject({
      name: 'USD Coin',
      symbol: 'USDC',
      version: '2',
      decimals: 6,
    });
    expect(
      await readTokenDomain(publicClientOf(devnet.info, 'funding'), funding.token.address),
    ).toEqual({
      name: 'USD\u20AE0',
      version: '1',
      chainId: 196,
      verifyingContract: funding.token.address,
    });
    expect(
      await readTokenDomain(publicClientOf(devnet.info, 'settlement'), settlement.token.address),
    ).toEqual({
      name: 'USD Coin',
      version: '2',
      chainId: 8453,
      verifyingContract: settlement.token.address,
    });
  });

  it('gives every key gas and the treasury its float on both chains', async () => {
    for (const role of ['funding', 'settlement'] as const) {
      const publicClient = publicClientOf(devnet.info, role);
      for (const keyRole of KEY_ROLES) {
        expect(
          await publicClient.getBalance({ address: devnet.keys[keyRole].address }),
        ).toBeGreaterThan(0n);
      }
      expect(
        await readTokenBalance(
          publicClient,
          devnet.info.chains[role].token.address,
          devnet.keys.treasury.address,
        ),
      ).toBe(DEFAULT_TREASURY_FLOAT_ATOMIC);
    }
  });

  it('deploys the PolicyRegistry on the funding chain only, and records it in the devnet info', async () => {
    const registry = devnet.info.contracts.policyRegistry;
    expect(registry).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(await publicClientOf(devnet.info, 'funding').getCode({ address: registry! })).not.toBe(
      undefined,
    );
    const policyId = await publicClientOf(devnet.info, 'funding').readContract({
      address: registry!,
      abi: policyRegistryAbi,
      functionName: 'policyIdOf',
      args: [devnet.keys.deployer.address, 1n],
    });
    expect(policyId).toBeGreaterThan(0n);
    expect(
      await publicClientOf(devnet.info, 'settlement').getCode({ address: registry! }),
    ).toBeUndefined();
  });

  it('lets the treasury pay through the relayer with its keys', async () => {
    const payee = await payFromTreasury(devnet, 'settlement');
    const publicClient = publicClientOf(devnet.info, 'settlement');
    expect(
      await readTokenBalance(publicClient, devnet.info.chains.settlement.token.address, payee),
    ).toBe(1_500_000n);
  });

  it('describes itself with addresses only, never a private key', () => {
    const rendered = JSON.stringify(devnet.info);
    for (const role of KEY_ROLES) {
      expect(devnet.info.addresses[role]).toBe(devnet.keys[role].address);
      expect(rendered).not.toContain(devnet.keys[role].exportPrivateKey().slice(2));
    }
    expect(JSON.stringify(devnet.keys)).not.toMatch(/[0-9a-f]{64}/);
  });
});

describe('startDevnetChains (with a dataDir)', () => {
  it('keeps keys, contracts and balances across a restart, with keys.json at 0600 and no keys in devnet.json', async () => {
    const dataDir = tempDataDir();
    const first = await start(dataDir);
    expect(fs.statSync(path.join(dataDir, 'keys.json')).mode & 0o777).toBe(0o600);
    const written = readDevnetFile(dataDir);
    expect(written).toEqual(first.info);
    const devnetJson = fs.readFileSync(path.join(dataDir, 'devnet.json'), 'utf8');
    for (const role of KEY_ROLES)
      expect(devnetJson).not.toContain(first.keys[role].exportPrivateKey().slice(2));

    const payee = await payFromTreasury(first, 'funding');
    const fundingToken = first.info.chains.funding.token.address;
    const treasuryBefore = await readTokenBalance(
      publicClientOf(first.info, 'funding'),
      fundingToken,
      first.keys.treasury.address,
    );
    const deployerNonceBefore = await publicClientOf(first.info, 'funding').getTransactionCount({
      address: first.keys.deployer.address,
    });
    await stop(first);
    expect(readDevnetFile(dataDir).stoppedAt).not.toBeNull();
    expect(fs.existsSync(path.join(dataDir, 'anvil-196.json'))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'anvil-8453.json'))).toBe(true);

    const second = await start(dataDir);
    expect(second.info.addresses).toEqual(first.info.addresses);
    expect(second.info.contracts).toEqual(first.info.contracts);
    expect(second.info.chains.funding.token).toEqual(first.info.chains.funding.token);
    expect(second.info.chains.settlement.token).toEqual(first.info.chains.settlement.token);
    const publicClient = publicClientOf(second.info, 'funding');
    expect(await readTokenBalance(publicClient, fundingToken, payee)).toBe(1_500_000n);
    expect(await readTokenBalance(publicClient, fundingToken, second.keys.treasury.address)).toBe(
      treasuryBefore,
    );
    expect(await publicClient.getTransactionCount({ address: second.keys.deployer.address })).toBe(
      deployerNonceBefore,
    );
    await stop(second);
  });

  it('reads a devnet.json written before the registry existed, and deploys the registry on the next start', async () => {
    const dataDir = tempDataDir();
    const first = await start(dataDir);
    await stop(first);
    const { contracts: _contracts, ...legacy } = readDevnetFile(dataDir);
    fs.writeFileSync(path.join(dataDir, 'devnet.json'), JSON.stringify(legacy));
    expect(readDevnetFile(dataDir).contracts).toEqual({
      policyRegistry: null,
      receiptAnchor: null,
    });

    const second = await start(dataDir);
    expect(second.info.contracts.policyRegistry).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(second.info.contracts.receiptAnchor).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(second.info.chains.funding.token).toEqual(first.info.chains.funding.token);
    await stop(second);
  });

  it('a devnet and keys.json from before anchoring: same tokens, a fresh anchorWriter, a ReceiptAnchor it writes to', async () => {
    const dataDir = tempDataDir();
    const first = await start(dataDir);
    await stop(first);
    const keysPath = path.join(dataDir, 'keys.json');
    const { anchorWriter: _key, ...olderKeys } = JSON.parse(fs.readFileSync(keysPath, 'utf8'));
    fs.writeFileSync(keysPath, JSON.stringify(olderKeys), { mode: 0o600 });
    const recorded = readDevnetFile(dataDir);
    const { anchorWriter: _address, ...olderAddresses } = recorded.addresses;
    const { receiptAnchor: _anchor, ...olderContracts } = recorded.contracts;
    fs.writeFileSync(
      path.join(dataDir, 'devnet.json'),
      JSON.stringify({ ...recorded, addresses: olderAddresses, contracts: olderContracts }),
    );

    const second = await start(dataDir);
    expect(second.info.chains.funding.token).toEqual(first.info.chains.funding.token);
    expect(second.info.contracts.policyRegistry).toBe(first.info.contracts.policyRegistry);
    const writer = second.keys.anchorWriter.address;
    expect(writer).not.toBe(first.keys.anchorWriter.address);
    expect(second.info.addresses.anchorWriter).toBe(writer);
    const client = createChainPublicClient(second.info.chains.funding);
    expect(
      await client.readContract({
        address: second.info.contracts.receiptAnchor!,
        abi: receiptAnchorAbi,
        functionName: 'isWriter',
        args: [writer],
      }),
    ).toBe(true);
    expect(await client.getBalance({ address: writer })).toBeGreaterThan(0n);
    await stop(second);
  });

  it('a devnet and keys.json from before the fleet relayers: same tokens, fresh fleet relayers with gas on both chains', async () => {
    const dataDir = tempDataDir();
    const first = await start(dataDir);
    await stop(first);
    const fleet = ['fleetRelayer1', 'fleetRelayer2', 'fleetRelayer3', 'fleetRelayer4'] as const;
    const keysPath = path.join(dataDir, 'keys.json');
    const olderKeys = JSON.parse(fs.readFileSync(keysPath, 'utf8'));
    const recorded = readDevnetFile(dataDir);
    const olderAddresses: Record<string, unknown> = { ...recorded.addresses };
    for (const role of fleet) {
      delete olderKeys[role];
      delete olderAddresses[role];
    }
    fs.writeFileSync(keysPath, JSON.stringify(olderKeys), { mode: 0o600 });
    fs.writeFileSync(
      path.join(dataDir, 'devnet.json'),
      JSON.stringify({ ...recorded, addresses: olderAddresses }),
    );

    const second = await start(dataDir);
    expect(second.info.chains.funding.token).toEqual(first.info.chains.funding.token);
    expect(second.info.chains.settlement.token).toEqual(first.info.chains.settlement.token);
    for (const role of fleet) {
      const address = second.keys[role].address;
      expect(address).not.toBe(first.keys[role].address);
      expect(second.info.addresses[role]).toBe(address);
      for (const chain of ['funding', 'settlement'] as const)
        expect(await publicClientOf(second.info, chain).getBalance({ address })).toBe(GAS_FUND_WEI);
    }
    await stop(second);
  });

  it('redeploys on a chain whose state file was lost, and only there', async () => {
    const dataDir = tempDataDir();
    const first = await start(dataDir);
    await stop(first);
    fs.rmSync(path.join(dataDir, 'anvil-196.json'));

    const second = await start(dataDir);
    const fundingClient = publicClientOf(second.info, 'funding');
    expect(
      await fundingClient.getCode({ address: second.info.chains.funding.token.address }),
    ).not.toBe('0x');
    expect(
      await readTokenBalance(
        fundingClient,
        second.info.chains.funding.token.address,
        second.keys.treasury.address,
      ),
    ).toBe(DEFAULT_TREASURY_FLOAT_ATOMIC);
    expect(second.info.addresses).toEqual(first.info.addresses);
    const settlementClient = publicClientOf(second.info, 'settlement');
    expect(
      await settlementClient.getTransactionCount({ address: second.keys.deployer.address }),
    ).toBe(2); // deploy + mint, once
    await stop(second);
  });

  it('sets both chains up again for new keys when keys.json was replaced', async () => {
    const dataDir = tempDataDir();
    const first = await start(dataDir);
    await stop(first);
    fs.rmSync(path.join(dataDir, 'keys.json'));

    const second = await start(dataDir);
    expect(second.info.addresses.deployer).not.toBe(first.info.addresses.deployer);
    for (const role of ['funding', 'settlement'] as const) {
      const token = second.info.chains[role].token.address;
      const publicClient = publicClientOf(second.info, role);
      expect(token).not.toBe(first.info.chains[role].token.address);
      expect(
        await publicClient.readContract({
          address: token,
          abi: eip3009TokenAbi,
          functionName: 'minter',
        }),
      ).toBe(second.keys.deployer.address);
      expect(await readTokenBalance(publicClient, token, second.keys.treasury.address)).toBe(
        DEFAULT_TREASURY_FLOAT_ATOMIC,
      );
    }
    await stop(second);
  });

  /**
   * Stands in for another process that started the devnet on dataDir: its anvils run on the state
   * files and devnet.json names them, with `owner` as the owning pid.
   */
  async function chainsOwnedElsewhere(dataDir: string, owner: number): Promise<AnvilNode[]> {
    const recorded = readDevnetFile(dataDir);
    const nodes = await Promise.all(
      [recorded.chains.funding.chainId, recorded.chains.settlement.chainId].map((chainId) =>
        startAnvil({ chainId, stateFile: path.join(dataDir, `anvil-${chainId}.json`) }),
      ),
    );
    elsewhere.push(...nodes);
    const pids = { owner, funding: nodes[0].pid, settlement: nodes[1].pid };
    fs.writeFileSync(
      path.join(dataDir, 'devnet.json'),
      JSON.stringify({ ...recorded, stoppedAt: null, pids }),
    );
    return nodes;
  }

  it('refuses a second start on a dataDir whose chains are running, here or in a live process', async () => {
    const here = tempDataDir();
    await start(here);
    await expect(startDevnetChains({ dataDir: here })).rejects.toThrow(DevnetAlreadyRunningError);

    const there = tempDataDir();
    await stop(await start(there));
    const [fundingNode] = await chainsOwnedElsewhere(there, process.ppid);
    await expect(startDevnetChains({ dataDir: there })).rejects.toThrow(
      `already running (owner pid ${process.ppid})`,
    );
    expect(await createChainPublicClient(fundingNode).getChainId()).toBe(196); // left alone
  });

  it('runs its chains with no periodic state dump (whose cost grows with the chain), writing state on stop', async () => {
    const dataDir = tempDataDir();
    const devnet = await start(dataDir);
    for (const role of ['funding', 'settlement'] as const) {
      const args = fs.readFileSync(`/proc/${devnet.info.pids[role]}/cmdline`, 'utf8').split('\0');
      expect(args).toContain('--state');
      expect(args.some((arg) => arg.startsWith('--state-interval') || arg === '-s')).toBe(false);
    }
    await stop(devnet);
    expect(fs.statSync(path.join(dataDir, 'anvil-196.json')).size).toBeGreaterThan(0);
    expect(fs.statSync(path.join(dataDir, 'anvil-8453.json')).size).toBeGreaterThan(0);
  });

  it('stops the anvils a crashed owner left behind and continues from their state', async () => {
    const dataDir = tempDataDir();
    const first = await start(dataDir);
    const payee = await payFromTreasury(first, 'settlement');
    await stop(first);
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid!;
    const orphans = await chainsOwnedElsewhere(dataDir, deadPid);

    const lines: string[] = [];
    const resumed = await startDevnetChains({ dataDir, log: (line) => lines.push(line) });
    running.add(resumed);
    expect(lines.filter((line) => line.startsWith('stopping orphaned anvil'))).toHaveLength(2);
    for (const orphan of orphans) expect(() => process.kill(orphan.pid, 0)).toThrow();
    const settlement = resumed.info.chains.settlement;
    expect(settlement.token.address).toBe(first.info.chains.settlement.token.address);
    expect(
      await readTokenBalance(
        publicClientOf(resumed.info, 'settlement'),
        settlement.token.address,
        payee,
      ),
    ).toBe(1_500_000n);
    await stop(resumed);
  });
});
