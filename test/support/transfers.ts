// The one ERC-20 Transfer a payment transaction made in a token, read back from the chain's receipt:
// how the e2e tests check a leg the service reports against the chain itself.
import { type Hex, parseAbi, parseEventLogs } from 'viem';
import type { ChainPublicClient } from '../../platform/chain/clients';

const TRANSFER = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

export interface ChainTransfer {
  readonly from: string;
  readonly to: string;
  readonly value: string;
  /** Present when asked for with `withBlock`. */
  readonly blockNumber?: string;
}

/**
 * The successful transaction `hash` carries exactly one Transfer of `token` (asserted); its parties
 * (lowercased) and value, and with `withBlock` the block it was mined in.
 */
export async function transferIn(
  chain: ChainPublicClient,
  token: string,
  hash: string,
  options: { withBlock?: boolean } = {},
): Promise<ChainTransfer> {
  const receipt = await chain.getTransactionReceipt({ hash: hash as Hex });
  expect(receipt.status).toBe('success');
  const logs = parseEventLogs({ abi: TRANSFER, logs: receipt.logs }).filter(
    (log) => log.address.toLowerCase() === token.toLowerCase(),
  );
  expect(logs).toHaveLength(1);
  const { from, to, value } = logs[0]!.args;
  return {
    from: from.toLowerCase(),
    to: to.toLowerCase(),
    value: value.toString(),
    ...(options.withBlock ? { blockNumber: receipt.blockNumber.toString() } : {}),
  };
}
