// The escalation channel variables: defaults, the pairs that must be set together, and redaction.
import { ConfigError, loadConfig } from '.';

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
}

describe('escalation configuration', () => {
  it('defaults to no chat channels, a 5 s worker round and a dashboard under PUBLIC_URL', () => {
    const config = loadConfig({ PUBLIC_URL: 'https://spend.example' });
    expect(config.escalations).toEqual({
      sweepIntervalMs: 5_000,
      dashboardUrl: 'https://spend.example/dashboard',
      telegram: null,
      slack: null,
      smtp: null,
    });
  });

  it('reads every channel and never prints its secrets', () => {
    const config = loadConfig({
      TELEGRAM_BOT_TOKEN: '123:telegram-token-value',
      TELEGRAM_WEBHOOK_SECRET: 'hook_secret-1',
      TELEGRAM_API_BASE_URL: 'http://127.0.0.1:9001/',
      SLACK_BOT_TOKEN: 'xoxb-slack-token-value',
      SLACK_SIGNING_SECRET: 'slack-signing-value',
      SMTP_URL: 'smtp://user:smtp-password-value@mail.example:587',
      SMTP_FROM: 'spend@example.com',
      ESCALATION_SWEEP_INTERVAL_MS: '250',
    });
    expect(config.escalations.telegram).toEqual({
      apiBaseUrl: 'http://127.0.0.1:9001',
      botToken: '123:telegram-token-value',
      webhookSecret: 'hook_secret-1',
    });
    expect(config.escalations.slack?.apiBaseUrl).toBe('https://slack.com/api');
    expect(config.escalations.sweepIntervalMs).toBe(250);
    const printed = JSON.stringify(config);
    for (const secret of [
      'telegram-token-value',
      'hook_secret-1',
      'slack-token-value',
      'slack-signing-value',
      'smtp-password-value',
    ]) {
      expect(printed).not.toContain(secret);
    }
  });

  it('refuses half-configured channels and bad values, naming the variable', () => {
    expect(problems({ TELEGRAM_BOT_TOKEN: '123:abc' })).toEqual([
      expect.stringMatching(/^TELEGRAM_WEBHOOK_SECRET: /),
    ]);
    expect(problems({ SLACK_SIGNING_SECRET: 'x' })).toEqual([
      expect.stringMatching(/^SLACK_BOT_TOKEN: /),
    ]);
    expect(
      problems({ TELEGRAM_BOT_TOKEN: '123:abc', TELEGRAM_WEBHOOK_SECRET: 'has spaces' }),
    ).toEqual([expect.stringMatching(/^TELEGRAM_WEBHOOK_SECRET: /)]);
    expect(problems({ SMTP_URL: 'smtp://mail.example' })).toEqual([
      expect.stringMatching(/^SMTP_FROM: /),
    ]);
    expect(problems({ SMTP_URL: 'http://mail.example', SMTP_FROM: 'a@b.example' })).toEqual([
      expect.stringMatching(/^SMTP_URL: /),
    ]);
    expect(problems({ ESCALATION_SWEEP_INTERVAL_MS: '5' })).toEqual([
      expect.stringMatching(/^ESCALATION_SWEEP_INTERVAL_MS: /),
    ]);
  });
});
