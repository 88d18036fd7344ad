// A consumer for the purchase-path tests: a fresh wallet (minted devnet USD₮0 when asked), a policy
// it owns in the funding rail's token allowing `domains`, and both of its sessions (the consumer
// session bound to the policy, and the owner session that approves).
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { DevnetChains } from '../../devnet/chains';
import { createChainPublicClient, createChainWalletClient } from '../../platform/chain/clients';
import { mintToken } from '../../platform/chain/tokens';
import { createEscalatingPolicy, type TestPolicy } from './escalations';
import { signIn } from './siwe';
import type { TestStack } from './stack';

export interface TestConsumer {
  readonly account: PrivateKeyAccount;
  readonly policy: TestPolicy;
  /** The consumer session bound to the policy. */
  readonly session: string;
  /** The owner session of the same wallet. */
  readonly owner: string;
}

export async function newConsumer(
  stack: TestStack,
  devnet: DevnetChains,
  options: {
    mintAtomic?: bigint;
    policy?: Record<string, unknown>;
    /** The wallet; default a fresh one. */
    account?: PrivateKeyAccount;
  } = {},
): Promise<TestConsumer> {
  const account = options.account ?? privateKeyToAccount(generatePrivateKey());
  const funding = devnet.info.chains.funding;
  if ((options.mintAtomic ?? 0n) > 0n) {
    await mintToken({
      publicClient: createChainPublicClient(funding, { pollingIntervalMs: 20 }),
      minter: createChainWalletClient(funding, devnet.keys.deployer.account, {
        pollingIntervalMs: 20,
      }),
      token: funding.token.address,
      to: account.address,
      amountAtomic: options.mintAtomic!,
    });
  }
  const policy = await createConsumerPolicy(stack, devnet, account.address, options.policy);
  return {
    account,
    policy,
    session: await signIn(stack.url, account, policy.policyId),
    owner: await signIn(stack.url, account),
  };
}

/** A policy `owner` owns in the funding rail's token (USD₮0 on the devnet), allowing `domains`. */
export function createConsumerPolicy(
  stack: TestStack,
  devnet: DevnetChains,
  owner: string,
  overrides: Record<string, unknown> = {},
): Promise<TestPolicy> {
  const funding = devnet.info.chains.funding;
  return createEscalatingPolicy(stack, owner.toLowerCase(), {
    asset: {
      network: funding.caip2,
      token: funding.token.address.toLowerCase(),
      symbol: 'USDT0',
      decimals: 6,
    },
    categories: { allow: ['domains'], deny: [] },
    ...overrides,
  });
}
