import { buildSpendReport, type IntentFacts } from './spendReport';

const base: IntentFacts = {
  intentId: 'ci_a',
  state: 'COMPLETED',
  stateReason: null,
  category: 'domains',
  provider: 'spendctl-domains',
  agentId: 'bot-1',
  fundedAtomic: 50_250n,
  feeAtomic: 0n,
  spreadAtomic: 250n,
  refundedAtomic: null,
  deliveryVerified: true,
};

test('each section counts exactly its intents and sums their atomic amounts', () => {
  const report = buildSpendReport(
    [
      base,
      {
        ...base,
        intentId: 'ci_b',
        agentId: 'bot-2',
        category: 'research',
        fundedAtomic: 100_501n,
        feeAtomic: 1n,
        spreadAtomic: 500n,
      },
      {
        ...base,
        intentId: 'ci_c',
        state: 'REFUNDED',
        stateReason: 'MERCHANT_REFUSED_BEFORE_PAYMENT',
        refundedAtomic: 50_250n,
        deliveryVerified: null,
      },
      {
        ...base,
        intentId: 'ci_d',
        state: 'MANUAL_REVIEW',
        stateReason: 'PAYMENT_AMBIGUOUS',
        deliveryVerified: null,
      },
      { ...base, intentId: 'ci_e', state: 'BLOCKED', fundedAtomic: null, deliveryVerified: null },
      { ...base, intentId: 'ci_f', state: 'DELIVERY_PENDING', deliveryVerified: false },
    ],
    [{ intentHash: '0x01', agentId: 'bot-1', amountAtomic: 7n, evaluatedAt: new Date(0) }],
  );
  expect(report.spend).toEqual({
    totalAtomic: String(50_250n * 3n + 100_501n),
    purchases: 4,
    byCategory: [
      { key: 'domains', amountAtomic: String(50_250n * 3n), count: 3 },
      { key: 'research', amountAtomic: '100501', count: 1 },
    ],
    byProvider: [
      { key: 'spendctl-domains', amountAtomic: String(50_250n * 3n + 100_501n), count: 4 },
    ],
    byAgent: [
      { key: 'bot-1', amountAtomic: String(50_250n * 3n), count: 3 },
      { key: 'bot-2', amountAtomic: '100501', count: 1 },
    ],
  });
  expect(report.fees).toEqual({ serviceFeeAtomic: '1', spreadAtomic: '1250' });
  expect(report.duplicatesBlocked).toEqual({ count: 1, amountAtomic: '7', intentHashes: ['0x01'] });
  expect(report.refunds).toMatchObject({ count: 1, amountAtomic: '50250' });
  expect(report.refunds.intents.map((line) => line.intentId)).toEqual(['ci_c']);
  expect(report.ambiguousOpen).toMatchObject({ count: 1, amountAtomic: '50250' });
  expect(report.failedDeliveries.intents.map((line) => line.intentId)).toEqual(['ci_c', 'ci_f']);
});

test('an empty period reports zeros, never missing numbers', () => {
  const report = buildSpendReport([], []);
  expect(report.spend.totalAtomic).toBe('0');
  expect(report.refunds).toEqual({ count: 0, amountAtomic: '0', intents: [] });
  expect(report.duplicatesBlocked).toEqual({ count: 0, amountAtomic: '0', intentHashes: [] });
});
