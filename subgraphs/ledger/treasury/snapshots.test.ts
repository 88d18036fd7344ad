// Treasury drift against two real anvil chains: the floats read with balanceOf at a pinned block
// match the ledger's TREASURY balances after a funding and a replenishment, an on-chain movement
// the ledger does not know of shows up as drift, and nothing is ever posted to hide it.
import { randomBytes } from 'node:crypto';
import type { ApolloServer } from '@apollo/server';
import { type Address, erc20Abi } from 'viem';
import { eip3009TokenAbi, eip3009TokenBytecode } from '../../../contracts/artifacts/abis';
import { signActor } from '../../../platform/actor';
import { type AnvilNode, startAnvil } from '../../../platform/chain/anvil';
import {
  type ChainPublicClient,
  type ChainWalletClient,
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
} from '../../../platform/chain/clients';
import { deployArtifact } from '../../../platform/chain/deploy';
import { generateKeyStore } from '../../../platform/chain/keys';
import { mintToken } from '../../../platform/chain/tokens';
import type { TestDatabase } from '../../../platform/db/testDb';
import { createSubgraphServer, executeInProcess, type SubgraphContext } from '../../kit';
import { assetId } from '../accounts/names';
import { ledgerSubgraph } from '../subgraph';
import { postFunding, postServiceFee } from '../posting/groupKinds';
import { postTreasuryTransfer, registerAsset } from '../posting/writes';
import { createLedgerTestDatabase, intentId } from '../test-support';
import { type TreasuryRail, recordTreasurySnapshot, recordTreasurySnapshots } from './snapshots';

interface Rail {
  node: AnvilNode;
  publicClient: ChainPublicClient;
  deployer: ChainWalletClient;
  treasury: ChainWalletClient;
  token: Address;
  asset: string;
}

const keys = generateKeyStore();
const options = { pollingIntervalMs: 20 };
const outside = `0x${'0e'.repeat(20)}` as Address;
let db: TestDatabase;
let funding: Rail;
let settlement: Rail;
let server: ApolloServer<SubgraphContext>;
const SECRET = randomBytes(32);

async function setUpRail(chainId: number, name: string, symbol: string): Promise<Rail> {
  const node = await startAnvil({ chainId });
  const testClient = createAnvilTestClient(node);
  await testClient.setBalance({ address: keys.deployer.address, value: 10n ** 20n });
  await testClient.setBalance({ address: keys.treasury.address, value: 10n ** 20n });
  const publicClient = createChainPublicClient(node, options);
  const deployer = createChainWalletClient(node, keys.deployer.account, options);
  const { address: token } = await deployArtifact({
    publicClient,
    walletClient: deployer,
    contractName: symbol,
    abi: eip3009TokenAbi,
    bytecode: eip3009TokenBytecode,
    args: [name, symbol, '1'],
  });
  await registerAsset(db.pool, { chain: `eip155:${chainId}`, token, symbol, decimals: 6 });
  return {
    node,
    publicClient,
    deployer,
    treasury: createChainWalletClient(node, keys.treasury.account, options),
    token,
    asset: assetId(`eip155:${chainId}`, token),
  };
}

function railOf(rail: Rail): TreasuryRail {
  return {
    rpcUrl: rail.node.rpcUrl,
    chainId: rail.node.chainId,
    token: rail.token,
    treasury: keys.treasury.address,
  };
}

async function mintToTreasury(rail: Rail, amountAtomic: bigint): Promise<void> {
  await mintToken({
    publicClient: rail.publicClient,
    minter: rail.deployer,
    token: rail.token,
    to: keys.treasury.address,
    amountAtomic,
  });
}

async function sendFromTreasury(rail: Rail, amountAtomic: bigint): Promise<void> {
  const hash = await rail.treasury.writeContract({
    address: rail.token,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [outside, amountAtomic],
  });
  const receipt = await rail.publicClient.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
}

async function groupCount(): Promise<string> {
  return (await db.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM ledger.groups'))
    .rows[0].n;
}

beforeAll(async () => {
  db = await createLedgerTestDatabase({ subgraphs: ['ledger'] });
  [funding, settlement] = await Promise.all([
    setUpRail(196, 'USD\u20AE0', 'USDT0'),
    setUpRail(8453, 'USD Coin', 'USDC'),
  ]);
  server = await createSubgraphServer(ledgerSubgraph, { db: db.pool, actorSecret: SECRET });
});

afterAll(async () => {
  await server?.stop();
  await Promise.all([funding?.node.stop(), settlement?.node.stop()]);
  await db?.drop();
});

it('finds no drift when the chain moved exactly what the ledger posted', async () => {
  await mintToTreasury(funding, 100_000n);
  await postFunding(db.pool, {
    asset: funding.asset,
    amountAtomic: 100_000n,
    policyId: '7',
    intentRef: intentId(1),
    idempotencyKey: 'funding:1',
  });
  await sendFromTreasury(funding, 60_000n);
  await mintToTreasury(settlement, 59_990n);
  await postTreasuryTransfer(db.pool, {
    source: { asset: funding.asset, amountAtomic: 60_000n },
    destination: { asset: settlement.asset, amountAtomic: 59_990n },
    idempotencyKey: 'replenish:1',
  });

  const snapshots = await recordTreasurySnapshots(
    db.pool,
    [railOf(funding), railOf(settlement)],
    options,
  );
  expect(
    snapshots.map(({ asset, onchainBalanceAtomic, ledgerBalanceAtomic, driftAtomic }) => ({
      asset,
      onchainBalanceAtomic,
      ledgerBalanceAtomic,
      driftAtomic,
    })),
  ).toEqual([
    {
      asset: funding.asset,
      onchainBalanceAtomic: 40_000n,
      ledgerBalanceAtomic: 40_000n,
      driftAtomic: 0n,
    },
    {
      asset: settlement.asset,
      onchainBalanceAtomic: 59_990n,
      ledgerBalanceAtomic: 59_990n,
      driftAtomic: 0n,
    },
  ]);
  expect(snapshots[0].blockNumber).toBe(await funding.publicClient.getBlockNumber());
  expect(snapshots[0].treasuryAddress).toBe(keys.treasury.address.toLowerCase());
});

it('does not count x402 fees, which arrive at the fee receiver, against the treasury float', async () => {
  const before = await recordTreasurySnapshot(db.pool, railOf(funding), options);
  await postServiceFee(db.pool, {
    asset: funding.asset,
    feeAtomic: 10_000n,
    route: 'ping_service',
    idempotencyKey: 'x402:fee:drift-test',
  });
  const after = await recordTreasurySnapshot(db.pool, railOf(funding), options);
  expect(after.ledgerBalanceAtomic).toBe(before.ledgerBalanceAtomic);
  expect(after.driftAtomic).toBe(before.driftAtomic);
});

it('reports an on-chain movement the ledger does not know of as drift, and posts nothing', async () => {
  const groupsBefore = await groupCount();
  await mintToTreasury(settlement, 5n);
  await sendFromTreasury(funding, 1_000n);
  const [fundingSnapshot, settlementSnapshot] = await recordTreasurySnapshots(
    db.pool,
    [railOf(funding), railOf(settlement)],
    options,
  );
  expect(fundingSnapshot.driftAtomic).toBe(-1_000n);
  expect(settlementSnapshot.driftAtomic).toBe(5n);
  expect(settlementSnapshot.ledgerBalanceAtomic).toBe(59_990n);
  expect(await groupCount()).toBe(groupsBefore);

  const result = await executeInProcess(
    server,
    {
      query:
        '{ treasuryDrift { asset { id symbol } onchainBalanceAtomic ledgerBalanceAtomic driftAtomic blockNumber } }',
    },
    { actorHeader: signActor({ kind: 'admin' }, SECRET) },
  );
  expect(result.errors).toBeUndefined();
  const drift = (
    result.data as {
      treasuryDrift: Array<{
        asset: { id: string; symbol: string };
        driftAtomic: string;
        blockNumber: string;
      }>;
    }
  ).treasuryDrift;
  expect(drift.map((line) => [line.asset.symbol, line.driftAtomic])).toEqual(
    expect.arrayContaining([
      ['USDT0', '-1000'],
      ['USDC', '5'],
    ]),
  );
  expect(drift).toHaveLength(2);
  const owner = await executeInProcess(
    server,
    { query: '{ treasuryDrift { driftAtomic } }' },
    { actorHeader: signActor({ kind: 'owner', address: `0x${'aa'.repeat(20)}` }, SECRET) },
  );
  expect(owner.errors?.[0].extensions?.code).toBe('FORBIDDEN');
});

it('refuses a rail whose RPC serves another chain', async () => {
  await expect(
    recordTreasurySnapshot(db.pool, { ...railOf(funding), chainId: 8453 }, options),
  ).rejects.toMatchObject({ name: 'ChainIdMismatchError' });
});
