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

/** `size` bytes from the source as lowercase hex; a short or oversized read is refused. */
function randomHex(randomBytes: RandomBytesSource, size: number): string {
  const bytes = randomBytes(size);
  // A short or oversized read would silently mint a malformed or colliding id; refuse instead.
  if (!(bytes instanceof Uint8Array) || bytes.length !== size) {
    throw new RangeError(`random source returned ${bytes?.length ?? 'no'} bytes, expected ${size}`);
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

export function newId(kind: IdKind, randomBytes: RandomBytesSource = defaultRandomBytes): string {
  const shape = ID_SHAPES[kind];
  return shape.prefix + randomHex(randomBytes, shape.hexChars / 2);
}

/** Hex digits of Unix milliseconds a time-ordered id starts with (good until the year 10889). */
const TIME_HEX_CHARS = 12;
const MIN_RANDOM_HEX_CHARS = 12;

/**
 * An id that sorts by the time it was made, in the kind's shape: the prefix, 12 hex digits of Unix
 * milliseconds, then random hex for the rest (48 bits for a 24-digit kind), the layout
 * ledger.new_group_id gives group ids. For the ids that key rows written for ever on the money paths
 * (payments, consumer intents, reservations) and that idempotency keys are built from: a new row's
 * key then lands at the right edge of its index, whose pages stay cached however long the history,
 * instead of at a random page of an index that outgrows the cache (docs/ledger.md "Time-ordered
 * payment, intent and reservation ids"). Ids made in the same millisecond differ by their random
 * part; a collision (one in 2^48 for two of one kind made in the same millisecond) is refused by the
 * row's primary key like any duplicate. What it reveals, the millisecond it was made, the row's own
 * created time already shows.
 */
export function newTimeOrderedId(
  kind: IdKind,
  randomBytes: RandomBytesSource = defaultRandomBytes,
  nowMs: number = Date.now(),
): string {
  const shape = ID_SHAPES[kind];
  // 48 random bits at least beside the time, or ids of one millisecond would collide too often.
  if (shape.hexChars < TIME_HEX_CHARS + MIN_RANDOM_HEX_CHARS)
    throw new RangeError(`${kind} ids are too short to carry a time and 48 random bits`);
  if (!Number.isSafeInteger(nowMs) || nowMs < 0 || nowMs >= 16 ** TIME_HEX_CHARS)
    throw new RangeError(`not a time to order an id by: ${nowMs}`);
  const time = nowMs.toString(16).padStart(TIME_HEX_CHARS, '0');
  return shape.prefix + time + randomHex(randomBytes, (shape.hexChars - TIME_HEX_CHARS) / 2);
}

export const newConsumerIntentId = (randomBytes?: RandomBytesSource, nowMs?: number): string =>
  newTimeOrderedId('consumerIntent', randomBytes, nowMs);
export const newEscalationPollRef = (randomBytes?: RandomBytesSource): string =>
  newId('escalationPollRef', randomBytes);
export const newChannelBindingId = (randomBytes?: RandomBytesSource): string =>
  newId('channelBinding', randomBytes);
export const newReservationId = (randomBytes?: RandomBytesSource, nowMs?: number): string =>
  newTimeOrderedId('reservation', randomBytes, nowMs);
export const newLedgerGroupId = (randomBytes?: RandomBytesSource): string =>
  newId('ledgerGroup', randomBytes);
export const newQuoteId = (randomBytes?: RandomBytesSource): string => newId('quote', randomBytes);
export const newCapabilityId = (randomBytes?: RandomBytesSource): string =>
  newId('capability', randomBytes);
export const newReceiptId = (randomBytes?: RandomBytesSource): string =>
  newId('receipt', randomBytes);
export const newCorrelationId = (randomBytes?: RandomBytesSource): string =>
  newId('correlation', randomBytes);
export const newServicePaymentId = (randomBytes?: RandomBytesSource, nowMs?: number): string =>
  newTimeOrderedId('servicePayment', randomBytes, nowMs);
export const newCafeOrderId = (randomBytes?: RandomBytesSource): string =>
  newId('cafeOrder', randomBytes);
export const newWebhookEndpointId = (randomBytes?: RandomBytesSource): string =>
  newId('webhookEndpoint', randomBytes);
