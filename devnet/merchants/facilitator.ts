// A devnet merchant's own facilitator: the official in-process x402 facilitator (@x402/core
// x402Facilitator + @x402/evm `exact`, EIP-3009) on one chain, sending settlements from the
// merchant's relayer key, shaped as the FacilitatorClient the official resource server takes.
// The signer is platform/chain's, as the service's rail uses; nothing else of the service's: a
// merchant is a peer of the service, not a part of it. Without Multicall3 on anvil, failures name no detail.
import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type { SupportedResponse } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import type { PrivateKeyAccount } from 'viem/accounts';
import { type ChainEndpoint, caip2Of, createChainWalletClient } from '../../platform/chain/clients';
import { createFacilitatorSigner, withChainReads } from '../../platform/chain/facilitatorSigner';

export interface MerchantFacilitatorOptions {
  readonly chain: ChainEndpoint;
  /** Pays the gas of every settlement. */
  readonly relayer: PrivateKeyAccount;
  /** How long a settlement waits for its receipt; past it the facilitator answers settlement_pending. */
  readonly confirmationTimeoutMs: number;
  readonly pollingIntervalMs?: number;
}

export function createMerchantFacilitator(options: MerchantFacilitatorOptions): FacilitatorClient {
  const wallet = withChainReads(
    createChainWalletClient(options.chain, options.relayer, {
      ...(options.pollingIntervalMs !== undefined
        ? { pollingIntervalMs: options.pollingIntervalMs }
        : {}),
    }),
  );
  const signer = createFacilitatorSigner(wallet, options.relayer.address, {
    confirmationTimeoutMs: options.confirmationTimeoutMs,
  });
  const facilitator = new x402Facilitator();
  // Simulating again at settle time refuses an authorization spent since verify (a replay racing
  // its original) without sending a transaction that can only revert.
  registerExactEvmScheme(facilitator, {
    signer,
    networks: caip2Of(options.chain.chainId),
    simulateInSettle: true,
  });
  return {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    // Every kind it lists was registered above under a CAIP-2 network, which the type cannot see.
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
}
