// Shared fixtures for the channel tests: a fixed clock and a complete, valid escalation notice
// that expires 30 minutes after it. Test support only; nothing in the service imports it.
import type { EscalationNotice } from '../types';

/** 2026-03-14T09:00:00Z */
export const FIXED_NOW = new Date('2026-03-14T09:00:00Z');
export const SAMPLE_CODE = '0123456789abcdef01234567';
export const SAMPLE_POLL_REF = 'esc_a1b2c3d4e5f60718293a4b5c';
export const SAMPLE_RECIPIENT = '0x2A2b2C2d2E2f2a2B2c2D2e2F2a2b2C2d2E2f2A2b';

export function sampleNotice(overrides: Partial<EscalationNotice> = {}): EscalationNotice {
  return {
    pollRef: SAMPLE_POLL_REF,
    code: SAMPLE_CODE,
    policyId: '4242',
    policyName: 'Research agent budget',
    amountDisplay: '12.50',
    assetSymbol: 'USDC',
    network: 'eip155:8453',
    recipient: SAMPLE_RECIPIENT,
    item: 'Satellite imagery, tile 31UDQ',
    ruleId: 'escalate.aboveThreshold',
    ruleName: 'approval threshold',
    ruleReason: 'ESCALATED_THRESHOLD',
    expiresAt: new Date(FIXED_NOW.getTime() + 30 * 60_000),
    dashboardUrl: `http://127.0.0.1:3000/dashboard/escalations/${SAMPLE_POLL_REF}`,
    ...overrides,
  };
}
