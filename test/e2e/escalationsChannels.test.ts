// Escalations through real channel peers: the owner binds Telegram, Slack and a webhook with link
// codes, the worker delivers each notice to the devnet stand-ins over HTTP, and replies come back
// through the gateway's verified channel routes: `APPROVE <code>` / `DENY <code>` typed, pressed or
// signed. Wrong, reused, unbound and late replies change nothing and are logged for the owner.
import { createHmac } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createChannelAdapters, type ChannelAdapters } from '../../channels';
import { signWebhookBody } from '../../channels/webhook';
import { NOW_MS } from '../../core/test-support/spend-fixtures';
import { startSlackStandIn, type SlackStandIn } from '../../devnet/peers/slack';
import { startSmtpSink, type SmtpSink } from '../../devnet/peers/smtp';
import { startTelegramStandIn, type TelegramStandIn } from '../../devnet/peers/telegram';
import { startWebhookReceiver, type WebhookReceiver } from '../../devnet/peers/webhookReceiver';
import {
  createEscalatingPolicy,
  escalatingIntent,
  pollStatus,
  preflight,
  subscribeToEscalations,
  waitForEscalationSubscribers,
} from '../support/escalations';
import { signIn } from '../support/siwe';
import { graphql, startTestStack, type TestStack } from '../support/stack';

const TELEGRAM_TOKEN = '7000000001:devnet-escalations';
const TELEGRAM_SECRET = 'telegram-webhook-secret-e2e';
const SLACK_TOKEN = 'xoxb-devnet-escalations';
const SLACK_SIGNING_SECRET = 'slack-signing-secret-e2e';
const CODE = /APPROVE ([0-9a-f]{24})/;

let clockMs = NOW_MS;
const now = (): Date => new Date(clockMs);
let telegram: TelegramStandIn;
let slack: SlackStandIn;
let receiver: WebhookReceiver;
let smtp: SmtpSink;
let adapters: ChannelAdapters;
let stack: TestStack;
/** The account behind each owner session, to sign in again after the test clock passes 30 minutes. */
const accounts = new Map<string, ReturnType<typeof privateKeyToAccount>>();

const START_LINK = `mutation ($kind: ChannelKind!, $address: String) {
  startChannelLink(kind: $kind, address: $address) { binding { bindingId state } linkCode secret instructions }
}`;
const BINDINGS = '{ channelBindings { kind state address replyFrom } }';
const RECORD = `query ($pollRef: ID!) { escalation(pollRef: $pollRef) { state resolvedVia events { kind channel sender } } }`;

async function startLink(token: string, kind: string, address: string | null = null) {
  const started = await graphql(stack.url, START_LINK, { kind, address }, token);
  expect(started.body.errors).toBeUndefined();
  return started.body.data.startChannelLink as {
    binding: { bindingId: string };
    linkCode: string;
    secret: string | null;
  };
}

async function record(token: string, pollRef: string) {
  return (await graphql(stack.url, RECORD, { pollRef }, token)).body.data.escalation as {
    state: string;
    resolvedVia: string | null;
    events: Array<{ kind: string; channel: string | null; sender: string | null }>;
  };
}

/** A Telegram-bound owner with a policy that escalates to telegram. */
async function telegramOwner(chatId: number) {
  const account = privateKeyToAccount(generatePrivateKey());
  const token = await signIn(stack.url, account);
  accounts.set(token, account);
  const policy = await createEscalatingPolicy(stack, account.address.toLowerCase(), {
    escalation: { timeoutMinutes: 30, channels: ['telegram'] },
  });
  const { linkCode } = await startLink(token, 'TELEGRAM');
  expect(await telegram.replyText({ chatId, userId: chatId, text: `/start ${linkCode}` })).toBe(
    200,
  );
  return { account, token, policy };
}

/** Preflights over the threshold and runs the worker: the escalation and its notice's code. */
async function escalateAndDeliver(
  policy: { policyId: string; policyHash: string },
  intent = escalatingIntent(policy, clockMs),
) {
  const escalated = await preflight(stack, policy, intent);
  expect(escalated.decision).toBe('ESCALATED_THRESHOLD');
  await stack.stack.worker!.runOnce();
  return { intent, pollRef: escalated.escalation.pollRef as string };
}

beforeAll(async () => {
  telegram = await startTelegramStandIn({ botToken: TELEGRAM_TOKEN, now });
  slack = await startSlackStandIn({
    botToken: SLACK_TOKEN,
    signingSecret: SLACK_SIGNING_SECRET,
    now,
  });
  receiver = await startWebhookReceiver();
  smtp = await startSmtpSink();
  adapters = createChannelAdapters({
    telegram: { apiBaseUrl: telegram.url, botToken: TELEGRAM_TOKEN },
    slack: { apiBaseUrl: slack.url, botToken: SLACK_TOKEN },
    smtp: { url: smtp.url, from: 'spend-control@devnet.invalid' },
    now,
  });
  stack = await startTestStack({
    now,
    escalationWorker: { adapters, dashboardBaseUrl: 'http://127.0.0.1/dashboard', intervalMs: 0 },
    channelInbound: {
      telegram: {
        webhookSecret: TELEGRAM_SECRET,
        answerCallbackQuery: (id, text) => adapters.telegram!.answerCallbackQuery(id, text),
      },
      slack: { signingSecret: SLACK_SIGNING_SECRET },
    },
  });
  await adapters.telegram!.setWebhook({
    url: `${stack.url}/channels/telegram/webhook`,
    secretToken: TELEGRAM_SECRET,
  });
  slack.setInteractivityUrl(`${stack.url}/channels/slack/interactivity`);
});

afterAll(async () => {
  await stack?.stop();
  await telegram?.stop();
  await slack?.stop();
  await receiver?.stop();
  await smtp?.stop();
});

beforeEach(() => {
  clockMs = NOW_MS;
});

test('Telegram: the bound chat gets the notice, `APPROVE <code>` approves it live, the intent then preflights APPROVED, a changed amount escalates again', async () => {
  const { token, policy } = await telegramOwner(4242);
  expect((await graphql(stack.url, BINDINGS, {}, token)).body.data.channelBindings).toEqual([
    { kind: 'TELEGRAM', state: 'ACTIVE', address: '4242', replyFrom: '4242' },
  ]);
  const socket = subscribeToEscalations(stack, token);
  try {
    await waitForEscalationSubscribers(stack, 1);
    const { intent, pollRef } = await escalateAndDeliver(policy);
    const notice = await telegram.waitForMessage(
      (message) => message.chatId === '4242' && message.text.includes(pollRef),
    );
    expect(notice.text).toContain('1.50 USDT0');
    expect(notice.text).toContain(intent.recipient as string);
    expect(notice.text).toContain('EURUSD tick history, 30 days');
    expect(notice.text).toContain('approval threshold');
    expect(notice.text).toContain(
      new Date(NOW_MS + 30 * 60_000).toISOString().replace('.000Z', 'Z'),
    );
    expect(notice.text).toMatch(/silence means denial/i);
    const code = CODE.exec(notice.text)![1];
    await socket.waitFor((message) => message.pollRef === pollRef && message.state === 'PENDING');

    expect(
      await telegram.replyText({
        chatId: 4242,
        userId: 4242,
        text: `  approve ${code.toUpperCase()}\n`,
      }),
    ).toBe(200);
    await socket.waitFor((message) => message.pollRef === pollRef && message.state === 'APPROVED');
    expect((await pollStatus(stack, pollRef)).body).toMatchObject({
      state: 'APPROVED',
      outcome: 'APPROVED',
    });
    expect((await record(token, pollRef)).resolvedVia).toBe('telegram');

    expect((await preflight(stack, policy, intent)).decision).toBe('APPROVED');
    const changed = await preflight(stack, policy, { ...intent, amount: '1700000' });
    expect(changed.decision).toBe('ESCALATED_THRESHOLD');
    expect(changed.escalation.pollRef).not.toBe(pollRef);

    // The code is used: replaying it changes nothing and is logged on the escalation.
    await telegram.replyText({ chatId: 4242, userId: 4242, text: `DENY ${code}` });
    const replayed = await record(token, pollRef);
    expect(replayed.state).toBe('APPROVED');
    expect(replayed.events.map((event) => event.kind)).toEqual([
      'CREATED',
      'DELIVERY_SENT',
      'APPROVED',
      'APPROVAL_USED',
      'REPLY_CODE_REUSED',
    ]);
  } finally {
    await socket.close();
  }
});

test('Telegram: a pressed Deny button denies; wrong codes, unbound chats and late replies change nothing and are logged', async () => {
  const { token, policy } = await telegramOwner(5151);
  const first = await escalateAndDeliver(policy);
  const firstCode = CODE.exec(
    (await telegram.waitForMessage((m) => m.text.includes(first.pollRef))).text,
  )![1];
  expect(
    await telegram.pressButton({ chatId: 5151, userId: 5151, data: `DENY ${firstCode}` }),
  ).toBe(200);
  expect((await pollStatus(stack, first.pollRef)).body).toMatchObject({
    state: 'DENIED',
    outcome: 'DENIED',
  });
  await telegram.waitForCallbackAnswer((answer) => answer.text?.includes('DENIED') === true);

  const second = await escalateAndDeliver(policy);
  const code = CODE.exec(
    (await telegram.waitForMessage((m) => m.text.includes(second.pollRef))).text,
  )![1];
  await telegram.replyText({ chatId: 5151, userId: 5151, text: `APPROVE ${'0'.repeat(24)}` });
  await telegram.replyText({ chatId: 999, userId: 999, text: `APPROVE ${code}` });
  expect((await pollStatus(stack, second.pollRef)).body.state).toBe('PENDING');
  clockMs += 31 * 60_000;
  await telegram.replyText({ chatId: 5151, userId: 5151, text: `APPROVE ${code}` });
  expect((await pollStatus(stack, second.pollRef)).body).toMatchObject({
    state: 'EXPIRED',
    outcome: 'DENIED',
    reason: 'ESCALATION_EXPIRED_DEFAULT_DENY',
  });

  const freshToken = await signIn(stack.url, accounts.get(token)!);
  const logged = await record(freshToken, second.pollRef);
  expect(logged.events.map((event) => [event.kind, event.sender])).toEqual([
    ['CREATED', null],
    expect.arrayContaining(['DELIVERY_SENT']),
    ['REPLY_UNBOUND_SENDER', '999/999'],
    ['EXPIRED', null],
    ['REPLY_AFTER_EXPIRY', '5151/5151'],
  ]);
  const unmatched = await graphql(
    stack.url,
    '{ unmatchedChannelReplies { kind channel sender } }',
    {},
    freshToken,
  );
  expect(unmatched.body.data.unmatchedChannelReplies).toEqual([
    { kind: 'REPLY_UNKNOWN_CODE', channel: 'telegram', sender: '5151/5151' },
  ]);
});

function slackSigned(body: string): Record<string, string> {
  const timestamp = String(Math.floor(clockMs / 1000));
  const signature = `v0=${createHmac('sha256', SLACK_SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return {
    'content-type': 'application/x-www-form-urlencoded',
    'x-slack-request-timestamp': timestamp,
    'x-slack-signature': signature,
  };
}

test('Slack: linked by a signed slash command, the notice is posted with buttons and a click approves it', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const token = await signIn(stack.url, account);
  const policy = await createEscalatingPolicy(stack, account.address.toLowerCase(), {
    escalation: { timeoutMinutes: 10, channels: ['slack'] },
  });
  const { linkCode } = await startLink(token, 'SLACK');
  const command = new URLSearchParams({
    command: '/spendctl',
    text: `link ${linkCode}`,
    channel_id: 'C0OWNER1',
    user_id: 'U0OWNER1',
  }).toString();
  const forged = await fetch(`${stack.url}/channels/slack/interactivity`, {
    method: 'POST',
    headers: { ...slackSigned(command), 'x-slack-signature': `v0=${'0'.repeat(64)}` },
    body: command,
  });
  expect(forged.status).toBe(401);
  const linked = await fetch(`${stack.url}/channels/slack/interactivity`, {
    method: 'POST',
    headers: slackSigned(command),
    body: command,
  });
  expect(((await linked.json()) as { outcome: string }).outcome).toBe('LINKED');

  const { pollRef, intent } = await escalateAndDeliver(policy);
  const posted = await slack.waitForMessage(
    (message) => message.channel === 'C0OWNER1' && JSON.stringify(message).includes(pollRef),
  );
  const code = CODE.exec(JSON.stringify(posted))![1];
  expect(
    await slack.clickButton({
      userId: 'U0OWNER2',
      channelId: 'C0OWNER1',
      value: `APPROVE ${code}`,
    }),
  ).toBe(200);
  expect((await pollStatus(stack, pollRef)).body.state).toBe('PENDING');
  expect(
    await slack.clickButton({
      userId: 'U0OWNER1',
      channelId: 'C0OWNER1',
      value: `APPROVE ${code}`,
    }),
  ).toBe(200);
  expect((await pollStatus(stack, pollRef)).body).toMatchObject({
    state: 'APPROVED',
    outcome: 'APPROVED',
  });
  expect((await record(token, pollRef)).resolvedVia).toBe('slack');
  expect((await preflight(stack, policy, intent)).decision).toBe('APPROVED');
});

test('webhook: linked by a signed request, the HMAC-signed notice reaches the owner’s URL and a signed reply approves it', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const token = await signIn(stack.url, account);
  const policy = await createEscalatingPolicy(stack, account.address.toLowerCase(), {
    escalation: { timeoutMinutes: 30, channels: ['webhook'] },
  });
  const { linkCode, secret } = await startLink(token, 'WEBHOOK', `${receiver.url}/hooks/owner`);
  const post = (body: string, key: string) => {
    const timestamp = String(Math.floor(clockMs / 1000));
    return fetch(`${stack.url}/channels/webhook/reply`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-spend-control-timestamp': timestamp,
        'x-spend-control-signature': signWebhookBody(key, timestamp, body),
      },
      body,
    });
  };
  const link = JSON.stringify({ type: 'channel.link', code: linkCode });
  expect((await post(link, 'not-the-secret-at-all')).status).toBe(401);
  expect(((await (await post(link, secret!)).json()) as { outcome: string }).outcome).toBe(
    'LINKED',
  );

  const { pollRef, intent } = await escalateAndDeliver(policy);
  const delivered = await receiver.waitForRequest((request) => request.rawBody.includes(pollRef));
  expect(delivered.path).toBe('/hooks/owner');
  const timestamp = String(delivered.headers['x-spend-control-timestamp']);
  expect(delivered.headers['x-spend-control-signature']).toBe(
    signWebhookBody(secret!, timestamp, delivered.rawBody),
  );
  const payload = JSON.parse(delivered.rawBody) as { code: string; onExpiry: string };
  expect(payload.onExpiry).toBe('DENIED');

  const reply = JSON.stringify({
    type: 'escalation.reply',
    pollRef,
    reply: `APPROVE ${payload.code}`,
  });
  expect((await post(reply, 'not-the-secret-at-all')).status).toBe(401);
  expect((await pollStatus(stack, pollRef)).body.state).toBe('PENDING');
  const accepted = await post(reply, secret!);
  expect(await accepted.json()).toMatchObject({ outcome: 'ACCEPTED', state: 'APPROVED', pollRef });
  expect((await record(token, pollRef)).resolvedVia).toBe('webhook');
  expect((await preflight(stack, policy, intent)).decision).toBe('APPROVED');
});

test('a channel that fails is logged on the escalation and retried with backoff; the clock still runs', async () => {
  const { token, policy } = await telegramOwner(6262);
  telegram.failNext(500, 1);
  const { pollRef } = await escalateAndDeliver(policy);
  let logged = await record(token, pollRef);
  expect(logged.events.map((event) => event.kind)).toEqual(['CREATED', 'DELIVERY_FAILED']);
  clockMs += 1_000;
  await stack.stack.worker!.runOnce();
  await telegram.waitForMessage((message) => message.text.includes(pollRef));
  logged = await record(token, pollRef);
  expect(logged.events.map((event) => event.kind)).toEqual([
    'CREATED',
    'DELIVERY_FAILED',
    'DELIVERY_SENT',
  ]);
});

test('email: an unconfirmed address gets only its single-use confirmation link; once confirmed, notices with the dashboard link and no reply code, and the resolution', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const token = await signIn(stack.url, account);
  const policy = await createEscalatingPolicy(stack, account.address.toLowerCase(), {
    escalation: { timeoutMinutes: 30, channels: ['email', 'dashboard'] },
  });
  const started = await startLink(token, 'EMAIL', 'owner@example.com');
  expect(started.linkCode).toBeNull();
  const mailsTo = () =>
    smtp.messages.filter((message) => message.envelopeTo.includes('owner@example.com'));

  // Unconfirmed: the escalation's notice is not mailed; only the confirmation is.
  const unconfirmed = await escalateAndDeliver(policy);
  await stack.stack.worker!.runOnce();
  expect(mailsTo()).toHaveLength(1);
  const confirmation = mailsTo()[0]!;
  expect(confirmation.subject).toMatch(/confirm/i);
  expect(confirmation.text).not.toContain(unconfirmed.pollRef);
  const link = new URL(/(http\S+\/channels\/email\/confirm\S+)/.exec(confirmation.text!)![1]!);
  expect((await graphql(stack.url, BINDINGS, {}, token)).body.data.channelBindings).toEqual([
    { kind: 'EMAIL', state: 'PENDING', address: 'owner@example.com', replyFrom: null },
  ]);

  // Opening the link only shows a button; its POST confirms, once.
  const confirmAt = `${stack.url}/channels/email/confirm`;
  const opened = await fetch(`${confirmAt}${link.search}`);
  expect(opened.status).toBe(200);
  expect(await opened.text()).toContain('<form method="post"');
  const form = new URLSearchParams({
    binding: link.searchParams.get('binding')!,
    code: link.searchParams.get('code')!,
  });
  const post = () =>
    fetch(confirmAt, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
  const confirmed = await post();
  expect(confirmed.status).toBe(200);
  expect(await confirmed.text()).toMatch(/Confirmed/);
  expect((await post()).status).toBe(400);
  expect((await graphql(stack.url, BINDINGS, {}, token)).body.data.channelBindings).toEqual([
    { kind: 'EMAIL', state: 'ACTIVE', address: 'owner@example.com', replyFrom: null },
  ]);

  const { pollRef } = await escalateAndDeliver(
    policy,
    escalatingIntent(policy, clockMs, { amount: '1600000' }),
  );
  const mail = await smtp.waitForMessage(
    (message) =>
      message.envelopeTo.includes('owner@example.com') && (message.text ?? '').includes(pollRef),
  );
  expect(mail.text).toContain(`http://127.0.0.1/dashboard/escalations/${pollRef}`);
  expect(mail.text).toContain('1.60 USDT0');
  expect(mail.raw).not.toMatch(/APPROVE [0-9a-f]{24}/);
  expect((await record(token, pollRef)).events.map((event) => [event.kind, event.channel])).toEqual(
    [
      ['CREATED', null],
      ['DELIVERY_SENT', 'email'],
    ],
  );

  // The owner denies in the dashboard: the bound address hears the resolution.
  const denied = await graphql(
    stack.url,
    'mutation ($pollRef: ID!) { decideEscalation(pollRef: $pollRef, decision: DENY) { state } }',
    { pollRef },
    token,
  );
  expect(denied.body.data.decideEscalation.state).toBe('DENIED');
  await stack.stack.worker!.runOnce();
  const resolution = await smtp.waitForMessage(
    (message) =>
      message.envelopeTo.includes('owner@example.com') &&
      (message.subject ?? '').startsWith('Spend request denied'),
  );
  expect(resolution.text).toContain(pollRef);
  expect(resolution.text).toContain('1.60 USDT0');
});
