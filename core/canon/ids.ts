// The one id generator: prefix + lowercase hex from a random-bytes source that tests can replace.
// Kept apart from everything the engine imports, because it reaches node:crypto randomness.
import { randomBytes as nodeRandomBytes } from 'node:crypto';
import { ID_SHAPES, type IdKind } from './id-shapes';

export * from './id-shapes';

/** Returns `size` fresh random bytes; must be cryptographically strong in production. */
export type RandomBytesSource = (size: number) => Uint8Array;

export const defaultRandomBytes: RandomBytesSource = (size) => nodeRandomBytes(size);

export function newId(kind: IdKind, randomBytes: RandomBytesSource = defaultRandomBytes): string {
  const shape = ID_SHAPES[kind];
  const size = shape.hexChars / 2;
  const bytes = randomBytes(size);
  // A short or oversized read would silently mint a malformed or colliding id; refuse instead.
  if (!(bytes instanceof Uint8Array) || bytes.length !== size) {
    throw new RangeError(`random source returned ${bytes?.length ?? 'no'} bytes, expected ${size}`);
  }
  return shape.prefix + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

export const newConsumerIntentId = (randomBytes?: RandomBytesSource): string => newId('consumerIntent', randomBytes);
export const newEscalationPollRef = (randomBytes?: RandomBytesSource): string => newId('escalationPollRef', randomBytes);
export const newChannelBindingId = (randomBytes?: RandomBytesSource): string => newId('channelBinding', randomBytes);
export const newReservationId = (randomBytes?: RandomBytesSource): string => newId('reservation', randomBytes);
export const newLedgerGroupId = (randomBytes?: RandomBytesSource): string => newId('ledgerGroup', randomBytes);
export const newQuoteId = (randomBytes?: RandomBytesSource): string => newId('quote', randomBytes);
export const newCapabilityId = (randomBytes?: RandomBytesSource): string => newId('capability', randomBytes);
export const newReceiptId = (randomBytes?: RandomBytesSource): string => newId('receipt', randomBytes);
export const newCorrelationId = (randomBytes?: RandomBytesSource): string => newId('correlation', randomBytes);
export const newServicePaymentId = (randomBytes?: RandomBytesSource): string => newId('servicePayment', randomBytes);
export const newCafeOrderId = (randomBytes?: RandomBytesSource): string => newId('cafeOrder', randomBytes);
