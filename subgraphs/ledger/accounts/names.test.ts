// Identifier shapes: assets are chain|token with one spelling per EVM token, accounts are
// KIND:chain|token:ref and parse back into exactly their parts.
import { AppError } from '../../../core/errors';
import {
  accountId,
  assetId,
  parseAccountId,
  parseAssetId,
  railRef,
  treasuryAccount,
} from './names';

const USDT0 = assetId('eip155:196', '0x779DED0C9E1022225F8E0630B35A9B54BE713736');

it('lowercases EVM token addresses so one token has one asset id', () => {
  expect(USDT0).toBe('eip155:196|0x779ded0c9e1022225f8e0630b35a9b54be713736');
  expect(parseAssetId(USDT0)).toEqual({
    chain: 'eip155:196',
    token: '0x779ded0c9e1022225f8e0630b35a9b54be713736',
  });
});

it('builds and parses account ids', () => {
  const id = accountId('USER_OBLIGATION', USDT0, '7602');
  expect(id).toBe(`USER_OBLIGATION:${USDT0}:7602`);
  expect(parseAccountId(id)).toEqual({ kind: 'USER_OBLIGATION', asset: USDT0, ref: '7602' });
  expect(treasuryAccount(USDT0)).toBe(`TREASURY:${USDT0}:float`);
  expect(accountId('CROSS_RAIL_CLEARING', USDT0, railRef('eip155:8453'))).toBe(
    `CROSS_RAIL_CLEARING:${USDT0}:eip155-8453`,
  );
});

it.each([
  ['an unknown kind', () => accountId('EQUITY' as never, USDT0, 'x')],
  ['a ref with a colon', () => accountId('SUSPENSE', USDT0, 'a:b')],
  ['an empty ref', () => accountId('SUSPENSE', USDT0, '')],
  [
    'a chain that is not CAIP-2',
    () => assetId('196', '0x779ded0c9e1022225f8e0630b35a9b54be713736'),
  ],
  ['an EVM token that is not an address', () => assetId('eip155:196', 'USDT0')],
  [
    'an asset in another spelling',
    () => parseAssetId('eip155:196|0x779DED0C9E1022225F8E0630B35A9B54BE713736'),
  ],
  ['an account with a missing part', () => parseAccountId(`TREASURY:${USDT0}`)],
])('refuses %s with LEDGER_GROUP_INVALID', (_case, build) => {
  expect(build).toThrow(AppError);
  expect(build).toThrow(expect.objectContaining({ code: 'LEDGER_GROUP_INVALID' }));
});
