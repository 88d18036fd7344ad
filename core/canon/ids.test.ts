// Id generation: the DECISIONS shapes from an injected random source, and validators that refuse
// near misses.
import {
  defaultRandomBytes,
  ID_SHAPES,
  isCafeOrderId,
  isOwnerEventId,
  isWebhookDeliveryId,
  isWebhookEndpointId,
  isCapabilityId,
  isConsumerIntentId,
  isCorrelationId,
  isEscalationPollRef,
  isChannelBindingId,
  isIdOfKindAnyHexCase,
  isPolicyId,
  isLedgerGroupId,
  isQuoteId,
  isReceiptId,
  isReservationId,
  isServicePaymentId,
  newCafeOrderId,
  newCapabilityId,
  newConsumerIntentId,
  newCorrelationId,
  newEscalationPollRef,
  newChannelBindingId,
  newId,
  newLedgerGroupId,
  newQuoteId,
  newReceiptId,
  newReservationId,
  newServicePaymentId,
  newTimeOrderedId,
  type IdKind,
  type RandomBytesSource,
} from './ids';

const counting: RandomBytesSource = (size) => Uint8Array.from({ length: size }, (_, i) => i);

describe('id generation', () => {
  it.each([
    [newEscalationPollRef, isEscalationPollRef, 'esc_000102030405060708090a0b'],
    [newChannelBindingId, isChannelBindingId, 'chb_000102030405060708090a0b'],
    [newLedgerGroupId, isLedgerGroupId, 'lg_000102030405060708090a0b'],
    [newQuoteId, isQuoteId, 'cq_000102030405060708'],
    [newCapabilityId, isCapabilityId, 'cap_000102030405060708090a0b'],
    [newReceiptId, isReceiptId, `0x${Buffer.from(counting(32)).toString('hex')}`],
    [newCorrelationId, isCorrelationId, 'cor_0001020304050607'],
    [newCafeOrderId, isCafeOrderId, 'ord_000102030405060708090a0b'],
  ])('%p mints the DECISIONS shape from the injected random source', (mint, isValid, expected) => {
    expect(mint(counting)).toBe(expected);
    expect(isValid(expected)).toBe(true);
    const random = mint();
    expect(isValid(random)).toBe(true);
    expect(mint()).not.toBe(random);
  });

  // 2026-11-29T00:00:00.000Z, 0x1a22499f800 ms.
  const at = Date.UTC(2026, 10, 29);
  it.each([
    [newConsumerIntentId, isConsumerIntentId, 'ci_'],
    [newReservationId, isReservationId, 'rsv_'],
    [newServicePaymentId, isServicePaymentId, 'pay_'],
  ])(
    '%p mints a time-ordered id: the milliseconds, then the random source',
    (mint, isValid, prefix) => {
      expect(mint(counting, at)).toBe(`${prefix}01a22499f800000102030405`);
      expect(isValid(mint(counting, at))).toBe(true);
      // By default, the process's clock at the moment it is made.
      const before = Date.now();
      const random = mint();
      const after = Date.now();
      const madeAt = parseInt(random.slice(prefix.length, prefix.length + 12), 16);
      expect(madeAt).toBeGreaterThanOrEqual(before);
      expect(madeAt).toBeLessThanOrEqual(after);
      expect(isValid(random)).toBe(true);
      expect(mint()).not.toBe(random);
    },
  );

  it('time-ordered ids sort by the millisecond they were made, whatever their random part', () => {
    const high: RandomBytesSource = (size) => new Uint8Array(size).fill(0xff);
    const low: RandomBytesSource = (size) => new Uint8Array(size);
    const made = [
      newTimeOrderedId('servicePayment', high, at),
      newTimeOrderedId('servicePayment', low, at + 1),
      newTimeOrderedId('servicePayment', high, at + 1_000),
      newTimeOrderedId('servicePayment', low, at + 86_400_000),
    ];
    expect([...made].sort()).toEqual(made);
    // Ids of the same millisecond differ by their random part.
    expect(newTimeOrderedId('servicePayment', undefined, at)).not.toBe(
      newTimeOrderedId('servicePayment', undefined, at),
    );
  });

  it('refuses a time it cannot write in 12 hex digits, and a kind too short to carry one', () => {
    for (const nowMs of [-1, 1.5, 16 ** 12, Number.NaN])
      expect(() => newTimeOrderedId('reservation', counting, nowMs)).toThrow(RangeError);
    expect(() => newTimeOrderedId('reservation', counting, 16 ** 12 - 1)).not.toThrow();
    expect(() => newTimeOrderedId('correlation', counting, at)).toThrow(RangeError);
    expect(() => newTimeOrderedId('reservation', () => new Uint8Array(5), at)).toThrow(RangeError);
  });

  it('the default source hands out each pooled byte once, as a copy, across refills', () => {
    // Draws of 32 and 13 bytes over several 4 KiB refills: no two draws are equal, and a draw kept
    // by its caller is not changed by the refills after it (a copy, never a view of the pool).
    const first = defaultRandomBytes(32);
    const firstHex = Buffer.from(first).toString('hex');
    const seen = new Set<string>([firstHex]);
    for (let draw = 1; draw < 1_000; draw += 1) {
      const size = draw % 7 === 0 ? 13 : 32;
      const bytes = defaultRandomBytes(size);
      expect(bytes).toHaveLength(size);
      const hex = Buffer.from(bytes).toString('hex');
      expect(seen.has(hex)).toBe(false);
      seen.add(hex);
    }
    expect(Buffer.from(first).toString('hex')).toBe(firstHex);
    const large = defaultRandomBytes(4_096);
    expect(large).toHaveLength(4_096);
    expect(new Set(large).size).toBeGreaterThan(200); // 4 KiB of CSPRNG output covers nearly every byte value
  });

  it('refuses a random source that returns the wrong number of bytes', () => {
    expect(() => newId('consumerIntent', () => new Uint8Array(11))).toThrow(RangeError);
  });

  it.each(Object.keys(ID_SHAPES) as IdKind[])('the %s validator refuses near misses', (kind) => {
    const { prefix, hexChars } = ID_SHAPES[kind];
    const check = {
      consumerIntent: isConsumerIntentId,
      escalationPollRef: isEscalationPollRef,
      channelBinding: isChannelBindingId,
      reservation: isReservationId,
      ledgerGroup: isLedgerGroupId,
      quote: isQuoteId,
      capability: isCapabilityId,
      receipt: isReceiptId,
      correlation: isCorrelationId,
      servicePayment: isServicePaymentId,
      cafeOrder: isCafeOrderId,
      webhookEndpoint: isWebhookEndpointId,
      webhookDelivery: isWebhookDeliveryId,
      ownerEvent: isOwnerEventId,
    }[kind];
    expect(check(prefix + 'a'.repeat(hexChars))).toBe(true);
    expect(check(prefix + 'A'.repeat(hexChars))).toBe(false);
    expect(check(prefix + 'a'.repeat(hexChars - 1))).toBe(false);
    expect(check(prefix + 'a'.repeat(hexChars + 1))).toBe(false);
    expect(check(prefix + 'g'.repeat(hexChars))).toBe(false);
    expect(check(`x${prefix}${'a'.repeat(hexChars)}`)).toBe(false);
    expect(check(42)).toBe(false);
  });
});

describe('ids written by callers', () => {
  it('a receipt id may carry uppercase hex, never another prefix or length', () => {
    expect(isIdOfKindAnyHexCase('receipt', `0x${'aB'.repeat(32)}`)).toBe(true);
    expect(isIdOfKindAnyHexCase('receipt', `0X${'ab'.repeat(32)}`)).toBe(false);
    expect(isIdOfKindAnyHexCase('receipt', `0x${'ab'.repeat(31)}`)).toBe(false);
    expect(isIdOfKindAnyHexCase('receipt', `0x${'g'.repeat(64)}`)).toBe(false);
    expect(isIdOfKindAnyHexCase('receipt', 42)).toBe(false);
  });

  it('a policy id is 1 to 78 decimal digits', () => {
    expect(isPolicyId('0')).toBe(true);
    expect(isPolicyId('9'.repeat(78))).toBe(true);
    expect(isPolicyId('')).toBe(false);
    expect(isPolicyId('9'.repeat(79))).toBe(false);
    expect(isPolicyId('0x1')).toBe(false);
    expect(isPolicyId(1)).toBe(false);
  });
});
