// What one settlement attempt of an x402 payment came to, as the paywall reads it (single or group path).
import type { SettleResponse } from '@x402/core/types';

/**
 * The facilitator's answer, plus whether it handed a transaction to the node. A failure with no
 * transaction hash after a send is no proof nothing moved: the node may have taken the transaction
 * and only its answer was lost (a 5xx or timeout that viem retried into "already known" or "nonce
 * too low"). Only a refusal before any send (`broadcast` false) proves the authorization unspent.
 */
export type Settlement = SettleResponse & {
  readonly broadcast: boolean;
  /**
   * Set by group settlement: the receipt of `transaction` was read and shows this authorization's
   * own AuthorizationUsed and its Transfer to payTo of the price (no second receipt read needed).
   */
  readonly confirmed?: boolean;
  /**
   * Set by group settlement: no transaction carrying this authorization reached the node (the
   * reads before signing failed, or the node refused the group's nonce and does not know it). The
   * authorization is unspent; the payer presents the same payment again.
   */
  readonly unsent?: boolean;
};
