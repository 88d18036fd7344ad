// Sign-in as a wallet does it, for the demo, end-to-end tests and benches: ask the service for a
// nonce, write the EIP-4361 message (core/canon/sign-in-message, overridable field by field, so
// tests can try every refusal), sign it with a real key (personal_sign) and post it to a verify route.
import type { LocalAccount } from 'viem';
import {
  signInMessage,
  type SignInMessageOptions,
  type SignInNonceFields,
} from '../../core/canon/sign-in-message';

export interface IssuedNonce extends SignInNonceFields {
  expiresAt: string;
  version: string;
}

export interface SignedMessage {
  message: string;
  signature: `0x${string}`;
}

export async function requestNonce(url: string): Promise<IssuedNonce> {
  const response = await fetch(`${url}/consumer/auth/nonce`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  if (response.status !== 200)
    throw new Error(`nonce request answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as IssuedNonce;
}

/** The message the service asks for (a policy resource when `policyId` is given), with overrides applied. */
export async function signSignInMessage(
  account: LocalAccount,
  nonce: IssuedNonce,
  options: SignInMessageOptions = {},
): Promise<SignedMessage> {
  const message = signInMessage(account.address, nonce, options);
  return { message, signature: await account.signMessage({ message }) };
}

/** The answer's JSON as its callers read it (tests inspect refusals field by field). */
type SignInAnswer = { status: number; body: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function postSignIn(
  url: string,
  route: '/consumer/auth/verify' | '/owner/auth/verify',
  signed: SignedMessage,
): Promise<SignInAnswer> {
  const response = await fetch(`${url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signed),
  });
  return { status: response.status, body: await response.json() };
}

/** Signs in and returns the bearer; throws with the answer when sign-in is refused. */
export async function signIn(
  url: string,
  account: LocalAccount,
  policyId?: string,
): Promise<string> {
  const signed = await signSignInMessage(account, await requestNonce(url), { policyId });
  const answer = await postSignIn(
    url,
    policyId === undefined ? '/owner/auth/verify' : '/consumer/auth/verify',
    signed,
  );
  if (answer.status !== 200)
    throw new Error(`sign-in answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body.accessToken as string;
}
