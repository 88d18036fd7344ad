// The sign-in message read back with viem's EIP-4361 parser: every field of the nonce answer lands
// where the service checks it, a policy becomes the one resource, and overrides win.
import { parseSiweMessage } from 'viem/siwe';
import { signInMessage, type SignInNonceFields } from './sign-in-message';

const ADDRESS = '0x1111111111111111111111111111111111111111';
const NONCE: SignInNonceFields = {
  nonce: '0123456789abcdef0123456789abcdef',
  issuedAt: '2026-11-22T09:00:00.000Z',
  domain: '127.0.0.1:4000',
  uri: 'http://127.0.0.1:4000',
  chainId: 196,
  statement: 'Sign in to the Agent Spend-Control Service.',
  resourceFormat: 'svc:policy:<policyId>',
};

test('an owner message carries the nonce answer and names no resource', () => {
  const parsed = parseSiweMessage(signInMessage(ADDRESS, NONCE));
  expect(parsed).toEqual({
    address: ADDRESS,
    domain: NONCE.domain,
    uri: NONCE.uri,
    chainId: NONCE.chainId,
    nonce: NONCE.nonce,
    version: '1',
    statement: NONCE.statement,
    issuedAt: new Date(NONCE.issuedAt),
  });
});

test('a consumer message names its policy as the one resource', () => {
  const parsed = parseSiweMessage(signInMessage(ADDRESS, NONCE, { policyId: '42' }));
  expect(parsed.resources).toEqual(['svc:policy:42']);
});

test('issuedAt and overrides are written over the nonce answer', () => {
  const issuedAt = new Date('2026-11-22T10:00:00.000Z');
  const parsed = parseSiweMessage(
    signInMessage(ADDRESS, NONCE, { policyId: '42', issuedAt, overrides: { chainId: 1 } }),
  );
  expect(parsed.issuedAt).toEqual(issuedAt);
  expect(parsed.chainId).toBe(1);
});
