// Where this process's receipt anchoring comes from: on the devnet, its ReceiptAnchor and the key
// store's anchorWriter; elsewhere RECEIPT_ANCHOR_ADDRESS and ANCHOR_WRITER_PRIVATE_KEY on the
// funding chain. Without them anchoring is off and receipts report NOT_RECORDED with the reason.
import { privateKeyToAccount } from 'viem/accounts';
import type { KeyStore } from '../platform/chain/keys';
import type { Config } from '../platform/config';
import type { DevnetInfo } from '../devnet/chains';
import { DEFAULT_ANCHOR_INTERVAL_MS } from './anchorWorker';
import type { AllInOneOptions } from './stack';

export type AnchoringSetup = NonNullable<AllInOneOptions['anchoring']>;

export function anchoringOf(
  config: Config,
  devnet: DevnetInfo | null,
  devnetKeys: KeyStore | null,
): AnchoringSetup {
  const batches = {
    batchSize: config.anchoring.batchSize,
    batchSeconds: config.anchoring.batchSeconds,
    confirmations: config.anchoring.confirmations,
    recheckDepth: config.anchoring.recheckDepth,
    intervalMs: Math.min(DEFAULT_ANCHOR_INTERVAL_MS, config.anchoring.batchSeconds * 1000 || 100),
  };
  if (devnet !== null) {
    const contract = devnet.contracts.receiptAnchor;
    if (contract === null) return { off: 'the devnet has no ReceiptAnchor yet (restart it)' };
    // Another process of the devnet (the all-in-one) holds the key and anchors.
    if (devnetKeys === null) return {};
    const { chainId, rpcUrl } = devnet.chains.funding;
    const writer = devnetKeys.anchorWriter.account;
    return { worker: { chain: { chainId, rpcUrl }, contract, writer, ...batches } };
  }
  const contract = config.anchoring.address;
  const key = config.secrets.anchorWriterPrivateKey;
  const rpcUrl = config.funding.rpcUrl;
  const missing = [
    contract === null ? 'RECEIPT_ANCHOR_ADDRESS' : null,
    key === null ? 'ANCHOR_WRITER_PRIVATE_KEY' : null,
    rpcUrl === null ? 'FUNDING_RPC_URL' : null,
  ].filter((name) => name !== null);
  if (contract === null || key === null || rpcUrl === null)
    return {
      off: `receipt anchoring is not configured on this deployment (${missing.join(', ')} unset)`,
    };
  return {
    worker: {
      chain: { chainId: config.funding.chainId, rpcUrl },
      contract,
      writer: privateKeyToAccount(key),
      ...batches,
    },
  };
}
