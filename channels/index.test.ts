// Which adapters a configuration yields: webhook and dashboard always, the others when given
// their settings; the dashboard adapter sends nothing, because the dashboard reads GraphQL.
import { type TelegramStandIn, startTelegramStandIn } from '../devnet/peers/telegram';
import { CHANNEL_KINDS, createChannelAdapters } from './index';
import { FIXED_NOW, sampleNotice } from './test-support/notices';

describe('createChannelAdapters', () => {
  it('always has webhook and dashboard, and nothing unconfigured', () => {
    const adapters = createChannelAdapters({});
    expect(Object.keys(adapters).sort()).toEqual(['dashboard', 'webhook']);
    expect(adapters.webhook.kind).toBe('webhook');
    expect(adapters.dashboard.kind).toBe('dashboard');
  });

  it('adds telegram, slack and email when configured, each under its own kind', () => {
    const adapters = createChannelAdapters({
      telegram: { apiBaseUrl: 'http://127.0.0.1:9', botToken: '1:abc' },
      slack: { apiBaseUrl: 'http://127.0.0.1:9', botToken: 'xoxb-1' },
      smtp: { url: 'smtp://127.0.0.1:9', from: 'noreply@example.test' },
    });
    expect(Object.keys(adapters).sort()).toEqual([...CHANNEL_KINDS].sort());
    for (const kind of CHANNEL_KINDS) expect(adapters[kind]?.kind).toBe(kind);
  });

  it('hands the injected clock and fetch to the adapters', async () => {
    const telegram: TelegramStandIn = await startTelegramStandIn({ botToken: '1:abc' });
    try {
      let fetchCalls = 0;
      const adapters = createChannelAdapters({
        telegram: { apiBaseUrl: telegram.url, botToken: '1:abc' },
        now: () => FIXED_NOW,
        fetch: (input, init) => {
          fetchCalls += 1;
          return fetch(input, init);
        },
      });
      await adapters.telegram!.send({ kind: 'telegram', address: '99' }, sampleNotice());
      expect(fetchCalls).toBe(1);
      expect((await telegram.waitForMessage()).text).toContain('(UTC, 30 minutes from now)');
    } finally {
      await telegram.stop();
    }
  });

  it('has a dashboard adapter that sends nothing and reports no external id', async () => {
    const { dashboard } = createChannelAdapters();
    await expect(
      dashboard.send({ kind: 'dashboard', address: 'owner' }, sampleNotice()),
    ).resolves.toEqual({ externalId: null });
  });

  it('refuses settings it cannot use, naming the setting and not the token', () => {
    expect(() =>
      createChannelAdapters({ telegram: { apiBaseUrl: 'not a url', botToken: 'secret-token' } }),
    ).toThrow(/apiBaseUrl/);
    expect(() =>
      createChannelAdapters({ slack: { apiBaseUrl: 'http://127.0.0.1:9', botToken: 'has space' } }),
    ).toThrow(/^slack botToken must/);
    expect(() =>
      createChannelAdapters({ smtp: { url: 'http://127.0.0.1', from: 'a@b.c' } }),
    ).toThrow(/smtpUrl/);
    expect(() => createChannelAdapters({ webhookReplyUrl: 'ftp://x' })).toThrow(/replyUrl/);
  });
});
