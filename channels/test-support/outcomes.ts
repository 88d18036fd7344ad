// Shared fixtures for the outcome-notice tests: a complete, valid notice of each outcome a consumer
// intent's owner is told about. Test support only; nothing in the service imports it.
import type { OutcomeNotice } from '../types';
import { FIXED_NOW } from './notices';

export const SAMPLE_INTENT_ID = 'ci_0123456789abcdef01234567';
export const SAMPLE_REGISTRY_URL = 'https://rdap.registry.example/domain/taken.test';

export function sampleOutcome(overrides: Partial<OutcomeNotice> = {}): OutcomeNotice {
  return {
    intentId: SAMPLE_INTENT_ID,
    outcome: 'COMPLETED',
    policyId: '4242',
    policyName: 'Research agent budget',
    capability: 'domains.check',
    params: 'domain=taken.test',
    amountDisplay: '0.05025',
    assetSymbol: 'USDT0',
    network: 'eip155:196',
    reasonCode: null,
    detail:
      'the registry agrees with the merchant (the merchant said taken.test is taken): the registry holds a domain object for taken.test',
    verification: { verified: true, method: 'RDAP', source: SAMPLE_REGISTRY_URL },
    refundDisplay: null,
    occurredAt: FIXED_NOW,
    dashboardUrl: `http://127.0.0.1:3000/dashboard/consumer/intents/${SAMPLE_INTENT_ID}`,
    ...overrides,
  };
}

export function sampleContradicted(overrides: Partial<OutcomeNotice> = {}): OutcomeNotice {
  return sampleOutcome({
    outcome: 'MANUAL_REVIEW',
    params: 'domain=example.test',
    reasonCode: 'DELIVERY_CONTRADICTED',
    detail:
      'the registry contradicts the merchant (the merchant said example.test is available): the registry holds a domain object for example.test',
    verification: {
      verified: false,
      method: 'RDAP',
      source: 'https://rdap.registry.example/domain/example.test',
    },
    ...overrides,
  });
}
