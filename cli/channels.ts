// The escalation channels a process uses: the configured ones (TELEGRAM_*, SLACK_*, SMTP_*), or on
// `npm start`'s embedded default (the devnet, nothing configured) the local stand-ins: a Telegram
// Bot API, a Slack Web API and an SMTP sink on 127.0.0.1, with fresh tokens and secrets. Builds the
// worker's adapters and the gateway's inbound verification, and registers the Telegram webhook and
// Slack interactivity URL once the gateway listens.
import { randomBytes } from 'node:crypto';
import { createChannelAdapters, type ChannelAdapters } from '../channels';
import type { ChannelInboundOptions } from '../gateway/channels/inbound';
import { startSlackStandIn } from '../devnet/peers/slack';
import { startSmtpSink } from '../devnet/peers/smtp';
import { startTelegramStandIn } from '../devnet/peers/telegram';
import type { EscalationConfig } from '../platform/config';

export interface EscalationChannels {
  readonly adapters: ChannelAdapters;
  readonly inbound: ChannelInboundOptions;
  /** The settings in effect (stand-ins filled in), for the start-up summary. */
  readonly settings: EscalationConfig;
  /** Points Telegram's webhook (and the Slack stand-in's interactivity URL) at the gateway. */
  registerGateway(gatewayUrl: string): Promise<void>;
  stop(): Promise<void>;
}

interface StandIns {
  /** The configured settings with the stand-ins filled in. */
  readonly settings: EscalationConfig;
  readonly stoppers: Array<() => Promise<void>>;
  readonly setSlackInteractivityUrl: ((url: string) => void) | null;
}

/** Starts a local stand-in for each channel not configured, with fresh tokens and secrets. */
async function startStandIns(
  config: EscalationConfig,
  out: (line: string) => void,
): Promise<StandIns> {
  const stoppers: Array<() => Promise<void>> = [];
  let settings = config;
  let setSlackInteractivityUrl: ((url: string) => void) | null = null;
  try {
    if (settings.telegram === null) {
      const botToken = `7000000001:${randomBytes(16).toString('hex')}`;
      const telegram = await startTelegramStandIn({ botToken });
      stoppers.push(() => telegram.stop());
      settings = {
        ...settings,
        telegram: {
          apiBaseUrl: telegram.url,
          botToken,
          webhookSecret: randomBytes(24).toString('hex'),
        },
      };
      out(`channels        telegram stand-in ${telegram.url}`);
    }
    if (settings.slack === null) {
      const botToken = `xoxb-devnet-${randomBytes(12).toString('hex')}`;
      const signingSecret = randomBytes(24).toString('hex');
      const slack = await startSlackStandIn({ botToken, signingSecret });
      stoppers.push(() => slack.stop());
      setSlackInteractivityUrl = (url) => slack.setInteractivityUrl(url);
      settings = { ...settings, slack: { apiBaseUrl: slack.url, botToken, signingSecret } };
      out(`channels        slack stand-in ${slack.url}`);
    }
    if (settings.smtp === null) {
      const sink = await startSmtpSink();
      stoppers.push(() => sink.stop());
      settings = { ...settings, smtp: { url: sink.url, from: 'spend-control@devnet.invalid' } };
      out(`channels        smtp sink ${sink.url}`);
    }
  } catch (error) {
    await stopAll(stoppers);
    throw error;
  }
  return { settings, stoppers, setSlackInteractivityUrl };
}

async function stopAll(stoppers: Array<() => Promise<void>>): Promise<void> {
  for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
}

/** The worker's side: one adapter per configured channel, plus the webhook reply URL. */
function adaptersOf(settings: EscalationConfig, publicUrl: string): ChannelAdapters {
  return createChannelAdapters({
    ...(settings.telegram
      ? {
          telegram: {
            apiBaseUrl: settings.telegram.apiBaseUrl,
            botToken: settings.telegram.botToken,
          },
        }
      : {}),
    ...(settings.slack
      ? { slack: { apiBaseUrl: settings.slack.apiBaseUrl, botToken: settings.slack.botToken } }
      : {}),
    ...(settings.smtp ? { smtp: settings.smtp } : {}),
    webhookReplyUrl: `${publicUrl}/channels/webhook/reply`,
  });
}

/** The gateway's side: the secrets that verify what Telegram and Slack send back. */
function inboundOf(settings: EscalationConfig, adapters: ChannelAdapters): ChannelInboundOptions {
  const telegramAdapter = adapters.telegram;
  return {
    ...(settings.telegram
      ? {
          telegram: {
            webhookSecret: settings.telegram.webhookSecret,
            ...(telegramAdapter
              ? {
                  answerCallbackQuery: (id: string, text: string) =>
                    telegramAdapter.answerCallbackQuery(id, text),
                }
              : {}),
          },
        }
      : {}),
    ...(settings.slack ? { slack: { signingSecret: settings.slack.signingSecret } } : {}),
  };
}

export async function prepareEscalationChannels(options: {
  config: EscalationConfig;
  /** PUBLIC_URL: webhook notices tell the owner's system to reply at <publicUrl>/channels/webhook/reply. */
  publicUrl: string;
  /** Start stand-ins for the channels that are not configured (the embedded devnet default). */
  standIns: boolean;
  out: (line: string) => void;
}): Promise<EscalationChannels> {
  const { settings, stoppers, setSlackInteractivityUrl } = options.standIns
    ? await startStandIns(options.config, options.out)
    : { settings: options.config, stoppers: [], setSlackInteractivityUrl: null };
  const adapters = adaptersOf(settings, options.publicUrl);
  const telegramAdapter = adapters.telegram;
  return {
    adapters,
    inbound: inboundOf(settings, adapters),
    settings,
    async registerGateway(gatewayUrl) {
      if (telegramAdapter !== undefined && settings.telegram !== null) {
        await telegramAdapter.setWebhook({
          url: `${gatewayUrl}/channels/telegram/webhook`,
          secretToken: settings.telegram.webhookSecret,
        });
      }
      setSlackInteractivityUrl?.(`${gatewayUrl}/channels/slack/interactivity`);
    },
    stop: () => stopAll(stoppers),
  };
}
