// The group path's check of one authorization before it may join a group, made cheap for the
// payment that passes it. The official facilitator's verify (@x402/evm exact, EIP-3009) recovers
// the payer with viem's pure-JS secp256k1 and reads the payer's code twice; on the paid path that
// was a fifth of the service's CPU per call (docs/x402.md). This check makes every one of its
// checks, in its order, with the same bounds, for the one case the group carries (an EOA's 65-byte
// signature): scheme, EIP-712 domain, network, the payer holds no code, the signature recovers to
// `from` (libsecp256k1), recipient, validBefore at least 6 s ahead, validAfter not in the future,
// the exact amount, the asset is a contract, and the transfer simulated on the chain (balance,
// nonce unused, the token's own signature check). It only ever says "passes": anything else, or
// anything it cannot read, goes to the facilitator's own verify, whose answer (and refusal reason)
// is then the one given. So a payment it lets through is one the facilitator lets through, and a
// refusal is word for word the facilitator's. (The rail's facilitator has no verify hooks; one
// added there would need its check here too.)
import { authorizationTypes, eip3009ABI } from '@x402/evm';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { type Address, getAddress, type Hex, parseSignature } from 'viem';
import { hashTypedDataFast } from '../../../platform/chain/eip712';
import { recoverSigner } from '../../../platform/chain/secp256k1';
import type { GroupAuthorization } from '../../../platform/chain/settlementContract';

/** The facilitator's margin: an authorization expiring within 6 s is refused. */
const VALID_BEFORE_MARGIN_S = 6n;

/**
 * The chain reads the check makes: the rail's facilitator signer, which keeps the token's code once
 * read (`knownContracts`), so the asset check costs no round trip after the first.
 */
export interface MemberCheckChain {
  getCode(args: { address: Address }): Promise<Hex | undefined>;
  readContract(args: {
    address: Address;
    abi: readonly unknown[];
    functionName: string;
    args?: readonly unknown[];
  }): Promise<unknown>;
}

export class MemberCheck {
  constructor(
    private readonly chain: MemberCheckChain,
    private readonly chainId: number,
    private readonly nowS: () => bigint = () => BigInt(Math.floor(Date.now() / 1000)),
  ) {}

  /** True only when the facilitator's verify would find the payment valid now. */
  async passes(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    authorization: GroupAuthorization,
  ): Promise<boolean> {
    try {
      if (!this.offline(payload, requirements, authorization)) return false;
      const asset = getAddress(requirements.asset);
      // The three reads at once (one JSON-RPC batch where the chain client batches): the
      // simulation's answer only counts when the payer holds no code and the asset does.
      const [payerCode, assetCode, simulated] = await Promise.all([
        this.chain.getCode({ address: getAddress(authorization.from) }),
        this.chain.getCode({ address: asset }),
        this.simulates(asset, authorization),
      ]);
      if (payerCode !== undefined && payerCode !== '0x') return false; // a smart wallet: ERC-1271
      if (assetCode === undefined || assetCode === '0x') return false;
      return simulated;
    } catch {
      return false; // anything unreadable: the facilitator decides
    }
  }

  /** The checks that need no chain, in the facilitator's order. */
  private offline(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    authorization: GroupAuthorization,
  ): boolean {
    const { name, version } = (requirements.extra ?? {}) as { name?: unknown; version?: unknown };
    // The facilitator's dispatch: x402 v2, and an EIP-3009 payload (not Permit2).
    if (payload.x402Version !== 2 || 'permit2Authorization' in payload.payload) return false;
    if (payload.accepted.scheme !== 'exact' || requirements.scheme !== 'exact') return false;
    if (typeof name !== 'string' || typeof version !== 'string' || !name || !version) return false;
    if (payload.accepted.network !== requirements.network) return false;
    if (requirements.network !== `eip155:${this.chainId}`) return false;
    const digest = hashTypedDataFast({
      types: authorizationTypes,
      primaryType: 'TransferWithAuthorization',
      domain: {
        name,
        version,
        chainId: this.chainId,
        verifyingContract: getAddress(requirements.asset),
      },
      message: authorization,
    });
    const signer = recoverSigner(digest, authorization.signature);
    if (signer === null || signer !== authorization.from.toLowerCase()) return false;
    if (getAddress(authorization.to) !== getAddress(requirements.payTo)) return false;
    const now = this.nowS();
    if (authorization.validBefore < now + VALID_BEFORE_MARGIN_S) return false;
    if (authorization.validAfter > now) return false;
    return authorization.value === BigInt(requirements.amount);
  }

  /** The token's transferWithAuthorization, called (not sent) as the facilitator simulates it. */
  private async simulates(asset: Address, authorization: GroupAuthorization): Promise<boolean> {
    const { v, yParity, r, s } = parseSignature(authorization.signature);
    try {
      await this.chain.readContract({
        address: asset,
        abi: eip3009ABI,
        functionName: 'transferWithAuthorization',
        args: [
          getAddress(authorization.from),
          getAddress(authorization.to),
          authorization.value,
          authorization.validAfter,
          authorization.validBefore,
          authorization.nonce,
          v ?? yParity,
          r,
          s,
        ],
      });
      return true;
    } catch {
      return false;
    }
  }
}
