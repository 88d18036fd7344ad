// The Slack stand-in answers chat.postMessage as Slack does (HTTP 200 with ok:false on refusal) and
// turns a click into a block_actions interaction, form-encoded and signed with the signing secret
// exactly as Slack signs, POSTed to the interactivity URL.
import { createHmac } from 'node:crypto';
import { type SlackStandIn, startSlackStandIn } from './slack';
import { type WebhookReceiver, startWebhookReceiver } from './webhookReceiver';

const TOKEN = 'xoxb-1-2-devnet';
const SIGNING_SECRET = 'devnet-signing-secret';

describe('Slack stand-in', () => {
  let slack: SlackStandIn;
  let service: WebhookReceiver;

  const post = async (
    body: unknown,
    authorization: string | null = `Bearer ${TOKEN}`,
  ): Promise<{ status: number; body: any }> => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (authorization !== null) headers.authorization = authorization;
    const response = await fetch(`${slack.url}/chat.postMessage`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };

  const blocks = [
    { type: 'section', text: { type: 'plain_text', text: 'notice' } },
    {
      type: 'actions',
      block_id: 'decision',
      elements: [
        {
          type: 'button',
          action_id: 'approve',
          text: { type: 'plain_text', text: 'Approve' },
          value: 'APPROVE 1',
        },
      ],
    },
  ];

  beforeAll(async () => {
    slack = await startSlackStandIn({ botToken: TOKEN, signingSecret: SIGNING_SECRET });
    service = await startWebhookReceiver();
  });

  afterAll(async () => {
    await slack.stop();
    await service.stop();
  });

  it('listens on 127.0.0.1 only', () => {
    expect(new URL(slack.url).hostname).toBe('127.0.0.1');
  });

  it('posts and records a message, answering its channel and ts', async () => {
    const answer = await post({ channel: 'C0TEST', text: 'notice', blocks });
    expect(answer).toEqual({
      status: 200,
      body: {
        ok: true,
        channel: 'C0TEST',
        ts: expect.stringMatching(/^[0-9]+\.[0-9]{6}$/),
        message: expect.objectContaining({ text: 'notice', blocks }),
      },
    });
    expect(await slack.waitForMessage((message) => message.ts === answer.body.ts)).toEqual({
      channel: 'C0TEST',
      text: 'notice',
      blocks,
      ts: answer.body.ts,
    });
  });

  it('refuses a missing or wrong token with HTTP 200 and ok:false, recording nothing', async () => {
    const before = slack.sent.length;
    expect(await post({ channel: 'C0TEST', text: 'x' }, null)).toEqual({
      status: 200,
      body: { ok: false, error: 'not_authed' },
    });
    expect(await post({ channel: 'C0TEST', text: 'x' }, 'Bearer xoxb-wrong')).toEqual({
      status: 200,
      body: { ok: false, error: 'invalid_auth' },
    });
    expect(await post({ channel: 'nope', text: 'x' })).toEqual({
      status: 200,
      body: { ok: false, error: 'channel_not_found' },
    });
    expect(await post({ channel: 'C0TEST' })).toEqual({
      status: 200,
      body: { ok: false, error: 'no_text' },
    });
    expect(slack.sent.length).toBe(before);
  });

  it('fails the next call on request', async () => {
    slack.failNext(503);
    expect(await post({ channel: 'C0TEST', text: 'x' })).toEqual({
      status: 503,
      body: { ok: false, error: 'internal_error' },
    });
  });

  it('delivers a click as a signed block_actions interaction', async () => {
    slack.setInteractivityUrl(`${service.url}/slack/interactions`);
    const posted = await post({ channel: 'C0CLICK', text: 'notice', blocks });
    expect(
      await slack.clickButton({ userId: 'U0OWNER', channelId: 'C0CLICK', value: 'APPROVE 1' }),
    ).toBe(200);

    const request = await service.waitForRequest((req) => req.path === '/slack/interactions');
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const timestamp = request.headers['x-slack-request-timestamp'] as string;
    const expected = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${request.rawBody}`).digest('hex')}`;
    expect(request.headers['x-slack-signature']).toBe(expected);

    const payload = JSON.parse(new URLSearchParams(request.rawBody).get('payload')!);
    expect(payload).toMatchObject({
      type: 'block_actions',
      user: { id: 'U0OWNER' },
      channel: { id: 'C0CLICK' },
      container: { type: 'message', channel_id: 'C0CLICK', message_ts: posted.body.ts },
      actions: [{ type: 'button', action_id: 'approve', block_id: 'decision', value: 'APPROVE 1' }],
    });

    const followUp = await fetch(payload.response_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Approved.' }),
    });
    expect(followUp.status).toBe(200);
    expect((await slack.waitForResponse()).body).toEqual({ text: 'Approved.' });
  });

  it('cannot click a button that was never posted to that channel, nor call outside loopback', async () => {
    await expect(
      slack.clickButton({ userId: 'U0OWNER', channelId: 'C0OTHER', value: 'APPROVE 1' }),
    ).rejects.toThrow(/no message in C0OTHER/);
    expect(() => slack.setInteractivityUrl('https://example.com/slack')).toThrow(RangeError);
  });
});
