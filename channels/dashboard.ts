// The dashboard channel: nothing to send, because the dashboard reads the escalation record
// through GraphQL (and decides through the owner's SIWE session). It exists so every channel kind
// has an adapter and the escalation side needs no special case.
import type { ChannelAdapter, ChannelTarget, DeliveryResult, EscalationNotice } from './types';

export function createDashboardAdapter(): ChannelAdapter {
  return {
    kind: 'dashboard',
    async send(_target: ChannelTarget, _notice: EscalationNotice): Promise<DeliveryResult> {
      return { externalId: null };
    },
  };
}
