// The summary the intent subgraph hands the policy's function: which states notify, what the owner
// may read, and that a transport error's text (which could hold anything) never leaves with it.
import { isOwnerOutcome, type OutcomeSourceRow, outcomeSummaryOf } from './outcome';

const AT = new Date('2026-11-24T16:39:00.000Z');

function row(overrides: Partial<OutcomeSourceRow> = {}): OutcomeSourceRow {
  return {
    intentId: 'ci_0123456789abcdef01234567',
    policyId: '7',
    capability: 'domains.check',
    params: { domain: 'taken.test' },
    state: 'COMPLETED',
    stateVersion: 14,
    stateReason: null,
    stateReasonCode: null,
    quote: {
      funding: { network: 'eip155:196', asset: '0xabc0000000000000000000000000000000000001' },
    },
    fundingAmount: 50250n,
    refund: null,
    serviceVerified: {
      verified: true,
      method: 'RDAP',
      source: 'http://127.0.0.1:9/domain/taken.test',
      checkedAt: AT.toISOString(),
      detail: 'the registry agrees with the merchant',
    },
    updatedAt: AT,
    ...overrides,
  };
}

test('only COMPLETED, MANUAL_REVIEW and REFUNDED are told to the owner', () => {
  expect(['COMPLETED', 'MANUAL_REVIEW', 'REFUNDED'].every((s) => isOwnerOutcome(s as never))).toBe(
    true,
  );
  for (const state of ['DELIVERY_VERIFIED', 'REFUND_PENDING', 'FAILED_AFTER_PAYMENT', 'EXPIRED'])
    expect(isOwnerOutcome(state as never)).toBe(false);
});

test('COMPLETED: the intent, capability, scalar params, the funding amount and asset, and the check', () => {
  expect(outcomeSummaryOf(row({ params: { domain: 'taken.test', nested: { a: 1 } } }))).toEqual({
    intentId: 'ci_0123456789abcdef01234567',
    stateVersion: 14,
    capability: 'domains.check',
    params: 'domain=taken.test',
    amount: '50250',
    asset: { network: 'eip155:196', token: '0xabc0000000000000000000000000000000000001' },
    reasonCode: null,
    detail: 'the registry agrees with the merchant',
    verification: {
      verified: true,
      method: 'RDAP',
      source: 'http://127.0.0.1:9/domain/taken.test',
    },
    refundAmount: null,
    occurredAt: AT.toISOString(),
  });
});

test('MANUAL_REVIEW: the reason code, and the finding only when it is the service’s own delivery check', () => {
  const contradicted = outcomeSummaryOf(
    row({
      state: 'MANUAL_REVIEW',
      stateReason: 'DELIVERY_CONTRADICTED: the registry contradicts the merchant',
      stateReasonCode: 'DELIVERY_CONTRADICTED',
      serviceVerified: {
        verified: false,
        method: 'RDAP',
        source: 'http://r',
        detail: 'contradicts',
      },
    }),
  );
  expect(contradicted).toMatchObject({
    reasonCode: 'DELIVERY_CONTRADICTED',
    detail: 'contradicts',
  });
  const ambiguous = outcomeSummaryOf(
    row({
      state: 'MANUAL_REVIEW',
      stateReason: 'PAYMENT_AMBIGUOUS: signed, then the client failed: Error 0xdeadbeef payload',
      stateReasonCode: 'PAYMENT_AMBIGUOUS',
      serviceVerified: null,
    }),
  );
  expect(ambiguous).toMatchObject({
    reasonCode: 'PAYMENT_AMBIGUOUS',
    detail: null,
    verification: null,
  });
  expect(JSON.stringify(ambiguous)).not.toContain('0xdeadbeef');
  expect(
    outcomeSummaryOf(row({ state: 'MANUAL_REVIEW', stateReason: 'free text' })).reasonCode,
  ).toBe(null);
});

test('REFUNDED: the refunded amount', () => {
  expect(
    outcomeSummaryOf(
      row({
        state: 'REFUNDED',
        stateReason: 'MERCHANT_REFUSED_BEFORE_PAYMENT (503): refused',
        stateReasonCode: 'MERCHANT_REFUSED_BEFORE_PAYMENT',
        serviceVerified: null,
        refund: { amount: '50250', to: '0x1', txHash: '0x2' },
      }),
    ),
  ).toMatchObject({
    refundAmount: '50250',
    reasonCode: 'MERCHANT_REFUSED_BEFORE_PAYMENT',
    detail: null,
  });
  expect(
    outcomeSummaryOf(row({ state: 'REFUNDED', stateReason: 'the buyer cancelled', refund: null })),
  ).toMatchObject({ reasonCode: null, refundAmount: null });
});
