// The ledger's vocabulary: account and group kinds, and the identifiers built from them
// (asset `chain|token`, account `KIND:chain|token:ref`). Pure functions; the database enforces
// the same shapes, these only let callers build them without string surgery.
import { AppError } from '../../../core/errors';

export const ACCOUNT_KINDS = [
  'TREASURY',
  'USER_OBLIGATION',
  'PROVIDER_SETTLEMENT',
  'FEE_REVENUE',
  'SPREAD_REVENUE',
  'COST_OF_GOODS',
  'REFUND_PAYABLE',
  'CROSS_RAIL_CLEARING',
  'SUSPENSE',
] as const;
export type AccountKind = (typeof ACCOUNT_KINDS)[number];

export const GROUP_KINDS = [
  'SERVICE_FEE',
  'FUNDING',
  'SETTLEMENT',
  'RECOGNITION',
  'REFUND',
  'SUSPENSE_MOVE',
  'REVERSAL',
  'TREASURY_TRANSFER',
] as const;
export type GroupKind = (typeof GROUP_KINDS)[number];

/** The treasury account on each rail that holds the pre-funded operational float. */
export const FLOAT_REF = 'float';
/** The treasury account of what the fee receiver's address holds: x402 call fees arrive there, not in the float. */
export const FEE_RECEIVER_REF = 'fee-receiver';

const CAIP2_CHAIN = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/;
const EVM_TOKEN = /^0x[0-9a-fA-F]{40}$/;
const OTHER_TOKEN = /^[-.%a-zA-Z0-9]{1,128}$/;
const ACCOUNT_REF = /^[A-Za-z0-9._-]{1,128}$/;

function invalid(message: string): AppError {
  return new AppError('LEDGER_GROUP_INVALID', message);
}

/** `chain|token`; EVM token addresses are lowercased so one token has one spelling. */
export function assetId(chain: string, token: string): string {
  if (!CAIP2_CHAIN.test(chain))
    throw invalid(`chain ${chain} is not a CAIP-2 id such as eip155:196`);
  if (chain.startsWith('eip155:')) {
    if (!EVM_TOKEN.test(token)) throw invalid(`token ${token} is not a 0x-address`);
    return `${chain}|${token.toLowerCase()}`;
  }
  if (!OTHER_TOKEN.test(token)) throw invalid(`token ${token} is not a CAIP-19 asset reference`);
  return `${chain}|${token}`;
}

export function parseAssetId(asset: string): { chain: string; token: string } {
  const bar = asset.indexOf('|');
  if (bar <= 0) throw invalid(`asset ${asset} is not chain|token`);
  const chain = asset.slice(0, bar);
  const token = asset.slice(bar + 1);
  if (assetId(chain, token) !== asset) throw invalid(`asset ${asset} is not in canonical form`);
  return { chain, token };
}

/** How a rail names itself inside an account ref (refs hold no colon): eip155:8453 -> eip155-8453. */
export function railRef(chain: string): string {
  return chain.replace(':', '-');
}

export function accountId(kind: AccountKind, asset: string, ref: string): string {
  if (!ACCOUNT_KINDS.includes(kind)) throw invalid(`unknown account kind ${kind}`);
  parseAssetId(asset);
  if (!ACCOUNT_REF.test(ref)) throw invalid(`account ref ${ref} is not 1 to 128 of [A-Za-z0-9._-]`);
  return `${kind}:${asset}:${ref}`;
}

export interface ParsedAccount {
  readonly kind: AccountKind;
  readonly asset: string;
  readonly ref: string;
}

/** Splits `KIND:chain|token:ref`; a CAIP-2 chain holds exactly one colon. */
export function parseAccountId(account: string): ParsedAccount {
  const parts = account.split(':');
  if (parts.length !== 4) throw invalid(`account ${account} is not KIND:chain|token:ref`);
  const [kind, namespace, rest, ref] = parts;
  const parsed = { kind: kind as AccountKind, asset: `${namespace}:${rest}`, ref };
  if (accountId(parsed.kind, parsed.asset, parsed.ref) !== account)
    throw invalid(`account ${account} is not canonical`);
  return parsed;
}

export function treasuryAccount(asset: string): string {
  return accountId('TREASURY', asset, FLOAT_REF);
}
