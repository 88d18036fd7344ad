// Why the facilitator refused an authorization, asked of the chain when its reason is only "the
// simulation failed": already used (then an earlier use may pay for this call) or no balance.
import type { Pool } from 'pg';
import type { Address } from 'viem';
import type { Logger } from '../../platform/log';
import type { BusinessCounters } from '../../platform/metrics';
import type { ServicePayment } from '../../subgraphs/ledger';
import { bookSettled } from './books';
import { matchingTransfer } from './parkedPayments';
import type { Authorization } from './protocol';
import type { SettlementRail } from './rail';

export const NONCE_USED = 'invalid_exact_evm_nonce_already_used';
const SIMULATION_FAILED = 'invalid_exact_evm_transaction_simulation_failed';

/** The refusal to give the payer: the facilitator's reason, or what the chain says behind it. */
export async function diagnoseRefusal(
  rail: SettlementRail,
  log: Logger,
  reason: string,
  authorization: Authorization,
): Promise<string> {
  if (reason !== SIMULATION_FAILED && reason !== 'invalid_exact_evm_transaction_failed')
    return reason;
  try {
    const atBlock = await rail.latestBlockNumber();
    if (await rail.authorizationUsed(authorization.from, authorization.nonce, atBlock))
      return NONCE_USED;
    if ((await rail.balanceOf(authorization.from as Address, atBlock)) < authorization.value)
      return 'invalid_exact_evm_insufficient_balance';
  } catch (error) {
    log.warn({ err: error }, 'x402 diagnosis read failed');
  }
  return reason;
}

/**
 * A refused authorization whose nonce is used on chain already: if that use paid us exactly this
 * payment (an earlier attempt of ours that crashed before recording, or the payer submitting it),
 * books it and returns the record; null when it paid something else or cannot be found.
 */
export async function bookEarlierUse(
  options: { rail: SettlementRail; db: Pool; counters?: BusinessCounters },
  payment: ServicePayment,
  authorization: Authorization,
): Promise<ServicePayment | null> {
  const { rail, db } = options;
  const atBlock = await rail.latestBlockNumber();
  const txHash = await rail.findAuthorizationTransaction(
    authorization.from,
    authorization.nonce,
    atBlock,
  );
  if (!txHash) return null;
  const outcome = await rail.receipt(txHash, atBlock);
  if (outcome.status !== 'success' || !matchingTransfer(outcome.transfers, payment)) return null;
  return bookSettled(db, payment, txHash, options.counters);
}
