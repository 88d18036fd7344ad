// Escalation channels from the environment: Telegram, Slack and SMTP, each configured as a whole
// set or not at all, plus the worker's sweep interval and the dashboard links in notices.
import { HTTP, type EnvReader } from './envReader';
import type { EscalationConfig } from './sections';

/** Channel settings come in sets: a token without its verification secret (or the reverse) is refused. */
export function readEscalations(read: EnvReader, publicUrl: string): EscalationConfig {
  const pair = (
    tokenName: string,
    secretName: string,
  ): { token: string; secret: string } | null => {
    const token = read.string(tokenName, '', 512);
    const secret = read.string(secretName, '', 256);
    if ((token === '') !== (secret === '')) {
      read.problem(
        token === '' ? tokenName : secretName,
        `set ${tokenName} and ${secretName} together, or neither`,
      );
      return null;
    }
    return token === '' ? null : { token, secret };
  };
  const telegramPair = pair('TELEGRAM_BOT_TOKEN', 'TELEGRAM_WEBHOOK_SECRET');
  if (telegramPair !== null && !/^[A-Za-z0-9_-]{1,256}$/.test(telegramPair.secret)) {
    read.problem(
      'TELEGRAM_WEBHOOK_SECRET',
      "must be 1-256 of A-Z a-z 0-9 _ - (Telegram's secret_token alphabet)",
    );
  }
  const slackPair = pair('SLACK_BOT_TOKEN', 'SLACK_SIGNING_SECRET');
  const telegramApi = read.url('TELEGRAM_API_BASE_URL', HTTP) ?? 'https://api.telegram.org';
  const slackApi = read.url('SLACK_API_BASE_URL', HTTP) ?? 'https://slack.com/api';
  const smtpUrl = read.url('SMTP_URL', ['smtp:', 'smtps:']);
  const smtpFrom = read.string('SMTP_FROM', '', 254);
  if (smtpUrl !== null && smtpFrom === '')
    read.problem('SMTP_FROM', 'is required when SMTP_URL is set');
  return {
    sweepIntervalMs: read.integer('ESCALATION_SWEEP_INTERVAL_MS', 5_000, 100, 600_000),
    dashboardUrl: read.url('DASHBOARD_URL', HTTP) ?? `${publicUrl}/dashboard`,
    telegram:
      telegramPair === null
        ? null
        : {
            apiBaseUrl: telegramApi,
            botToken: telegramPair.token,
            webhookSecret: telegramPair.secret,
          },
    slack:
      slackPair === null
        ? null
        : { apiBaseUrl: slackApi, botToken: slackPair.token, signingSecret: slackPair.secret },
    smtp: smtpUrl === null ? null : { url: smtpUrl, from: smtpFrom },
  };
}
