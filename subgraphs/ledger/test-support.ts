// Test fixtures shared by the ledger's test files: the two rails of the service with stand-in
// token addresses, registered in a fresh test database. Not imported by production code.
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { createTestDatabase, type TestDatabase } from '../../platform/db/testDb';
import { assetId } from './accounts/names';
import { registerAsset } from './posting/writes';
import type { PaymentClaim } from './servicePayments/record';

export const FUNDING_CHAIN = 'eip155:196';
export const SETTLEMENT_CHAIN = 'eip155:8453';
export const USDT0 = assetId(FUNDING_CHAIN, '0x00000000000000000000000000000000000000c4');
export const USDC = assetId(SETTLEMENT_CHAIN, '0x0000000000000000000000000000000000002105');

export async function registerRails(pool: Pool): Promise<void> {
  await registerAsset(pool, {
    chain: FUNDING_CHAIN,
    token: USDT0.split('|')[1],
    symbol: 'USDT0',
    decimals: 6,
  });
  await registerAsset(pool, {
    chain: SETTLEMENT_CHAIN,
    token: USDC.split('|')[1],
    symbol: 'USDC',
    decimals: 6,
  });
}

/**
 * An x402 payment claim of 0.01 USDT0 for the ping service, by a fresh payer with a fresh nonce
 * (its authorization valid until 2033), with any field overridden.
 */
export function paymentClaimFor(overrides: Partial<PaymentClaim> = {}): PaymentClaim {
  return {
    network: FUNDING_CHAIN,
    asset: USDT0.split('|')[1]!,
    payer: `0x${randomBytes(20).toString('hex')}`,
    nonce: `0x${randomBytes(32).toString('hex')}`,
    payTo: `0x${'11'.repeat(20)}`,
    amountAtomic: 10_000n,
    validBefore: 2_000_000_000n,
    route: 'GET /ping_service',
    requestDigest: 'a'.repeat(64),
    ...overrides,
  };
}

/** A consumer intent id (`ci_` + 24 hex) derived from a small number, for readable tests. */
export function intentId(n: number): string {
  return `ci_${n.toString(16).padStart(24, '0')}`;
}

/**
 * createTestDatabase, plus a listener for errors of idle pool clients: drop() FORCE-drops the
 * database while pool.end() may still be closing sockets, and a terminated idle client would
 * otherwise be an unhandled 'error' that fails whichever test file is running.
 */
export async function createLedgerTestDatabase(
  options: Parameters<typeof createTestDatabase>[0],
): Promise<TestDatabase> {
  const db = await createTestDatabase(options);
  db.pool.on('error', () => undefined);
  return db;
}

// What tests outside this subgraph drive directly (platform/db's role test): through this file, so
// they add no folder loop between a layer and the ledger's folders (.dependency-cruiser.cjs).
export { accountId, treasuryAccount } from './accounts/names';
export { accountBalance } from './accounts/reads';
export { postFunding } from './posting/groupKinds';
export { postGroup } from './posting/writes';
export { recordSettled } from './servicePayments/bookings';
export { claimPayment, recordAnswer } from './servicePayments/writes';
