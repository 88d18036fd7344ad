// The books check the x402 end-to-end files run last: every asset's trial balance is zero, and on
// both devnet chains the fee receiver's token balance (read at one pinned block, the way the
// treasury drift check reads a float) equals the ledger's TREASURY:<asset>:fee-receiver.
import type { DevnetChains } from '../../devnet/chains';
import { accountId, assetId, FEE_RECEIVER_REF } from '../../subgraphs/ledger';
import { readOnchainFloat } from '../../subgraphs/ledger';
import { graphql, type TestStack } from './stack';

export interface FeeReceiverDrift {
  readonly asset: string;
  readonly onchainAtomic: bigint;
  readonly ledgerAtomic: bigint;
}

async function ledgerBalance(stack: TestStack, account: string): Promise<bigint> {
  const { rows } = await stack.db.pool.query<{ balance: string }>(
    'SELECT COALESCE(sum(amount), 0)::text AS balance FROM ledger.entries WHERE account_id = $1',
    [account],
  );
  return BigInt(rows[0].balance);
}

/** Trial balance lines as an operator reads them over GraphQL: `{asset, netAtomic, balanced}` per asset. */
export async function trialBalanceLines(
  stack: TestStack,
): Promise<Array<{ asset: string; netAtomic: string; balanced: boolean }>> {
  const trial = await graphql(
    stack.url,
    '{ trialBalance { asset { id } netAtomic balanced } }',
    {},
    stack.adminToken,
  );
  expect(trial.body.errors).toBeUndefined();
  return trial.body.data.trialBalance.map(
    (line: { asset: { id: string }; netAtomic: string; balanced: boolean }) => ({
      asset: line.asset.id,
      netAtomic: line.netAtomic,
      balanced: line.balanced,
    }),
  );
}

/** The fee receiver's on-chain token balance next to the ledger's, on the funding and the settlement chain. */
export async function feeReceiverDrift(
  stack: TestStack,
  devnet: DevnetChains,
): Promise<FeeReceiverDrift[]> {
  const feeReceiver = devnet.info.addresses.feeReceiver;
  const chains = [devnet.info.chains.funding, devnet.info.chains.settlement];
  return Promise.all(
    chains.map(async (chain) => {
      const asset = assetId(chain.caip2, chain.token.address);
      const onchain = await readOnchainFloat({
        rpcUrl: chain.rpcUrl,
        chainId: chain.chainId,
        token: chain.token.address,
        treasury: feeReceiver,
      });
      return {
        asset,
        onchainAtomic: onchain.balanceAtomic,
        ledgerAtomic: await ledgerBalance(stack, accountId('TREASURY', asset, FEE_RECEIVER_REF)),
      };
    }),
  );
}
