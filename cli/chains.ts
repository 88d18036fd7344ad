// The chains a started process uses: the local anvil devnet (started by the all-in-one role, read
// from DATA_DIR/devnet.json by the others) or the configured RPC URLs, and the funding chain as
// the subgraphs reach it.
import type { Config } from '../platform/config';
import { loadKeyFile, type KeyStore } from '../platform/chain/keys';
import { keysFilePath, readDevnetFile, startDevnetChains, type DevnetInfo } from '../devnet/chains';
import type { SubgraphChains } from '../subgraphs/kit';
import { shownUrl, type Out, type Role, type Stoppers } from './startup';

export interface PreparedChains {
  /** null: the configured chains, not the devnet. */
  readonly devnet: DevnetInfo | null;
  /** The devnet's keys (the relayer's pays x402 gas); only where the role needs them. */
  readonly devnetKeys: KeyStore | null;
  /** The funding chain as the subgraphs reach it; undefined: none. */
  readonly subgraphChains: SubgraphChains | undefined;
}

/** The funding chain as the subgraphs reach it: the devnet's, or the configured RPC and registry. */
function subgraphChains(config: Config, devnet: DevnetInfo | null): SubgraphChains | undefined {
  if (devnet !== null) {
    const funding = devnet.chains.funding;
    return {
      funding: {
        chainId: funding.chainId,
        rpcUrl: funding.rpcUrl,
        policyRegistry: devnet.contracts.policyRegistry,
      },
    };
  }
  if (config.funding.rpcUrl === null) return undefined;
  return {
    funding: {
      chainId: config.funding.chainId,
      rpcUrl: config.funding.rpcUrl,
      policyRegistry: config.policyRegistryAddress,
    },
  };
}

function describeDevnet(devnet: DevnetInfo, out: Out): void {
  const { funding, settlement } = devnet.chains;
  out(
    `chains          funding  eip155:${funding.chainId} ${funding.rpcUrl} USDT0 ${funding.token.address}`,
  );
  out(
    `                settle   eip155:${settlement.chainId} ${settlement.rpcUrl} USDC ${settlement.token.address}`,
  );
  out(
    `                registry eip155:${funding.chainId} PolicyRegistry ${devnet.contracts.policyRegistry ?? 'none (restart the devnet)'}`,
  );
  out(
    `                anchor   eip155:${funding.chainId} ReceiptAnchor ${devnet.contracts.receiptAnchor ?? 'none (restart the devnet)'}`,
  );
}

function describeConfigured(config: Config, out: Out): void {
  const { funding, settlement } = config;
  out(
    `chains          funding  eip155:${funding.chainId} ${funding.rpcUrl ? shownUrl(funding.rpcUrl) : ''}`,
  );
  out(
    `                settle   eip155:${settlement.chainId} ${settlement.rpcUrl ? shownUrl(settlement.rpcUrl) : ''}`,
  );
  out(
    `                registry eip155:${funding.chainId} PolicyRegistry ${config.policyRegistryAddress ?? 'none (POLICY_REGISTRY_ADDRESS unset)'}`,
  );
  out(
    `                anchor   eip155:${funding.chainId} ReceiptAnchor ${config.anchoring.address ?? 'none (RECEIPT_ANCHOR_ADDRESS unset: receipts NOT_RECORDED)'}`,
  );
}

export async function prepareChains(
  config: Config,
  role: Role,
  stoppers: Stoppers,
  out: Out,
): Promise<PreparedChains> {
  if (!config.devnet) {
    describeConfigured(config, out);
    return { devnet: null, devnetKeys: null, subgraphChains: subgraphChains(config, null) };
  }
  let devnet: DevnetInfo;
  let devnetKeys: KeyStore | null = null;
  if (role === 'all') {
    out('chains          starting local anvil chains (eip155:196, eip155:8453) …');
    const chains = await startDevnetChains({ dataDir: config.dataDir });
    stoppers.push('devnet chains', () => chains.stop());
    devnet = chains.info;
    devnetKeys = chains.keys;
  } else {
    devnet = readDevnetFile(config.dataDir);
    // The gateway settles x402 payments; the worker executes purchases (treasury signatures,
    // refund gas) and anchors receipts. Each sends from its own relayer slot (DEVNET_RELAYER_SLOT).
    if (role === 'gateway' || role === 'worker')
      devnetKeys = loadKeyFile(keysFilePath(config.dataDir));
  }
  describeDevnet(devnet, out);
  return { devnet, devnetKeys, subgraphChains: subgraphChains(config, devnet) };
}
