// The signer an in-process x402 facilitator (@x402/evm `exact`, EIP-3009) settles with: one relayer
// wallet that pays the gas. Shared by the service's own rail (gateway/x402/rail.ts) and the devnet
// merchants' facilitators, so both check signatures and send settlements the same way.
import { toFacilitatorEvmSigner } from '@x402/evm';
import {
  type Address,
  type Hex,
  isAddressEqual,
  publicActions,
  recoverTypedDataAddress,
  size,
  type TransactionReceipt,
} from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import type { ChainWalletClient } from './clients';
import { relayerNonces } from './relayerNonces';

const ECDSA_SIGNATURE_BYTES = 65;

/**
 * A relayer's account: the process's relayer nonces (relayerNonces.ts) hand concurrent settlements
 * consecutive nonces, and a send the node refuses gives its nonce back (facilitatorSigner.test.ts
 * holds both to it).
 */
export function relayerAccount(privateKey: Hex): PrivateKeyAccount {
  return privateKeyToAccount(privateKey, { nonceManager: relayerNonces });
}

/** A relayer's wallet client that can also read the chain, as a facilitator needs. */
export function withChainReads(wallet: ChainWalletClient) {
  return wallet.extend(publicActions);
}

export type RelayerWallet = ReturnType<typeof withChainReads>;

export interface FacilitatorSignerOptions {
  /** How long a settlement waits for its receipt; past it the facilitator answers settlement_pending. */
  readonly confirmationTimeoutMs: number;
  /** Sees every receipt the facilitator waited for (the rail keeps them to book from). */
  readonly onReceipt?: (receipt: TransactionReceipt) => void;
  /**
   * Called right before a transaction is handed to the node (gas estimation included): from then
   * on the node may hold it even if its answer is lost, so a failure is no proof nothing was sent.
   */
  readonly onSend?: () => void;
  /**
   * The code reads of the settlement under way, by address: the facilitator asks for the payer's
   * code twice per settlement (ERC-6492 classification, then signature verification), and one
   * eth_getCode answers both. Absent, or undefined outside a settlement: every read goes to the chain.
   */
  readonly codeReads?: () => Map<string, Promise<Hex | undefined>> | undefined;
  /**
   * Contracts whose code, once read, is kept for the life of the process (the rail's token: a
   * deployed token's code does not go away). The facilitator checks that the asset is a contract on
   * every verify unless its own cache is fresh; answered from here, that check cannot fail while
   * the chain is unreachable, where it would otherwise reject a promise its verify may never await.
   */
  readonly knownContracts?: readonly Address[];
}

/** eth_getCode, read once per settlement where the settlement keeps its reads. */
function codeRead(
  wallet: RelayerWallet,
  args: { address: Address },
  reads: Map<string, Promise<Hex | undefined>> | undefined,
): Promise<Hex | undefined> {
  if (!reads) return wallet.getCode(args);
  const key = args.address.toLowerCase();
  let read = reads.get(key);
  if (!read) {
    read = wallet.getCode(args);
    reads.set(key, read);
    read.catch(() => reads.delete(key)); // a failed read is asked again, never remembered
  }
  return read;
}

export function createFacilitatorSigner(
  wallet: RelayerWallet,
  relayer: Address,
  options: FacilitatorSignerOptions,
) {
  const keep = new Set((options.knownContracts ?? []).map((address) => address.toLowerCase()));
  const contractCode = new Map<string, Hex>();
  return toFacilitatorEvmSigner(
    {
      address: relayer,
      readContract: (args) => wallet.readContract(args as never),
      // An EOA's signature is checked by recovery, locally (no RPC round trip); anything else
      // (ERC-1271 and ERC-6492 smart wallets) by the chain, as the facilitator would.
      verifyTypedData: async (args) => {
        if (size(args.signature) === ECDSA_SIGNATURE_BYTES) {
          const recovered = await recoverTypedDataAddress(args as never).catch(() => null);
          if (recovered !== null && isAddressEqual(recovered, args.address)) return true;
        }
        return wallet.verifyTypedData(args as never);
      },
      writeContract: (args) => {
        options.onSend?.();
        return wallet.writeContract(args as never);
      },
      sendTransaction: (args) => {
        options.onSend?.();
        return wallet.sendTransaction(args as never);
      },
      waitForTransactionReceipt: async (args) => {
        const receipt = await wallet.waitForTransactionReceipt(args);
        options.onReceipt?.(receipt);
        return receipt;
      },
      getCode: (args) => {
        const key = args.address.toLowerCase();
        const kept = contractCode.get(key);
        if (kept) return Promise.resolve(kept);
        const read = codeRead(wallet, args, options.codeReads?.());
        if (!keep.has(key)) return read;
        return read.then((code) => {
          if (code !== undefined && code !== '0x') contractCode.set(key, code);
          return code;
        });
      },
    },
    { confirmationTimeoutMs: options.confirmationTimeoutMs },
  );
}
