// The dashboard channel: nothing to send, because the dashboard reads the escalation record and
// the consumer intent (its state, reason and delivery finding) through GraphQL, and decides
// through the owner's SIWE session. It exists so every channel kind has an adapter and the policy
// side needs no special case; `dashboardEntryOf` is the entry a dashboard shows for an outcome.
import { renderOutcomeHeadline, renderOutcomeLines } from './outcome';
import type {
  ResolutionNotice,
  ChannelAdapter,
  ChannelTarget,
  DeliveryResult,
  EscalationNotice,
  OutcomeNotice,
} from './types';

/** One line of an owner's feed: the intent, its outcome, a title and the lines the chats show. */
export interface DashboardOutcomeEntry {
  readonly intentId: string;
  readonly outcome: OutcomeNotice['outcome'];
  readonly title: string;
  readonly lines: readonly string[];
  readonly occurredAt: string;
  readonly url: string;
}

export function dashboardEntryOf(notice: OutcomeNotice): DashboardOutcomeEntry {
  return {
    intentId: notice.intentId,
    outcome: notice.outcome,
    title: renderOutcomeHeadline(notice),
    lines: renderOutcomeLines(notice),
    occurredAt: notice.occurredAt.toISOString(),
    url: notice.dashboardUrl,
  };
}

export function createDashboardAdapter(): ChannelAdapter {
  return {
    kind: 'dashboard',
    async send(_target: ChannelTarget, _notice: EscalationNotice): Promise<DeliveryResult> {
      return { externalId: null };
    },
    async sendOutcome(_target: ChannelTarget, _notice: OutcomeNotice): Promise<DeliveryResult> {
      return { externalId: null };
    },
    async sendResolution(
      _target: ChannelTarget,
      _notice: ResolutionNotice,
    ): Promise<DeliveryResult> {
      return { externalId: null };
    },
  };
}
