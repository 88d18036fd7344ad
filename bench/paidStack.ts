// What the paid benchmarks (x402, mcp, consumer) share: x402 on the devnet's funding chain as the
// gateway takes it, and payers minted more tokens than any run spends.
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { DEVNET_POLLING_INTERVAL_MS, type startDevnetChains } from '../devnet/chains';
import type { X402GatewayOptions } from '../gateway/server';
import { createSettlementRail, type SettlementRail } from '../gateway/x402/rail';
import { createChainPublicClient, createChainWalletClient } from '../platform/chain/clients';
import { mintToken } from '../platform/chain/tokens';
import type { createScratchDatabase } from './service';

type Database = Awaited<ReturnType<typeof createScratchDatabase>>;
type Devnet = Awaited<ReturnType<typeof startDevnetChains>>;

/** Group settlement as the devnet gateway runs it, unless X402_GROUP_SETTLEMENT=false (to compare). */
function benchGroupSettlement(funding: Devnet['info']['chains']['funding']) {
  if (process.env.X402_GROUP_SETTLEMENT === 'false' || !funding.groupSettlement) return {};
  return { group: { contract: funding.groupSettlement, maxSize: 64, maxWaitMs: 2 } };
}

/** The devnet funding chain's settlement rail, paid for by its relayer. */
export function devnetRail(devnet: Devnet): SettlementRail {
  const funding = devnet.info.chains.funding;
  return createSettlementRail({
    chainId: funding.chainId,
    rpcUrl: funding.rpcUrl,
    token: funding.token.address,
    relayerPrivateKey: devnet.keys.relayer.exportPrivateKey(),
    confirmationTimeoutMs: 30_000,
    pollingIntervalMs: DEVNET_POLLING_INTERVAL_MS,
    ...benchGroupSettlement(funding),
  });
}

/** x402 settled on the devnet by its relayer, offers and receipts signed by its fee receiver. */
export function devnetX402(database: Database, devnet: Devnet): X402GatewayOptions {
  return {
    rail: devnetRail(devnet),
    db: database.pool,
    leaseMs: 60_000,
    reconcileIntervalMs: 0,
    receiptSigner: devnet.keys.feeReceiver.typedDataSigner(),
  };
}

/** `count` fresh payers' private keys, each minted more tokens than any run spends. */
export async function fundedPayerKeys(devnet: Devnet, count: number): Promise<Hex[]> {
  const funding = devnet.info.chains.funding;
  const polling = { pollingIntervalMs: DEVNET_POLLING_INTERVAL_MS };
  const publicClient = createChainPublicClient(funding, polling);
  const minter = createChainWalletClient(funding, devnet.keys.deployer.account, polling);
  const keys = Array.from({ length: count }, () => generatePrivateKey());
  for (const key of keys)
    await mintToken({
      publicClient,
      minter,
      token: funding.token.address,
      to: privateKeyToAccount(key).address,
      amountAtomic: 1_000_000_000n,
    });
  return keys;
}

/** `count` fresh payers, each minted more tokens than any run spends. */
export async function fundedPayers(devnet: Devnet, count: number): Promise<PrivateKeyAccount[]> {
  return (await fundedPayerKeys(devnet, count)).map((key) => privateKeyToAccount(key));
}
