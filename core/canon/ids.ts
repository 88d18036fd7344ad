// The one id generator: prefix + lowercase hex from a random-bytes source that tests can replace.
// Kept apart from everything the engine imports, because it reaches node:crypto randomness.
import { randomBytes as nodeRandomBytes, randomFillSync } from 'node:crypto';
import { ID_SHAPES, type IdKind } from './id-shapes';

export * from './id-shapes';

/** Returns `size` fresh random bytes; must be cryptographically strong in production. */
export type RandomBytesSource = (size: number) => Uint8Array;

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

/**
 * Cryptographically strong bytes from node:crypto, drawn from a pool filled 4 KiB at a time (one
 * call into the CSPRNG per ~250 ids instead of one per id, as Node's own randomUUID does). Every
 * byte is handed out once, as a copy; requests larger than a quarter of the pool go straight to
 * the CSPRNG.
 */
export const defaultRandomBytes: RandomBytesSource = (size) => {
  if (size > POOL_BYTES / 4) return nodeRandomBytes(size);
  if (poolOffset + size > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = Uint8Array.prototype.slice.call(pool, poolOffset, poolOffset + size);
  poolOffset += size;
  return bytes;
};

export function newId(kind: IdKind, randomBytes: RandomBytesSource = defaultRandomBytes): string {
  const shape = ID_SHAPES[kind];
  const size = shape.hexChars / 2;
  const bytes = randomBytes(size);
  // A short or oversized read would silently mint a malformed or colliding id; refuse instead.
  if (!(bytes instanceof Uint8Array) || bytes.length !== size) {
    throw new RangeError(`random source returned ${bytes?.length ?? 'no'} bytes, expected ${size}`);
  }
  return (
    shape.prefix + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
  );
}

export const newConsumerIntentId = (randomBytes?: RandomBytesSource): string =>
  newId('consumerIntent', randomBytes);
export const newEscalationPollRef = (randomBytes?: RandomBytesSource): string =>
  newId('escalationPollRef', randomBytes);
export const newChannelBindingId = (randomBytes?: RandomBytesSource): string =>
  newId('channelBinding', randomBytes);
export const newReservationId = (randomBytes?: RandomBytesSource): string =>
  newId('reservation', randomBytes);
export const newLedgerGroupId = (randomBytes?: RandomBytesSource): string =>
  newId('ledgerGroup', randomBytes);
export const newQuoteId = (randomBytes?: RandomBytesSource): string => newId('quote', randomBytes);
export const newCapabilityId = (randomBytes?: RandomBytesSource): string =>
  newId('capability', randomBytes);
export const newReceiptId = (randomBytes?: RandomBytesSource): string =>
  newId('receipt', randomBytes);
export const newCorrelationId = (randomBytes?: RandomBytesSource): string =>
  newId('correlation', randomBytes);
export const newServicePaymentId = (randomBytes?: RandomBytesSource): string =>
  newId('servicePayment', randomBytes);
export const newCafeOrderId = (randomBytes?: RandomBytesSource): string =>
  newId('cafeOrder', randomBytes);
export const newWebhookEndpointId = (randomBytes?: RandomBytesSource): string =>
  newId('webhookEndpoint', randomBytes);
