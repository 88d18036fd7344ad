// The Slack channel against the devnet Web API stand-in: the posted message and its buttons, each
// kind of failure, Slack's v0 request signature (checked against Slack's published example) and
// the block_actions payload of a click.
import { type SlackStandIn, startSlackStandIn } from '../devnet/peers/slack';
import { type WebhookReceiver, startWebhookReceiver } from '../devnet/peers/webhookReceiver';
import { parseReplyText } from './message';
import {
  SLACK_SIGNATURE_HEADER,
  SLACK_TIMESTAMP_HEADER,
  createSlackAdapter,
  escapeSlackText,
  parseSlackInteraction,
  verifySlackSignature,
} from './slack';
import { deliveryError } from './test-support/delivery';
import { FIXED_NOW, SAMPLE_CODE, SAMPLE_RECIPIENT, sampleNotice } from './test-support/notices';
import { SAMPLE_INTENT_ID, sampleOutcome } from './test-support/outcomes';

const BOT_TOKEN = 'xoxb-1111-2222-devnetbottoken';
const SIGNING_SECRET = 'slack-signing-secret-devnet-0123';
const CHANNEL = 'C0APPROVALS';
const target = { kind: 'slack' as const, address: CHANNEL };

describe('slack adapter', () => {
  let slack: SlackStandIn;
  let adapter: ReturnType<typeof createSlackAdapter>;

  beforeAll(async () => {
    slack = await startSlackStandIn({ botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET });
    adapter = createSlackAdapter({
      apiBaseUrl: slack.url,
      botToken: BOT_TOKEN,
      now: () => FIXED_NOW,
    });
  });

  afterAll(async () => {
    await slack.stop();
  });

  it('posts the notice with Approve and Deny buttons whose values are the replies', async () => {
    const result = await adapter.send(target, sampleNotice({ item: 'Tiles <north> & <south>' }));
    const message = await slack.waitForMessage((posted) => posted.channel === CHANNEL);
    expect(result).toEqual({ externalId: message.ts });

    const blocks = message.blocks as [
      { type: string; text: { type: string; text: string } },
      { type: string; elements: Record<string, unknown>[] },
    ];
    expect(blocks[0]).toMatchObject({ type: 'section', text: { type: 'plain_text' } });
    for (const words of [
      '12.50 USDC on eip155:8453',
      SAMPLE_RECIPIENT,
      'Tiles <north> & <south>',
      "The amount is above the policy's approval threshold",
      '2026-03-14T09:30:00Z',
      'silence means denial',
      `APPROVE ${SAMPLE_CODE}`,
    ]) {
      expect(blocks[0].text.text).toContain(words);
    }
    expect(message.text).toContain('Tiles &lt;north&gt; &amp; &lt;south&gt;');
    expect(blocks[1].type).toBe('actions');
    expect(blocks[1].elements.map((button) => [button.type, button.style, button.value])).toEqual([
      ['button', 'primary', `APPROVE ${SAMPLE_CODE}`],
      ['button', 'danger', `DENY ${SAMPLE_CODE}`],
    ]);
  });

  it('posts an outcome notice as one plain-text section, with no actions block', async () => {
    const result = await adapter.sendOutcome(target, sampleOutcome());
    const message = await slack.waitForMessage(
      (posted) => posted.channel === CHANNEL && String(posted.text).includes(SAMPLE_INTENT_ID),
    );
    expect(result).toEqual({ externalId: message.ts });
    const blocks = message.blocks as Array<{ type: string; text: { text: string } }>;
    expect(blocks.map((block) => block.type)).toEqual(['section']);
    expect(blocks[0].text.text).toContain(
      'Purchase completed: domains.check (domain=taken.test) for 0.05025 USDT0.',
    );
    expect(blocks[0].text.text).toContain('Delivery: verified by RDAP at');
    expect(message.text).not.toMatch(/APPROVE|DENY/);
  });

  it('reports invalid_auth as a refusal that retrying cannot fix, without the token', async () => {
    const wrong = createSlackAdapter({ apiBaseUrl: slack.url, botToken: 'xoxb-wrong-token-value' });
    const error = await deliveryError(wrong.send(target, sampleNotice()));
    expect(error).toMatchObject({
      kind: 'slack',
      retryable: false,
      reason: 'REJECTED',
      status: 200,
      peerError: 'invalid_auth',
    });
    expect(`${error.message} ${JSON.stringify(error)}`).not.toMatch(/xoxb/);
  });

  it('reports a 500 as retryable, a rate limit with its Retry-After, and a 403 as not retryable', async () => {
    slack.failNext(500);
    expect(await deliveryError(adapter.send(target, sampleNotice()))).toMatchObject({
      retryable: true,
      reason: 'HTTP_STATUS',
      status: 500,
    });
    slack.failNext(429);
    expect(await deliveryError(adapter.send(target, sampleNotice()))).toMatchObject({
      retryable: true,
      status: 429,
      retryAfterSeconds: 1,
    });
    slack.failNext(403);
    expect(await deliveryError(adapter.send(target, sampleNotice()))).toMatchObject({
      retryable: false,
      status: 403,
    });
  });

  it('reports a refused connection as retryable', async () => {
    const gone = await startSlackStandIn({ botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET });
    await gone.stop();
    const offline = createSlackAdapter({ apiBaseUrl: gone.url, botToken: BOT_TOKEN });
    const error = await deliveryError(offline.send(target, sampleNotice()));
    expect(error).toMatchObject({ retryable: true, reason: 'NETWORK' });
    expect(`${error.message} ${JSON.stringify(error)}`).not.toContain(BOT_TOKEN);
  });

  it('refuses a target that is not a channel or user id, without calling Slack', async () => {
    const before = slack.sent.length;
    for (const address of ['#general', 'c0lower', '', 'C0A B']) {
      expect(
        await deliveryError(adapter.send({ kind: 'slack', address }, sampleNotice())),
      ).toMatchObject({ reason: 'INVALID_INPUT' });
    }
    expect(slack.sent.length).toBe(before);
  });

  describe('the way back', () => {
    let service: WebhookReceiver;

    beforeAll(async () => {
      service = await startWebhookReceiver();
      slack.setInteractivityUrl(`${service.url}/channels/slack/interactions`);
    });

    afterAll(async () => {
      await service.stop();
    });

    it('reads a signed button click as the clicker, the channel and the reply', async () => {
      await adapter.send(target, sampleNotice());
      expect(
        await slack.clickButton({
          userId: 'U0OWNER01',
          channelId: CHANNEL,
          value: `APPROVE ${SAMPLE_CODE}`,
        }),
      ).toBe(200);

      const request = await service.waitForRequest(
        (req) => req.path === '/channels/slack/interactions',
      );
      expect(
        verifySlackSignature({
          signingSecret: SIGNING_SECRET,
          timestamp: request.headers[SLACK_TIMESTAMP_HEADER],
          signature: request.headers[SLACK_SIGNATURE_HEADER],
          rawBody: request.rawBody,
          now: new Date(),
        }),
      ).toBe(true);
      const interaction = parseSlackInteraction(request.rawBody);
      expect(interaction).toMatchObject({
        userId: 'U0OWNER01',
        channelId: CHANNEL,
        value: `APPROVE ${SAMPLE_CODE}`,
        actionId: 'escalation_approve',
      });
      expect(parseReplyText(interaction!.value)).toEqual({
        decision: 'APPROVE',
        code: SAMPLE_CODE,
      });
      expect(interaction!.responseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/actions\/[0-9a-f]+$/);
    });
  });
});

describe('verifySlackSignature', () => {
  // The example from Slack's "Verifying requests from Slack".
  const example = {
    signingSecret: '8f742231b10e8888abcd99yyyzzz85a5',
    timestamp: '1531420618',
    signature: 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
    rawBody:
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar' +
      '&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2F' +
      'commands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
    now: new Date(1531420618 * 1000 + 60_000),
  };

  it("accepts Slack's published example within five minutes", () => {
    expect(verifySlackSignature(example)).toBe(true);
    expect(verifySlackSignature({ ...example, rawBody: Buffer.from(example.rawBody) })).toBe(true);
  });

  it('refuses a tampered body, a wrong secret and a malformed or repeated signature', () => {
    expect(
      verifySlackSignature({ ...example, rawBody: example.rawBody.replace('foobar', 'foobaz') }),
    ).toBe(false);
    expect(
      verifySlackSignature({ ...example, signingSecret: '8f742231b10e8888abcd99yyyzzz85a6' }),
    ).toBe(false);
    expect(verifySlackSignature({ ...example, signingSecret: '' })).toBe(false);
    expect(
      verifySlackSignature({ ...example, signature: example.signature.replace('v0=', 'v1=') }),
    ).toBe(false);
    expect(
      verifySlackSignature({ ...example, signature: [example.signature, example.signature] }),
    ).toBe(false);
    expect(verifySlackSignature({ ...example, signature: undefined })).toBe(false);
  });

  it('refuses a request older or newer than five minutes', () => {
    expect(verifySlackSignature({ ...example, now: new Date(1531420618 * 1000 + 301_000) })).toBe(
      false,
    );
    expect(verifySlackSignature({ ...example, now: new Date(1531420618 * 1000 - 301_000) })).toBe(
      false,
    );
    expect(verifySlackSignature({ ...example, timestamp: '1531420619' })).toBe(false);
  });
});

describe('parseSlackInteraction', () => {
  const payload = {
    type: 'block_actions',
    user: { id: 'U1' },
    channel: { id: 'C1' },
    actions: [{ action_id: 'escalation_deny', value: 'DENY x' }],
    response_url: 'https://hooks.slack.com/actions/T/1/x',
  };
  const form = (value: unknown) =>
    new URLSearchParams({ payload: JSON.stringify(value) }).toString();

  it('reads the clicker, the channel and the value', () => {
    expect(parseSlackInteraction(form(payload))).toEqual({
      userId: 'U1',
      channelId: 'C1',
      value: 'DENY x',
      actionId: 'escalation_deny',
      responseUrl: 'https://hooks.slack.com/actions/T/1/x',
    });
    const { channel: _channel, ...withoutChannel } = payload;
    expect(
      parseSlackInteraction(form({ ...withoutChannel, container: { channel_id: 'C2' } })),
    ).toMatchObject({ channelId: 'C2' });
  });

  it.each([
    ['an empty body', ''],
    ['no payload field', 'text=APPROVE'],
    ['a payload that is not JSON', 'payload=%7B'],
    ['another interaction type', form({ ...payload, type: 'view_submission' })],
    ['no user', form({ ...payload, user: undefined })],
    ['no channel', form({ ...payload, channel: undefined })],
    ['two actions', form({ ...payload, actions: [payload.actions[0], payload.actions[0]] })],
    ['an action without value', form({ ...payload, actions: [{ action_id: 'x' }] })],
  ])('refuses %s', (_what, body) => {
    expect(parseSlackInteraction(body)).toBeNull();
  });
});

describe('escapeSlackText', () => {
  it('escapes the three characters Slack reserves', () => {
    expect(escapeSlackText('<@U1> & <!channel>')).toBe('&lt;@U1&gt; &amp; &lt;!channel&gt;');
  });
});
