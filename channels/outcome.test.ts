// What the owner reads when a consumer intent of their policy reaches an outcome: the intent, the
// capability and the amount, what happened (the delivery check, the review reason, the refund),
// and never a code or reply instructions.
import {
  describeReviewReason,
  outcomeProblem,
  renderOutcomeHeadline,
  renderOutcomeSubject,
  renderOutcomeText,
} from './outcome';
import { dashboardEntryOf } from './dashboard';
import {
  SAMPLE_INTENT_ID,
  SAMPLE_REGISTRY_URL,
  sampleContradicted,
  sampleOutcome,
} from './test-support/outcomes';

describe('renderOutcomeText', () => {
  it('COMPLETED: names the intent, capability, amount, policy and the registry that verified the delivery', () => {
    const text = renderOutcomeText(sampleOutcome());
    expect(text.split('\n')[0]).toBe(
      'Purchase completed: domains.check (domain=taken.test) for 0.05025 USDT0.',
    );
    for (const line of [
      `Intent: ${SAMPLE_INTENT_ID}`,
      'Capability: domains.check (domain=taken.test)',
      'Amount: 0.05025 USDT0 on eip155:196',
      'Policy: Research agent budget (4242)',
      'State: COMPLETED at 2026-03-14T09:00:00Z',
      `Delivery: verified by RDAP at ${SAMPLE_REGISTRY_URL}`,
      'Finding: the registry agrees with the merchant (the merchant said taken.test is taken): the registry holds a domain object for taken.test',
      `Dashboard: http://127.0.0.1:3000/dashboard/consumer/intents/${SAMPLE_INTENT_ID}`,
    ]) {
      expect(text.split('\n')).toContain(line);
    }
    expect(text).not.toMatch(/review|APPROVE|DENY|reply/i);
  });

  it('COMPLETED on the provider’s word only says so, never "verified"', () => {
    const text = renderOutcomeText(
      sampleOutcome({
        reasonCode: 'PROVIDER_ATTESTATION_ONLY',
        detail: 'nothing independent checks this capability; it rests on the provider',
        verification: { verified: false, method: 'PROVIDER_ATTESTATION', source: 'spendctl-x' },
      }),
    );
    expect(text).toContain(
      "Delivery: not independently verified; it rests on the provider's word (spendctl-x)",
    );
    expect(text).not.toContain('verified by');
  });

  it('MANUAL_REVIEW, delivery contradicted: the reason in plain words with its code, the finding, that a person reviews it and nothing is re-sent', () => {
    const text = renderOutcomeText(sampleContradicted());
    expect(text.split('\n')[0]).toBe(
      'Purchase held for review: domains.check (domain=example.test) for 0.05025 USDT0.',
    );
    expect(text).toContain(
      'Why: The registry contradicts what the merchant said it delivered: the merchant was paid, but its answer does not match the registry. (DELIVERY_CONTRADICTED)',
    );
    expect(text).toContain(
      'Delivery: not verified (RDAP at https://rdap.registry.example/domain/example.test)',
    );
    expect(text).toContain(
      'Finding: the registry contradicts the merchant (the merchant said example.test is available)',
    );
    expect(text).toContain('A person at the service reviews this purchase.');
    expect(text).toContain('Nothing is re-sent to the merchant and nothing more is paid');
  });

  it('MANUAL_REVIEW, unverified and payment ambiguous: each reason in its own words', () => {
    expect(renderOutcomeText(sampleContradicted({ reasonCode: 'DELIVERY_UNVERIFIED' }))).toContain(
      'The delivery could not be checked: the registry gave no usable answer',
    );
    const ambiguous = renderOutcomeText(
      sampleOutcome({
        outcome: 'MANUAL_REVIEW',
        reasonCode: 'PAYMENT_AMBIGUOUS',
        detail: null,
        verification: null,
      }),
    );
    expect(ambiguous).toContain(
      'Why: It is not known whether the payment to the merchant went through',
    );
    expect(ambiguous).toContain('(PAYMENT_AMBIGUOUS)');
    expect(ambiguous).not.toContain('Finding:');
    expect(ambiguous).not.toContain('Delivery:');
    expect(ambiguous).toContain('Nothing is re-sent');
  });

  it('an unknown review code is named as it is; none at all still says a person looks at it', () => {
    expect(describeReviewReason('SOMETHING_NEW')).toBe(
      'The purchase needs a person to look at it. (SOMETHING_NEW)',
    );
    expect(describeReviewReason(null)).toBe('The purchase needs a person to look at it.');
  });

  it('REFUNDED: the amount returned and why', () => {
    const text = renderOutcomeText(
      sampleOutcome({
        outcome: 'REFUNDED',
        reasonCode: 'MERCHANT_REFUSED_BEFORE_PAYMENT',
        detail: null,
        verification: null,
        refundDisplay: '0.05025',
      }),
    );
    expect(text.split('\n')[0]).toBe(
      'Purchase refunded: domains.check (domain=taken.test) for 0.05025 USDT0.',
    );
    expect(text).toContain("Refund: 0.05025 USDT0 returned to the buyer's wallet");
    expect(text).toContain('Why: MERCHANT_REFUSED_BEFORE_PAYMENT');
  });

  it('keeps agent-supplied text on one line (no fake second line) and bounded', () => {
    const text = renderOutcomeText(
      sampleOutcome({ params: 'domain=a.test\nIntent: ci_fake', detail: 'x'.repeat(2_000) }),
    );
    expect(text).toContain('Capability: domains.check (domain=a.test Intent: ci_fake)');
    expect(text.split('\n').filter((line) => line.startsWith('Intent: '))).toEqual([
      `Intent: ${SAMPLE_INTENT_ID}`,
    ]);
    expect(text.split('\n').find((line) => line.startsWith('Finding: '))!.length).toBeLessThan(520);
  });
});

describe('subject, headline and dashboard entry', () => {
  it('the email subject is the headline, bounded', () => {
    expect(renderOutcomeSubject(sampleOutcome())).toBe(renderOutcomeHeadline(sampleOutcome()));
    expect(
      renderOutcomeSubject(sampleOutcome({ params: `domain=${'a'.repeat(300)}.test` })).length,
    ).toBeLessThanOrEqual(160);
  });

  it('the dashboard entry carries the same lines', () => {
    const entry = dashboardEntryOf(sampleContradicted());
    expect(entry).toEqual({
      intentId: SAMPLE_INTENT_ID,
      outcome: 'MANUAL_REVIEW',
      title: 'Purchase held for review: domains.check (domain=example.test) for 0.05025 USDT0',
      lines: renderOutcomeText(sampleContradicted()).split('\n'),
      occurredAt: '2026-03-14T09:00:00.000Z',
      url: sampleContradicted().dashboardUrl,
    });
  });
});

describe('outcomeProblem', () => {
  it('accepts a sound notice and names what is wrong with a broken one', () => {
    expect(outcomeProblem(sampleOutcome())).toBeNull();
    expect(outcomeProblem(sampleOutcome({ intentId: 'esc_0123' }))).toMatch(/intentId/);
    expect(outcomeProblem(sampleOutcome({ outcome: 'EXPIRED' as never }))).toMatch(/outcome/);
    expect(outcomeProblem(sampleOutcome({ occurredAt: new Date(Number.NaN) }))).toMatch(
      /occurredAt/,
    );
    expect(outcomeProblem(sampleOutcome({ dashboardUrl: 'javascript:alert(1)' }))).toMatch(
      /dashboardUrl/,
    );
    expect(outcomeProblem(sampleOutcome({ amountDisplay: ' ' }))).toBe('amountDisplay is empty');
  });
});
