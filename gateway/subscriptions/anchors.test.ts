import { anchorNotification, anchorTopics } from './anchors';
import { eventsFromNotification } from './schema';

const RECEIPT = `0x${'ab'.repeat(32)}`;
const OWNER = `0x${'cd'.repeat(20)}`;

describe('receipt_anchor notifications', () => {
  it('become one change on the receipt’s topic and the policy’s, the same object on both', () => {
    const events = eventsFromNotification('receipt_anchor', {
      receiptId: RECEIPT,
      policyId: '42',
      owner: OWNER,
      state: 'ANCHORED',
    });
    expect(events.map((event) => event.topic)).toEqual([
      `anchorUpdated:${RECEIPT}`,
      'anchorsUpdated:42',
    ]);
    expect(events[0].event).toBe(events[1].event);
    expect(events[0].event).toEqual({
      kind: 'CHANGED',
      receiptId: RECEIPT,
      policyId: '42',
      owner: OWNER,
      state: 'ANCHORED',
    });
  });

  it('without a policy reach only the receipt’s subscribers', () => {
    const change = anchorNotification({
      receiptId: RECEIPT,
      policyId: null,
      owner: null,
      state: 'PENDING',
    });
    expect(change).not.toBeNull();
    expect(anchorTopics(change!)).toEqual([`anchorUpdated:${RECEIPT}`]);
  });

  it.each([
    ['no object', 'x'],
    [
      'an uppercase receipt id',
      { receiptId: RECEIPT.toUpperCase().replace('0X', '0x'), state: 'PENDING' },
    ],
    ['a short receipt id', { receiptId: '0x12', state: 'PENDING' }],
    ['an unknown state', { receiptId: RECEIPT, state: 'NOT_FOUND' }],
  ])('drop %s', (_what, payload) => {
    expect(anchorNotification(payload)).toBeNull();
    expect(eventsFromNotification('receipt_anchor', payload)).toEqual([]);
  });
});
