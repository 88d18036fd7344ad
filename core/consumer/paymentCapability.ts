// The PaymentCapability of DECISIONS "Consumer intents": one intent, one asset, one amount (the
// authorised provider cost: an authorization moves exactly that, never less and never more, so
// what the chain shows is what the quote said), one recipient allowlist, 5 minutes. authorizeTypedData is the pure check the capability-backed signer
// runs before it signs: only an EIP-3009 TransferWithAuthorization inside the capability passes.
// Single use is not decided here: the database redeems a capability once, under a row lock.
import { isCapabilityId, isConsumerIntentId } from '../canon/id-shapes';
import { UINT256_MAX } from '../money/amount';

export type HexAddress = `0x${string}`;

/** A capability lives 5 minutes from minting. */
export const CAPABILITY_TTL_SECONDS = 300;

export interface PaymentCapability {
  readonly capabilityId: string;
  readonly intentId: string;
  /** CAIP-2 network of the settlement rail, e.g. `eip155:8453`; its id is the EIP-712 chainId. */
  readonly network: string;
  /** The EIP-3009 token and its EIP-712 domain name and version (as the merchant's 402 `extra` gives them). */
  readonly asset: { readonly token: HexAddress; readonly name: string; readonly version: string };
  /** The settlement treasury: the only `from` the signer may authorise. */
  readonly payer: HexAddress;
  /**
   * The authorised provider cost in atomic units: an authorization moves exactly this (DECISIONS
   * "exact amount"); a merchant asking for anything else is refused before a signature exists.
   */
  readonly ceilingAtomic: bigint;
  /** The quote's payTo (one address today); `to` must be one of them. */
  readonly recipients: readonly HexAddress[];
  readonly expiresAt: Date;
  /** Set by the database's one-time redeem; signing needs a redeemed capability. */
  readonly redeemedAt: Date | null;
}

export interface MintCapabilityInput {
  readonly capabilityId: string;
  readonly intentId: string;
  readonly network: string;
  readonly asset: PaymentCapability['asset'];
  readonly payer: HexAddress;
  readonly ceilingAtomic: bigint;
  readonly payTo: HexAddress;
  readonly now: Date;
}

/** A fresh, unredeemed capability for one intent: allowlist = the quote's payTo, 5-minute TTL. */
export function mintPaymentCapability(input: MintCapabilityInput): PaymentCapability {
  const capability: PaymentCapability = {
    capabilityId: input.capabilityId,
    intentId: input.intentId,
    network: input.network,
    asset: { token: input.asset.token, name: input.asset.name, version: input.asset.version },
    payer: input.payer,
    ceilingAtomic: input.ceilingAtomic,
    recipients: [input.payTo],
    expiresAt: new Date(input.now.getTime() + CAPABILITY_TTL_SECONDS * 1000),
    redeemedAt: null,
  };
  const problem = capabilityProblem(capability);
  if (problem !== null) throw new RangeError(`cannot mint a payment capability: ${problem}`);
  return capability;
}

export type CapabilityRefusalReason =
  | 'CAPABILITY_MALFORMED'
  | 'CAPABILITY_NOT_REDEEMED'
  | 'CAPABILITY_EXPIRED'
  | 'TYPED_DATA_MALFORMED'
  | 'PRIMARY_TYPE_NOT_ALLOWED'
  | 'TYPES_NOT_EIP3009'
  | 'DOMAIN_MALFORMED'
  | 'DOMAIN_NAME_MISMATCH'
  | 'DOMAIN_VERSION_MISMATCH'
  | 'CHAIN_ID_MISMATCH'
  | 'TOKEN_MISMATCH'
  | 'MESSAGE_MALFORMED'
  | 'PAYER_MISMATCH'
  | 'RECIPIENT_NOT_ALLOWED'
  | 'VALUE_ZERO'
  | 'VALUE_ABOVE_CEILING'
  | 'VALUE_NOT_EXACT'
  | 'NOT_YET_VALID'
  | 'VALID_BEFORE_PASSED'
  | 'VALID_BEFORE_AFTER_EXPIRY';

/** The EIP-3009 message as x402's exact client builds it (uint256 fields as bigint). */
export interface TransferAuthorization {
  readonly from: HexAddress;
  readonly to: HexAddress;
  readonly value: bigint;
  readonly validAfter: bigint;
  readonly validBefore: bigint;
  readonly nonce: `0x${string}`;
}

/** Exactly what was checked, rebuilt from values read once: the signer signs this, not its input. */
export interface CheckedTypedData {
  readonly domain: {
    readonly name: string;
    readonly version: string;
    readonly chainId: number;
    readonly verifyingContract: HexAddress;
  };
  readonly types: { readonly TransferWithAuthorization: typeof TRANSFER_WITH_AUTHORIZATION };
  readonly primaryType: 'TransferWithAuthorization';
  readonly message: TransferAuthorization;
}

export type AuthorizationCheck =
  | { readonly ok: true; readonly typedData: CheckedTypedData }
  | { readonly ok: false; readonly reason: CapabilityRefusalReason; readonly detail: string };

/** EIP-3009's type, field for field and in order; anything else is another message. */
const TRANSFER_WITH_AUTHORIZATION = Object.freeze([
  Object.freeze({ name: 'from', type: 'address' }),
  Object.freeze({ name: 'to', type: 'address' }),
  Object.freeze({ name: 'value', type: 'uint256' }),
  Object.freeze({ name: 'validAfter', type: 'uint256' }),
  Object.freeze({ name: 'validBefore', type: 'uint256' }),
  Object.freeze({ name: 'nonce', type: 'bytes32' }),
] as const);

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const NETWORK = /^eip155:([1-9][0-9]{0,14})$/;

type Refusal = Extract<AuthorizationCheck, { ok: false }>;
const refuse = (reason: CapabilityRefusalReason, detail: string): Refusal => ({
  ok: false,
  reason,
  detail,
});

/**
 * Accepts only `{domain, types, primaryType, message}` for TransferWithAuthorization on the
 * capability's chain and token (domain name and version included), from the settlement treasury,
 * to an allowlisted recipient, for exactly the capability's amount (the ceiling), already valid at `now`, and dead by
 * the capability's expiry. The capability itself must be well formed, redeemed and unexpired.
 * Every refusal names its reason; nothing is normalised or repaired.
 */
export function authorizeTypedData(
  capability: PaymentCapability,
  typedData: unknown,
  now: Date,
): AuthorizationCheck {
  const nowMs = now instanceof Date ? now.getTime() : Number.NaN;
  if (!Number.isFinite(nowMs)) throw new RangeError('now must be a valid Date');
  const problem = capabilityProblem(capability);
  if (problem !== null) return refuse('CAPABILITY_MALFORMED', problem);
  if (capability.redeemedAt === null)
    return refuse('CAPABILITY_NOT_REDEEMED', 'redeem the capability before signing');
  if (nowMs >= capability.expiresAt.getTime())
    return refuse('CAPABILITY_EXPIRED', `expired at ${capability.expiresAt.toISOString()}`);
  if (!hasExactKeys(typedData, ['domain', 'types', 'primaryType', 'message'])) {
    return refuse(
      'TYPED_DATA_MALFORMED',
      'typed data is exactly {domain, types, primaryType, message}',
    );
  }
  // Each part is copied once and only the copies are checked and returned, so a getter cannot
  // show the check one value and the signer another.
  const { domain, types, primaryType, message } = typedData;
  if (primaryType !== 'TransferWithAuthorization')
    return refuse('PRIMARY_TYPE_NOT_ALLOWED', String(primaryType));
  if (!isTransferWithAuthorizationTypes(types))
    return refuse('TYPES_NOT_EIP3009', 'types are exactly EIP-3009 TransferWithAuthorization');
  if (!hasExactKeys(domain, ['name', 'version', 'chainId', 'verifyingContract'])) {
    return refuse(
      'DOMAIN_MALFORMED',
      'domain is exactly {name, version, chainId, verifyingContract}',
    );
  }
  const domainRefusal = checkDomain(capability, { ...domain });
  if (domainRefusal !== null) return domainRefusal;
  if (!hasExactKeys(message, ['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce'])) {
    return refuse(
      'MESSAGE_MALFORMED',
      'message is exactly {from, to, value, validAfter, validBefore, nonce}',
    );
  }
  const authorization = { ...message };
  if (!isTransferAuthorization(authorization))
    return refuse('MESSAGE_MALFORMED', 'message fields have the EIP-3009 types');
  const refusal = checkMessage(capability, authorization, BigInt(Math.floor(nowMs / 1000)));
  if (refusal !== null) return refusal;
  return { ok: true, typedData: signableTypedData(capability, authorization) };
}

function signableTypedData(
  capability: PaymentCapability,
  authorization: TransferAuthorization,
): CheckedTypedData {
  const { name, version, token } = capability.asset;
  return Object.freeze({
    domain: Object.freeze({
      name,
      version,
      chainId: Number(chainIdOf(capability.network)),
      verifyingContract: token,
    }),
    types: Object.freeze({ TransferWithAuthorization: TRANSFER_WITH_AUTHORIZATION }),
    primaryType: 'TransferWithAuthorization',
    message: Object.freeze(authorization),
  });
}

function checkDomain(
  capability: PaymentCapability,
  domain: Record<'name' | 'version' | 'chainId' | 'verifyingContract', unknown>,
): Refusal | null {
  if (domain.name !== capability.asset.name)
    return refuse('DOMAIN_NAME_MISMATCH', `expected ${capability.asset.name}`);
  if (domain.version !== capability.asset.version)
    return refuse('DOMAIN_VERSION_MISMATCH', `expected ${capability.asset.version}`);
  const chainId = chainIdOf(capability.network);
  const given = domain.chainId;
  const matches =
    (typeof given === 'number' && Number.isSafeInteger(given) && BigInt(given) === chainId) ||
    given === chainId;
  if (!matches) return refuse('CHAIN_ID_MISMATCH', `expected chain ${chainId}`);
  if (!sameAddress(domain.verifyingContract, capability.asset.token))
    return refuse('TOKEN_MISMATCH', `expected ${capability.asset.token}`);
  return null;
}

function checkMessage(
  capability: PaymentCapability,
  message: TransferAuthorization,
  nowSeconds: bigint,
): Refusal | null {
  if (!sameAddress(message.from, capability.payer))
    return refuse('PAYER_MISMATCH', 'from must be the settlement treasury');
  if (!capability.recipients.some((recipient) => sameAddress(message.to, recipient))) {
    return refuse('RECIPIENT_NOT_ALLOWED', `${message.to} is not on the capability's allowlist`);
  }
  if (message.value === 0n) return refuse('VALUE_ZERO', 'an authorization moves at least one unit');
  if (message.value > capability.ceilingAtomic)
    return refuse('VALUE_ABOVE_CEILING', `ceiling ${capability.ceilingAtomic}`);
  if (message.value !== capability.ceilingAtomic)
    return refuse(
      'VALUE_NOT_EXACT',
      `${message.value} is not the authorised amount ${capability.ceilingAtomic}`,
    );
  if (message.validAfter > nowSeconds)
    return refuse('NOT_YET_VALID', `validAfter ${message.validAfter} is after now (${nowSeconds})`);
  if (message.validBefore <= nowSeconds)
    return refuse(
      'VALID_BEFORE_PASSED',
      `validBefore ${message.validBefore} is not after now (${nowSeconds})`,
    );
  const expirySeconds = BigInt(Math.floor(capability.expiresAt.getTime() / 1000));
  if (message.validBefore > expirySeconds) {
    return refuse(
      'VALID_BEFORE_AFTER_EXPIRY',
      `validBefore ${message.validBefore} is after the capability's expiry (${expirySeconds})`,
    );
  }
  return null;
}

/** Null when well formed, else what is wrong (for the refusal's detail). */
export function capabilityProblem(capability: PaymentCapability): string | null {
  if (typeof capability !== 'object' || capability === null) return 'not an object';
  if (!isCapabilityId(capability.capabilityId)) return 'capabilityId is not cap_ + 24 hex';
  if (!isConsumerIntentId(capability.intentId)) return 'intentId is not ci_ + 24 hex';
  if (typeof capability.network !== 'string' || !NETWORK.test(capability.network))
    return 'network is not eip155:<chain id>';
  const asset = capability.asset as Partial<PaymentCapability['asset']> | null;
  if (asset === null || typeof asset !== 'object' || !isAddress(asset.token))
    return 'asset.token is not an address';
  if (!isNonEmptyString(asset.name) || !isNonEmptyString(asset.version))
    return 'asset name and version are required';
  if (!isAddress(capability.payer)) return 'payer is not an address';
  const ceiling = capability.ceilingAtomic;
  if (typeof ceiling !== 'bigint' || ceiling <= 0n || ceiling > UINT256_MAX)
    return 'ceilingAtomic is not 1..uint256 max';
  const recipients = capability.recipients;
  if (!Array.isArray(recipients) || recipients.length === 0 || !recipients.every(isAddress))
    return 'recipients is not a non-empty address list';
  if (!isValidDate(capability.expiresAt)) return 'expiresAt is not a valid Date';
  if (capability.redeemedAt !== null && !isValidDate(capability.redeemedAt))
    return 'redeemedAt is neither null nor a valid Date';
  return null;
}

function isTransferWithAuthorizationTypes(types: unknown): boolean {
  if (!hasExactKeys(types, ['TransferWithAuthorization'])) return false;
  const fields = types.TransferWithAuthorization;
  return (
    Array.isArray(fields) &&
    fields.length === TRANSFER_WITH_AUTHORIZATION.length &&
    fields.every(
      (field, i) =>
        hasExactKeys(field, ['name', 'type']) &&
        field.name === TRANSFER_WITH_AUTHORIZATION[i].name &&
        field.type === TRANSFER_WITH_AUTHORIZATION[i].type,
    )
  );
}

function isTransferAuthorization(
  message: Record<keyof TransferAuthorization, unknown>,
): message is TransferAuthorization {
  return (
    isAddress(message.from) &&
    isAddress(message.to) &&
    isUint256(message.value) &&
    isUint256(message.validAfter) &&
    isUint256(message.validBefore) &&
    typeof message.nonce === 'string' &&
    BYTES32.test(message.nonce)
  );
}

/** A plain object whose own enumerable keys are exactly `keys` (no more, no fewer). */
function hasExactKeys<K extends string>(
  value: unknown,
  keys: readonly K[],
): value is Record<K, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  const own = Reflect.ownKeys(value);
  return (
    own.length === keys.length &&
    keys.every((key) => Object.prototype.propertyIsEnumerable.call(value, key))
  );
}

function chainIdOf(network: string): bigint {
  return BigInt(NETWORK.exec(network)![1]);
}

const isAddress = (value: unknown): value is HexAddress =>
  typeof value === 'string' && ADDRESS.test(value);
const sameAddress = (a: unknown, b: string): boolean =>
  isAddress(a) && a.toLowerCase() === b.toLowerCase();
const isUint256 = (value: unknown): value is bigint =>
  typeof value === 'bigint' && value >= 0n && value <= UINT256_MAX;
const isNonEmptyString = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0;
const isValidDate = (value: unknown): value is Date =>
  value instanceof Date && Number.isFinite(value.getTime());
