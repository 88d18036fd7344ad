// The channel layer's front door: builds the adapters a process is configured for (webhook and
// dashboard always; Telegram, Slack and email when given their settings) and re-exports the
// parsers and verifiers the inbound routes use. Reads no configuration itself.
import { createDashboardAdapter } from './dashboard';
import { createEmailAdapter } from './email';
import type { FetchLike } from './http';
import { createSlackAdapter } from './slack';
import { type TelegramAdapter, createTelegramAdapter } from './telegram';
import type { ChannelAdapter, ChannelKind } from './types';
import { createWebhookAdapter } from './webhook';

export * from './types';
export * from './errors';
export {
  renderNoticeText,
  renderNoticeSummary,
  parseReplyText,
  replyCommand,
  REPLY_CODE_PATTERN,
} from './message';
export {
  renderOutcomeText,
  renderOutcomeLines,
  renderOutcomeHeadline,
  renderOutcomeSubject,
  describeReviewReason,
  outcomeProblem,
} from './outcome';
export * from './webhook';
export * from './telegram';
export * from './slack';
export * from './email';
export * from './dashboard';

export interface ChannelAdaptersConfig {
  readonly telegram?: { readonly apiBaseUrl: string; readonly botToken: string };
  readonly slack?: { readonly apiBaseUrl: string; readonly botToken: string };
  readonly smtp?: { readonly url: string; readonly from: string };
  /** Where owners' systems POST signed webhook replies; put into every webhook payload. */
  readonly webhookReplyUrl?: string;
  readonly fetch?: FetchLike;
  /** The process's injected clock, for signing times and "minutes from now". */
  readonly now?: () => Date;
}

/** The configured adapters by kind; webhook and dashboard are always present. */
export interface ChannelAdapters extends Partial<Record<ChannelKind, ChannelAdapter>> {
  readonly webhook: ChannelAdapter;
  readonly dashboard: ChannelAdapter;
  readonly telegram?: TelegramAdapter;
}

export function createChannelAdapters(config: ChannelAdaptersConfig = {}): ChannelAdapters {
  const { fetch, now } = config;
  return {
    webhook: createWebhookAdapter({ fetch, now, replyUrl: config.webhookReplyUrl }),
    dashboard: createDashboardAdapter(),
    ...(config.telegram
      ? { telegram: createTelegramAdapter({ ...config.telegram, fetch, now }) }
      : {}),
    ...(config.slack ? { slack: createSlackAdapter({ ...config.slack, fetch, now }) } : {}),
    ...(config.smtp
      ? { email: createEmailAdapter({ smtpUrl: config.smtp.url, from: config.smtp.from, now }) }
      : {}),
  };
}
