// The group path's check of one authorization before it may join a group, made cheap for the
// payment that passes it. The official facilitator's verify (@x402/evm exact, EIP-3009) recovers
// the payer with viem's pure-JS secp256k1 and reads the payer's code twice; on the paid path that
// was a fifth of the service's CPU per call (docs/x402.md). This check makes every one of its
// checks, in its order, with the same bounds, for the one case the group carries (an EOA's 65-byte
// signature): scheme, EIP-712 domain, network, the payer holds no code, the signature recovers to
// `from`, recipient, validBefore at least 6 s ahead, validAfter not in the future, the exact
// amount, the asset is a contract, and the transfer simulated on the chain (balance, nonce unused,
// the token's own signature check). The signature check is the token's own in that simulation
// (ecrecover, native in the node) whenever the token signs under the very domain the requirements
// offer (its DOMAIN_SEPARATOR, read once): then the token accepting the signature is the signature
// recovering to `from` under that domain. Otherwise it recovers the signer itself (libsecp256k1,
// ~0.5 ms of this thread per payment). It only ever says "passes": anything else, or
// anything it cannot read, goes to the facilitator's own verify, whose answer (and refusal reason)
// is then the one given. So a payment it lets through is one the facilitator lets through, and a
// refusal is word for word the facilitator's. (The rail's facilitator has no verify hooks; one
// added there would need its check here too.)
import { authorizationTypes } from '@x402/evm';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { type Address, domainSeparator, getAddress, type Hex } from 'viem';
import { hashTypedDataFast } from '../../../platform/chain/eip712';
import { recoverSigner } from '../../../platform/chain/secp256k1';
import { transferWithAuthorizationCalldata } from '../../../platform/chain/tokens';
import type { GroupAuthorization } from '../../../platform/chain/settlementContract';

/** The facilitator's margin: an authorization expiring within 6 s is refused. */
const VALID_BEFORE_MARGIN_S = 6n;

/** EIP-3009 tokens (EIP-2612's) publish their EIP-712 domain separator. */
const DOMAIN_SEPARATOR_ABI = [
  {
    type: 'function',
    name: 'DOMAIN_SEPARATOR',
    stateMutability: 'view',
    inputs: [],
    outputs: [{ name: '', type: 'bytes32' }],
  },
] as const;

interface OfferedDomain {
  readonly name: string;
  readonly version: string;
  readonly chainId: number;
  readonly verifyingContract: Address;
}

/**
 * The chain reads the check makes: the rail's facilitator signer, which keeps the token's code once
 * read (`knownContracts`), so the asset check costs no round trip after the first.
 */
export interface MemberCheckChain {
  getCode(args: { address: Address }): Promise<Hex | undefined>;
  /** An eth_call at the latest block; rejects when the call reverts. */
  call(args: { to: Address; data: Hex }): Promise<unknown>;
  readContract(args: {
    address: Address;
    abi: readonly unknown[];
    functionName: string;
    args?: readonly unknown[];
  }): Promise<unknown>;
}

export class MemberCheck {
  /** Whether each token signs under the domain offered for it, by asset, name and version; read once. */
  private readonly signsUnderOffered = new Map<string, Promise<boolean>>();

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
      const domain = this.offline(payload, requirements, authorization);
      if (domain === null) return false;
      const asset = domain.verifyingContract;
      // The reads at once (one JSON-RPC batch where the chain client batches): the simulation's
      // answer only counts when the payer holds no code and the asset does.
      const [payerCode, assetCode, simulated, tokenChecksSignature] = await Promise.all([
        // Lower case, not checksummed: a checksum is a keccak per address per payment. A malformed
        // address fails the read or the encoding, and the facilitator decides.
        this.chain.getCode({ address: authorization.from.toLowerCase() as Address }),
        this.chain.getCode({ address: asset }),
        this.simulates(asset, authorization),
        this.tokenSignsUnder(domain),
      ]);
      if (payerCode !== undefined && payerCode !== '0x') return false; // a smart wallet: ERC-1271
      if (assetCode === undefined || assetCode === '0x') return false;
      if (!simulated) return false;
      // The token accepted the signature under the offered domain: it recovers to `from` there.
      return tokenChecksSignature || this.recoversToPayer(domain, authorization);
    } catch {
      return false; // anything unreadable: the facilitator decides
    }
  }

  /**
   * The checks that need no chain, in the facilitator's order, less the signature's (see
   * passes); the EIP-712 domain the requirements offer, or null when one fails.
   */
  private offline(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    authorization: GroupAuthorization,
  ): OfferedDomain | null {
    const { name, version } = (requirements.extra ?? {}) as { name?: unknown; version?: unknown };
    // The facilitator's dispatch: x402 v2, and an EIP-3009 payload (not Permit2).
    if (payload.x402Version !== 2 || 'permit2Authorization' in payload.payload) return null;
    if (payload.accepted.scheme !== 'exact' || requirements.scheme !== 'exact') return null;
    if (typeof name !== 'string' || typeof version !== 'string' || !name || !version) return null;
    if (payload.accepted.network !== requirements.network) return null;
    if (requirements.network !== `eip155:${this.chainId}`) return null;
    if (authorization.to.toLowerCase() !== requirements.payTo.toLowerCase()) return null;
    if (!this.inWindow(authorization)) return null;
    if (authorization.value !== BigInt(requirements.amount)) return null;
    return {
      name,
      version,
      chainId: this.chainId,
      verifyingContract: getAddress(requirements.asset),
    };
  }

  /**
   * The check's only bounds that move with the clock: validBefore at least 6 s ahead, validAfter
   * not in the future. A check made a moment ago still stands when these hold now.
   */
  inWindow(authorization: GroupAuthorization): boolean {
    const now = this.nowS();
    return (
      authorization.validBefore >= now + VALID_BEFORE_MARGIN_S && authorization.validAfter <= now
    );
  }

  /** The facilitator's own signature check: the authorization's signer, recovered here, is `from`. */
  private recoversToPayer(domain: OfferedDomain, authorization: GroupAuthorization): boolean {
    const digest = hashTypedDataFast({
      types: authorizationTypes,
      primaryType: 'TransferWithAuthorization',
      domain,
      message: authorization,
    });
    const signer = recoverSigner(digest, authorization.signature);
    return signer !== null && signer === authorization.from.toLowerCase();
  }

  /**
   * Whether the token's DOMAIN_SEPARATOR is the offered domain's: read once per token and domain
   * (a failed read is asked again next time, and counts as no).
   */
  private tokenSignsUnder(domain: OfferedDomain): Promise<boolean> {
    const key = `${domain.verifyingContract.toLowerCase()}\u0000${domain.name}\u0000${domain.version}`;
    let known = this.signsUnderOffered.get(key);
    if (!known) {
      known = (
        this.chain.readContract({
          address: domain.verifyingContract,
          abi: DOMAIN_SEPARATOR_ABI,
          functionName: 'DOMAIN_SEPARATOR',
        }) as Promise<Hex>
      ).then((separator) => separator.toLowerCase() === domainSeparator({ domain }));
      this.signsUnderOffered.set(key, known);
      known.catch(() => this.signsUnderOffered.delete(key));
    }
    return known.catch(() => false);
  }

  /** The token's transferWithAuthorization, called (not sent) as the facilitator simulates it. */
  private async simulates(asset: Address, authorization: GroupAuthorization): Promise<boolean> {
    try {
      await this.chain.call({ to: asset, data: transferWithAuthorizationCalldata(authorization) });
      return true;
    } catch {
      return false;
    }
  }
}
