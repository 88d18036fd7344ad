// The public receipt of a consumer purchase, checked on the agent's side: its integrity.digest
// must be the digest of its own body, computed by the service's own function (core/consumer,
// compiled into this package), so a receipt altered on the way is refused.
import { consumerReceiptDigest, type ConsumerReceipt } from '../../core/consumer/receipt';
import { SpendControlError } from './errors';

export type { ConsumerReceipt } from '../../core/consumer/receipt';

/** The receipt itself when its digest holds; RECEIPT_DIGEST_MISMATCH when it does not. */
export function checkReceipt(receipt: ConsumerReceipt): ConsumerReceipt {
  const expected = consumerReceiptDigest(receipt);
  if (receipt.integrity?.digest !== expected) {
    throw new SpendControlError(
      'RECEIPT_DIGEST_MISMATCH',
      `The receipt's digest ${String(receipt.integrity?.digest)} is not its body's ${expected}.`,
      { details: { intentId: receipt.intentId, expected } },
    );
  }
  return receipt;
}
