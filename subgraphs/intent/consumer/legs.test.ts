// The settlement leg's one owner: a step's fields are added to what the row holds, nothing another
// step wrote is dropped, and a mistyped field is refused before it is written.
import { AppError } from '../../../core/errors';
import { settlementWith, storedLeg } from './legs';

const signed = {
  capabilityId: 'cap_0123456789abcdef01234567',
  authorization: { nonce: '0x' + '1'.repeat(64), validBefore: '1790000000', value: '50000' },
  signedAt: '2026-11-24T10:00:00.000Z',
  fromBlock: '12',
  futureField: 'kept',
};

test("adds a step's fields and keeps every field already there", () => {
  const paid = settlementWith(
    { settlement: signed },
    { txHash: '0x' + 'a'.repeat(64), blockNumber: '13', groupId: 'lg_1' },
  );
  expect(paid).toEqual({
    ...signed,
    txHash: '0x' + 'a'.repeat(64),
    blockNumber: '13',
    groupId: 'lg_1',
  });
  expect(settlementWith({ settlement: null }, { suspenseGroupId: 'lg_2' })).toEqual({
    suspenseGroupId: 'lg_2',
  });
});

test('refuses a field of the wrong shape', () => {
  expect(() => settlementWith({ settlement: signed }, { txHash: '0x12' })).toThrow();
  expect(() => settlementWith({ settlement: { ...signed, fromBlock: 12 } }, {})).toThrow();
});

describe('storedLeg: each leg checked once when a row is read', () => {
  const intentId = 'ci_000000000000000000000001';

  test('a leg that fits is the stored object itself; no leg is null', () => {
    const quote = { merchant: { payTo: '0x' + 'ab'.repeat(20) }, quoteId: 'cq_1', fee: '250' };
    expect(storedLeg(intentId, 'quote', quote)).toBe(quote);
    expect(storedLeg(intentId, 'funding', null)).toBeNull();
  });

  test.each([
    ['quote', { fee: 250 }, ['fee']],
    [
      'quote',
      { providerCost: { network: 'eip155:8453', asset: '0x01', amount: '-1' } },
      ['providerCost.amount'],
    ],
    ['funding', { amount: '1.5' }, ['amount']],
    ['settlement', { recognitionGroupIds: 'lg_1' }, ['recognitionGroupIds']],
    ['providerAttested', { fields: 'yes' }, ['fields']],
    ['serviceVerified', { verified: 'true' }, ['verified']],
    ['quote', [], ['(root)']],
  ] as const)('a bad %s leg is 500 CONSUMER_INTENT_LEG_INVALID', (leg, stored, fields) => {
    let thrown: unknown;
    try {
      storedLeg(intentId, leg, stored);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({
      code: 'CONSUMER_INTENT_LEG_INVALID',
      status: 500,
      details: { intentId, leg, fields },
    });
  });
});
