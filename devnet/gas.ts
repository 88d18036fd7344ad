// Gas for the devnet's keys (anvil's setBalance): every key on a fresh chain, and on a reused chain
// the keys that ran low or were added to the key file since (the fleet relayers, say), since a key
// without gas can sign but never send.
import { parseEther } from 'viem';
import {
  type ChainEndpoint,
  type ChainPublicClient,
  createAnvilTestClient,
} from '../platform/chain/clients';
import { KEY_ROLES, type KeyStore } from '../platform/chain/keys';

export const GAS_FUND_WEI = parseEther('1000');

export async function fundAllKeys(endpoint: ChainEndpoint, keys: KeyStore): Promise<void> {
  const testClient = createAnvilTestClient(endpoint);
  for (const keyRole of KEY_ROLES)
    await testClient.setBalance({ address: keys[keyRole].address, value: GAS_FUND_WEI });
}

export async function topUpGas(
  endpoint: ChainEndpoint,
  publicClient: ChainPublicClient,
  keys: KeyStore,
): Promise<void> {
  const testClient = createAnvilTestClient(endpoint);
  for (const keyRole of KEY_ROLES) {
    const address = keys[keyRole].address;
    if ((await publicClient.getBalance({ address })) < GAS_FUND_WEI / 2n)
      await testClient.setBalance({ address, value: GAS_FUND_WEI });
  }
}
