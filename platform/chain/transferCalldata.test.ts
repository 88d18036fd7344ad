// transferWithAuthorizationCalldata against viem's encodeFunctionData on the x402 library's
// EIP-3009 ABI (what the member check's simulation encoded before), on random authorizations.
import { eip3009ABI } from '@x402/evm';
import fc from 'fast-check';
import {
  type Address,
  bytesToHex,
  encodeFunctionData,
  getAddress,
  type Hex,
  parseSignature,
} from 'viem';
import { transferWithAuthorizationCalldata } from './tokens';

const bytes = (length: number) =>
  fc.uint8Array({ minLength: length, maxLength: length }).map((value) => bytesToHex(value));
const uint256 = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n });
const signature = fc
  .tuple(bytes(32), bytes(32), fc.constantFrom(0, 1, 27, 28))
  .map(([r, s, v]) => `${r}${s.slice(2)}${v.toString(16).padStart(2, '0')}` as Hex);

test('encodes as viem does with the library ABI, whatever the case of the addresses', () => {
  fc.assert(
    fc.property(
      fc.record({
        from: bytes(20),
        to: bytes(20),
        value: uint256,
        validAfter: uint256,
        validBefore: uint256,
        nonce: bytes(32),
        signature,
      }),
      fc.boolean(),
      (authorization, checksummed) => {
        const { v, yParity, r, s } = parseSignature(authorization.signature);
        const expected = encodeFunctionData({
          abi: eip3009ABI,
          functionName: 'transferWithAuthorization',
          args: [
            getAddress(authorization.from),
            getAddress(authorization.to),
            authorization.value,
            authorization.validAfter,
            authorization.validBefore,
            authorization.nonce,
            Number(v ?? yParity),
            r,
            s,
          ],
        });
        const given = {
          ...authorization,
          from: (checksummed ? getAddress(authorization.from) : authorization.from) as Address,
          to: (checksummed ? getAddress(authorization.to) : authorization.to) as Address,
        };
        expect(transferWithAuthorizationCalldata(given)).toBe(expected);
      },
    ),
    { numRuns: 300 },
  );
});

test('refuses a signature whose last byte is no recovery id, as the simulation path did', () => {
  const authorization = {
    from: `0x${'11'.repeat(20)}` as Address,
    to: `0x${'22'.repeat(20)}` as Address,
    value: 1n,
    validAfter: 0n,
    validBefore: 1n,
    nonce: `0x${'33'.repeat(32)}` as Hex,
    signature: `0x${'44'.repeat(64)}05` as Hex,
  };
  expect(() => transferWithAuthorizationCalldata(authorization)).toThrow();
});
