// Payers on the devnet's funding chain for the x402 e2e suites: a fresh key minted USD₮0 by the
// deployer, and a token balance read back from the chain.
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { DevnetChains } from '../../devnet/chains';
import { createChainPublicClient, createChainWalletClient } from '../../platform/chain/clients';
import { mintToken, readTokenBalance } from '../../platform/chain/tokens';

const POLLING = { pollingIntervalMs: 20 };

/** A fresh payer holding `amountAtomic` of the funding token. */
export async function mintedPayer(
  devnet: DevnetChains,
  amountAtomic: bigint,
): Promise<PrivateKeyAccount> {
  const payer = privateKeyToAccount(generatePrivateKey());
  const funding = devnet.info.chains.funding;
  await mintToken({
    publicClient: createChainPublicClient(funding, POLLING),
    minter: createChainWalletClient(funding, devnet.keys.deployer.account, POLLING),
    token: funding.token.address,
    to: payer.address,
    amountAtomic,
  });
  return payer;
}

/** The funding token balance of `address`. */
export function fundingBalance(devnet: DevnetChains, address: string): Promise<bigint> {
  const funding = devnet.info.chains.funding;
  return readTokenBalance(
    createChainPublicClient(funding, POLLING),
    funding.token.address,
    address as `0x${string}`,
  );
}
