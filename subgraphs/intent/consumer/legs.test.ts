// The settlement leg's one owner: a step's fields are added to what the row holds, nothing another
// step wrote is dropped, and a mistyped field is refused before it is written.
import { settlementWith } from './legs';

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
