// EIP-1193 sign-in: the injected wallet gives the address, signs the SIWE message (personal_sign)
// for the owner session and, for a signed approval, the escalated intent's EIP-712 typed data.
import { getAddress } from 'viem';
import { signInMessage, type SignInNonceFields } from '../../core/canon/sign-in-message';
import { postJson, type Session } from './api';

interface Eip1193 {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

function provider(): Eip1193 {
  const injected = (window as unknown as { ethereum?: Eip1193 }).ethereum;
  if (!injected)
    throw new Error(
      'No wallet found in this browser. Install or unlock an Ethereum wallet and reload.',
    );
  return injected;
}

export function hasWallet(): boolean {
  return (window as unknown as { ethereum?: unknown }).ethereum !== undefined;
}

async function account(): Promise<`0x${string}`> {
  const accounts = (await provider().request({ method: 'eth_requestAccounts' })) as string[];
  if (!accounts[0]) throw new Error('The wallet shared no account.');
  return getAddress(accounts[0]);
}

function toHex(text: string): string {
  return `0x${Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export async function signIn(): Promise<Session> {
  const address = await account();
  const nonce = await postJson<SignInNonceFields>('/consumer/auth/nonce', {});
  const message = signInMessage(address, nonce);
  const signature = (await provider().request({
    method: 'personal_sign',
    params: [toHex(message), address],
  })) as string;
  const verified = await postJson<{ accessToken: string; address: string; expiresAt: string }>(
    '/owner/auth/verify',
    { message, signature },
  );
  return {
    token: verified.accessToken,
    address: verified.address,
    expiresAtMs: Date.parse(verified.expiresAt),
  };
}

export async function signTypedData(address: string, typedData: unknown): Promise<string> {
  return (await provider().request({
    method: 'eth_signTypedData_v4',
    params: [getAddress(address), JSON.stringify(typedData)],
  })) as string;
}
