// The outcome notice the delivery job builds from a queued row: amounts in the policy's asset when
// the intent paid in it, the atomic amount named with its token otherwise, and a refusal of a row
// that is not an outcome (the delivery fails rather than sending a guess).
import { outcomeNoticeOf, type OutcomeDeliveryRow } from './outcomes';

const TOKEN = '0xAbC0000000000000000000000000000000000001';

function queued(payload: Record<string, unknown> = {}): OutcomeDeliveryRow {
  return {
    policy_id: '7',
    intent_id: 'ci_0123456789abcdef01234567',
    outcome: 'COMPLETED',
    payload: {
      intentId: 'ci_0123456789abcdef01234567',
      capability: 'domains.check',
      params: 'domain=taken.test',
      amount: '50250',
      asset: { network: 'eip155:196', token: TOKEN.toLowerCase() },
      reasonCode: null,
      detail: 'agrees',
      verification: { verified: true, method: 'RDAP', source: 'http://r/domain/taken.test' },
      refundAmount: null,
      occurredAt: '2026-11-24T16:39:00.000Z',
      policyName: 'Consumer budget',
      policyAsset: { network: 'eip155:196', token: TOKEN, symbol: 'USDT0', decimals: 6 },
      ...payload,
    },
  };
}

test('the amount in the policy’s asset, the dashboard link to the intent', () => {
  expect(outcomeNoticeOf(queued(), 'http://127.0.0.1/dashboard/')).toEqual({
    intentId: 'ci_0123456789abcdef01234567',
    outcome: 'COMPLETED',
    policyId: '7',
    policyName: 'Consumer budget',
    capability: 'domains.check',
    params: 'domain=taken.test',
    amountDisplay: '0.05025',
    assetSymbol: 'USDT0',
    network: 'eip155:196',
    reasonCode: null,
    detail: 'agrees',
    verification: { verified: true, method: 'RDAP', source: 'http://r/domain/taken.test' },
    refundDisplay: null,
    occurredAt: new Date('2026-11-24T16:39:00.000Z'),
    dashboardUrl: 'http://127.0.0.1/dashboard/consumer/intents/ci_0123456789abcdef01234567',
  });
});

test('a refund reads in display units; another asset than the policy’s is never rescaled', () => {
  const refunded = outcomeNoticeOf(
    { ...queued({ refundAmount: '50250' }), outcome: 'REFUNDED' },
    'http://d',
  );
  expect(refunded.refundDisplay).toBe('0.05025');
  const other = outcomeNoticeOf(
    queued({
      asset: { network: 'eip155:8453', token: '0x9990000000000000000000000000000000000009' },
    }),
    'http://d',
  );
  expect(other).toMatchObject({
    amountDisplay: '50250',
    assetSymbol: 'atomic units of 0x9990000000000000000000000000000000000009',
    network: 'eip155:8453',
  });
});

test('a row that is not a sound outcome is refused', () => {
  expect(() => outcomeNoticeOf({ ...queued(), payload: null }, 'http://d')).toThrow(/no outcome/);
  expect(() => outcomeNoticeOf({ ...queued(), outcome: 'EXPIRED' }, 'http://d')).toThrow(
    /not one owners are told/,
  );
  expect(() => outcomeNoticeOf(queued({ amount: '1.5' }), 'http://d')).toThrow(/atomic/);
});
