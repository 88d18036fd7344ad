// The EIP-4361 (SIWE) message a wallet signs to sign in, written from the service's nonce answer
// (POST /consumer/auth/nonce) with viem's createSiweMessage: the one spelling the SDK, the
// dashboard and the devnet agents share. A consumer session names its policy as the one resource.
import type { Address } from 'viem';
import { createSiweMessage, type CreateSiweMessageParameters } from 'viem/siwe';

/** What the nonce answer says the message must carry (the answer has more fields). */
export interface SignInNonceFields {
  readonly nonce: string;
  readonly issuedAt: string;
  readonly domain: string;
  readonly uri: string;
  readonly chainId: number;
  readonly statement: string;
  /** The resource of a consumer session, with `<policyId>` to fill in. */
  readonly resourceFormat: string;
}

/** Fields written over the service's, so tests can try every refusal. */
export type SignInMessageOverrides = Partial<CreateSiweMessageParameters>;

export interface SignInMessageOptions {
  /** A consumer session for this policy; absent, an owner session (no resource). */
  readonly policyId?: string;
  /** Default: the nonce's own issuedAt. */
  readonly issuedAt?: Date;
  readonly overrides?: SignInMessageOverrides;
}

export function signInMessage(
  address: Address,
  nonce: SignInNonceFields,
  options: SignInMessageOptions = {},
): string {
  return createSiweMessage({
    address,
    domain: nonce.domain,
    uri: nonce.uri,
    chainId: nonce.chainId,
    nonce: nonce.nonce,
    version: '1',
    statement: nonce.statement,
    issuedAt: options.issuedAt ?? new Date(nonce.issuedAt),
    ...(options.policyId !== undefined
      ? { resources: [nonce.resourceFormat.replace('<policyId>', options.policyId)] }
      : {}),
    ...options.overrides,
  });
}
