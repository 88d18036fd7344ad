// Sign-in with Ethereum (EIP-4361), the policy subgraph's half: it issues nonces and verifies a
// signed message into claims {address, policyId|null, expiresAt}; the gateway turns the claims into
// a session bearer. Messages are parsed and validated with viem/siwe (the `siwe` package would pull
// in ethers); every rule below is checked here, explicitly, after the nonce has been used up.
import { type Address, getAddress, isAddress } from 'viem';
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe';
import { defaultRandomBytes } from '../../../core/canon/ids';
import { AppError } from '../../../core/errors';
import { settingsOf, type SubgraphContext } from '../../kit';
import { consumeSignInNonce, insertSignInNonce } from './writes';
import type { SignInSessionValue } from './schema';
import { isMessageSignedBy, isSignatureShape } from './signature';
import { readLatestPolicy } from '../policies/reads';

export const SIGN_IN_NONCE_BYTES = 16;
export const SIGN_IN_NONCE_TTL_MS = 10 * 60_000;
/** Sessions live 30 minutes (spec "Limits"); the gateway caps the bearer at the same lifetime. */
export const SESSION_TTL_MS = 30 * 60_000;
export const MAX_SIWE_MESSAGE_CHARS = 4096;
/** A message may be issued slightly "in the future" by a wallet whose clock runs ahead. */
export const MAX_ISSUED_AT_SKEW_MS = 5 * 60_000;
export const POLICY_RESOURCE_PREFIX = 'svc:policy:';
export const SIGN_IN_STATEMENT = 'Sign in to the Agent Spend-Control Service.';

const NONCE = /^[0-9a-f]{32}$/;
/** Canonical decimal uint256: no leading zeros, so one policy has one resource spelling. */
const POLICY_RESOURCE = /^svc:policy:(0|[1-9][0-9]{0,77})$/;

export interface SignInNonceView {
  nonce: string;
  issuedAt: Date;
  expiresAt: Date;
  domain: string;
  uri: string;
  chainId: number;
  version: '1';
  statement: string;
  resourceFormat: string;
}

export interface SignInClaimsView {
  address: string;
  session: SignInSessionValue;
  policyId: string | null;
  expiresAt: Date;
}

interface ServiceIdentity {
  domain: string;
  uri: string;
  chainId: number;
}

/** The domain a message must name is the host (and port, if any) of PUBLIC_URL. */
function serviceIdentity(ctx: SubgraphContext): ServiceIdentity {
  const settings = settingsOf(ctx);
  if (settings.publicUrl === null) {
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      'Sign-in is not configured on this instance (no public URL).',
    );
  }
  return {
    domain: new URL(settings.publicUrl).host,
    uri: settings.publicUrl,
    chainId: settings.primaryChainId,
  };
}

export async function issueSignInNonce(ctx: SubgraphContext): Promise<SignInNonceView> {
  const service = serviceIdentity(ctx);
  const nonce = Buffer.from(defaultRandomBytes(SIGN_IN_NONCE_BYTES)).toString('hex');
  const issuedAt = ctx.now();
  const expiresAt = new Date(issuedAt.getTime() + SIGN_IN_NONCE_TTL_MS);
  await insertSignInNonce(ctx.db, nonce, issuedAt, expiresAt);
  return {
    nonce,
    issuedAt,
    expiresAt,
    domain: service.domain,
    uri: service.uri,
    chainId: service.chainId,
    version: '1',
    statement: SIGN_IN_STATEMENT,
    resourceFormat: `${POLICY_RESOURCE_PREFIX}<policyId>`,
  };
}

function refuse(reason: string): never {
  throw new AppError(
    'SIWE_INVALID',
    `The sign-in message was refused: ${reason}. Request a new nonce and sign again.`,
  );
}

type ParsedMessage = ReturnType<typeof parseSiweMessage>;

function isValidDate(value: Date | undefined): value is Date {
  return value instanceof Date && !Number.isNaN(value.getTime());
}

/** Every rule of the message itself; the nonce is already used up when this runs. */
function checkMessage(parsed: ParsedMessage, service: ServiceIdentity, now: Date): Address {
  if (parsed.address === undefined || !isAddress(parsed.address, { strict: false }))
    refuse('it names no valid address');
  if (parsed.domain?.toLowerCase() !== service.domain.toLowerCase())
    refuse(`it must name the domain ${service.domain}`);
  if (parsed.chainId !== service.chainId) refuse(`it must name Chain ID ${service.chainId}`);
  if (parsed.version !== '1') refuse('its Version must be 1');
  if (parsed.uri === undefined) refuse('it has no URI');
  if (!isValidDate(parsed.issuedAt)) refuse('it has no valid Issued At');
  if (parsed.issuedAt.getTime() > now.getTime() + MAX_ISSUED_AT_SKEW_MS)
    refuse('it is issued in the future');
  if (
    parsed.expirationTime !== undefined &&
    !(isValidDate(parsed.expirationTime) && now < parsed.expirationTime)
  ) {
    refuse('it has expired');
  }
  if (
    parsed.notBefore !== undefined &&
    !(isValidDate(parsed.notBefore) && now >= parsed.notBefore)
  ) {
    refuse('it is not valid yet');
  }
  // viem's own EIP-4361 validation as well (nonce and address syntax, times), so nothing it rejects slips through.
  if (!validateSiweMessage({ message: parsed, time: now }))
    refuse('it is not a valid EIP-4361 message');
  return getAddress(parsed.address);
}

/** The policy a CONSUMER message names, or null for OWNER; refuses the wrong number of policy resources. */
function boundPolicy(parsed: ParsedMessage, session: SignInSessionValue): string | null {
  const policyResources = (parsed.resources ?? []).filter((resource) =>
    resource.startsWith(POLICY_RESOURCE_PREFIX),
  );
  if (session === 'OWNER') {
    if (policyResources.length > 0)
      refuse('an owner sign-in names no policy; use a consumer sign-in for one policy');
    return null;
  }
  if (policyResources.length === 0)
    refuse(`it must list the resource ${POLICY_RESOURCE_PREFIX}<policyId>`);
  if (policyResources.length > 1) refuse('it must list exactly one policy resource');
  const match = POLICY_RESOURCE.exec(policyResources[0]);
  if (match === null)
    refuse(`its policy resource must be ${POLICY_RESOURCE_PREFIX}<decimal policyId>`);
  return match[1];
}

/**
 * Verifies a signed SIWE message. Order matters: the nonce is consumed first (one conditional
 * UPDATE, committed), so every later failure still burns it and concurrent replays cannot both
 * pass; then the message rules, the signature, and for a consumer session the ownership.
 */
export async function verifySignIn(
  ctx: SubgraphContext,
  input: { message: string; signature: string; session: SignInSessionValue },
): Promise<SignInClaimsView> {
  const service = serviceIdentity(ctx);
  if (input.message.length > MAX_SIWE_MESSAGE_CHARS)
    refuse(`it is longer than ${MAX_SIWE_MESSAGE_CHARS} characters`);
  const parsed = parseSiweMessage(input.message);
  if (parsed.nonce === undefined) refuse('it is not an EIP-4361 message (no nonce found)');
  if (!NONCE.test(parsed.nonce) || !(await consumeSignInNonce(ctx.db, parsed.nonce, ctx.now()))) {
    throw new AppError('SIWE_NONCE_INVALID');
  }

  const now = ctx.now();
  const address = checkMessage(parsed, service, now);
  const policyId = boundPolicy(parsed, input.session);
  if (!isSignatureShape(input.signature)) refuse('the signature is not 0x-hex');
  let signed: boolean;
  try {
    signed = await isMessageSignedBy(ctx.chains, address, input.message, input.signature);
  } catch (error) {
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      'The chain needed to check a contract-wallet signature did not answer.',
      undefined,
      { cause: error },
    );
  }
  if (!signed) refuse(`the signature is not ${address}'s`);

  const owner = address.toLowerCase();
  if (policyId !== null && (await readLatestPolicy(ctx.db, policyId, owner)) === null) {
    throw new AppError(
      'NOT_POLICY_OWNER',
      `${owner} does not own policy ${policyId}; sign with the owner's wallet.`,
    );
  }
  return {
    address: owner,
    session: input.session,
    policyId,
    expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
  };
}
