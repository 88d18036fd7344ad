// Treasury drift: reads each rail's on-chain float (ERC-20 balanceOf of the treasury address at
// one block) and records it next to the ledger's TREASURY balance of that asset. It reports the
// difference and never corrects it: a drift is a question for an operator, not a posting.
import { type Address, erc20Abi, getAddress } from 'viem';
import {
  type ClientOptions,
  caip2Of,
  createChainPublicClient,
} from '../../../platform/chain/clients';
import { ChainIdMismatchError } from '../../../platform/chain/errors';
import type { Db } from '../../../platform/db';
import { assetId } from '../accounts/names';
import { ledgerErrorFrom } from '../sql';

export interface TreasuryRail {
  readonly rpcUrl: string;
  readonly chainId: number;
  /** The float's token contract on that chain. */
  readonly token: Address;
  /** The service's treasury address holding the float. */
  readonly treasury: Address;
}

export interface TreasurySnapshot {
  readonly asset: string;
  readonly treasuryAddress: string;
  readonly onchainBalanceAtomic: bigint;
  readonly ledgerBalanceAtomic: bigint;
  /** onchain - ledger: positive means more on chain than the ledger knows of. */
  readonly driftAtomic: bigint;
  readonly blockNumber: bigint;
  readonly takenAt: Date;
}

export interface OnchainFloat {
  readonly balanceAtomic: bigint;
  readonly blockNumber: bigint;
}

/** balanceOf at one pinned block, after checking the RPC serves the chain the rail names. */
export async function readOnchainFloat(
  rail: TreasuryRail,
  options: ClientOptions = {},
): Promise<OnchainFloat> {
  const client = createChainPublicClient({ chainId: rail.chainId, rpcUrl: rail.rpcUrl }, options);
  const actualChainId = await client.getChainId();
  if (actualChainId !== rail.chainId) {
    throw new ChainIdMismatchError({
      rpcUrl: rail.rpcUrl,
      expectedChainId: rail.chainId,
      actualChainId,
    });
  }
  const blockNumber = await client.getBlockNumber();
  const balanceAtomic = await client.readContract({
    address: getAddress(rail.token),
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [getAddress(rail.treasury)],
    blockNumber,
  });
  return { balanceAtomic, blockNumber };
}

/** Reads the rail's float and stores it with the ledger's TREASURY balance of the same asset. */
export async function recordTreasurySnapshot(
  pool: Db,
  rail: TreasuryRail,
  options: ClientOptions = {},
): Promise<TreasurySnapshot> {
  const onchain = await readOnchainFloat(rail, options);
  const asset = assetId(caip2Of(rail.chainId), rail.token);
  try {
    const result = await pool.query<{
      treasury_address: string;
      onchain_balance: string;
      ledger_balance: string;
      drift: string;
      block_number: string;
      taken_at: Date;
    }>(
      `SELECT treasury_address, onchain_balance::text, ledger_balance::text, drift::text, block_number::text, taken_at
         FROM ledger.record_treasury_snapshot($1, $2, $3, $4)`,
      [asset, rail.treasury, onchain.balanceAtomic.toString(), onchain.blockNumber.toString()],
    );
    const row = result.rows[0];
    return {
      asset,
      treasuryAddress: row.treasury_address,
      onchainBalanceAtomic: BigInt(row.onchain_balance),
      ledgerBalanceAtomic: BigInt(row.ledger_balance),
      driftAtomic: BigInt(row.drift),
      blockNumber: BigInt(row.block_number),
      takenAt: row.taken_at,
    };
  } catch (error) {
    throw ledgerErrorFrom(error) ?? error;
  }
}

/** One snapshot per rail, read in parallel; any rail that fails fails the whole call. */
export function recordTreasurySnapshots(
  pool: Db,
  rails: readonly TreasuryRail[],
  options: ClientOptions = {},
): Promise<TreasurySnapshot[]> {
  return Promise.all(rails.map((rail) => recordTreasurySnapshot(pool, rail, options)));
}
