// The owner is told the outcome of a purchase on their bound channels: whole purchases through the
// gateway on the devnet chains (the official x402 client funds, the merchant is paid on 8453, the
// devnet RDAP registry is asked), then the escalation worker's notice job delivers the outcome to
// the Telegram stand-in and to a webhook receiver, both bound with link codes. COMPLETED names the
// intent, capability, amount and the registry's confirmation; a merchant that lies ends in
// MANUAL_REVIEW and the notice says so; the webhook body verifies with the binding's secret; a
// failing channel is retried; another policy's channels receive nothing of it.
import { type ChannelAdapters, createChannelAdapters } from '../../channels';
import {
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  signWebhookBody,
  verifyWebhookReply,
} from '../../channels/webhook';
import type { DevnetChains } from '../../devnet/chains';
import type { DomainsMerchant } from '../../devnet/merchants/domains/server';
import { startTelegramStandIn, type TelegramStandIn } from '../../devnet/peers/telegram';
import { startWebhookReceiver, type WebhookReceiver } from '../../devnet/peers/webhookReceiver';
import type { DevnetRdapRegistry } from '../../devnet/rdap/registry';
import { type ConsumerIntentRow, getConsumerIntent } from '../../subgraphs/intent/consumer/store';
import type { ConsumerRails } from '../../subgraphs/kit';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { graphql, type TestStack } from '../support/stack';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { purchase, untilIntent } from '../support/purchases';

const TELEGRAM_TOKEN = '7000000001:devnet-outcomes';
const TELEGRAM_SECRET = 'telegram-webhook-secret-outcomes';
const START_LINK = `mutation ($kind: ChannelKind!, $address: String) {
  startChannelLink(kind: $kind, address: $address) { binding { bindingId state } linkCode secret }
}`;

let devnet: DevnetChains;
let merchant: DomainsMerchant;
let registry: DevnetRdapRegistry;
let telegram: TelegramStandIn;
let receiver: WebhookReceiver;
let adapters: ChannelAdapters;
let rails: ConsumerRails;
let stack: TestStack;
let world: ConsumerWorld;

interface BoundOwner {
  readonly consumer: TestConsumer;
  readonly chatId: string;
  readonly hookPath: string;
  readonly webhookSecret: string;
}
let buyer: BoundOwner;
let other: BoundOwner;

async function startLink(token: string, kind: string, address: string | null = null) {
  const started = await graphql(stack.url, START_LINK, { kind, address }, token);
  expect(started.body.errors).toBeUndefined();
  return started.body.data.startChannelLink as { linkCode: string; secret: string | null };
}

/** A consumer whose owner binds a Telegram chat and a webhook, both listed by the policy. */
async function boundOwner(chatId: number, hookPath: string): Promise<BoundOwner> {
  const consumer = await newConsumer(stack, devnet, {
    mintAtomic: 10_000_000n,
    policy: {
      escalateAbove: '5.00',
      escalation: { timeoutMinutes: 30, channels: ['telegram', 'webhook'] },
    },
  });
  const telegramLink = await startLink(consumer.owner, 'TELEGRAM');
  expect(
    await telegram.replyText({ chatId, userId: chatId, text: `/start ${telegramLink.linkCode}` }),
  ).toBe(200);
  const webhookLink = await startLink(consumer.owner, 'WEBHOOK', `${receiver.url}${hookPath}`);
  const secret = webhookLink.secret!;
  const body = JSON.stringify({ type: 'channel.link', code: webhookLink.linkCode });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const linked = await fetch(`${stack.url}/channels/webhook/reply`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [WEBHOOK_TIMESTAMP_HEADER]: timestamp,
      [WEBHOOK_SIGNATURE_HEADER]: signWebhookBody(secret, timestamp, body),
    },
    body,
  });
  expect(((await linked.json()) as { outcome: string }).outcome).toBe('LINKED');
  return { consumer, chatId: String(chatId), hookPath, webhookSecret: secret };
}

beforeAll(async () => {
  telegram = await startTelegramStandIn({ botToken: TELEGRAM_TOKEN });
  receiver = await startWebhookReceiver();
  adapters = createChannelAdapters({
    telegram: { apiBaseUrl: telegram.url, botToken: TELEGRAM_TOKEN },
  });
  world = await startConsumerWorld({
    rdap: true,
    stack: {
      // Notice rounds are stepped by hand with runOnce.
      escalationWorker: { adapters, dashboardBaseUrl: 'http://127.0.0.1/dashboard', intervalMs: 0 },
      channelInbound: {
        telegram: {
          webhookSecret: TELEGRAM_SECRET,
          answerCallbackQuery: (id, text) => adapters.telegram!.answerCallbackQuery(id, text),
        },
      },
    },
  });
  ({ devnet, merchant, rails, stack } = world);
  registry = world.registry!;
  await adapters.telegram!.setWebhook({
    url: `${stack.url}/channels/telegram/webhook`,
    secretToken: TELEGRAM_SECRET,
  });
  buyer = await boundOwner(7101, '/hooks/buyer');
  other = await boundOwner(7202, '/hooks/other');
}, 120_000);

afterAll(async () => {
  await world?.stop();
  await receiver?.stop();
  await telegram?.stop();
});

afterEach(() => {
  merchant.resetFaults();
});

/** Reads the intent until it reaches an owner outcome (the awake worker moves it; nothing is timed). */
async function outcomeOf(intentId: string): Promise<ConsumerIntentRow> {
  return untilIntent(world, intentId, (row) =>
    ['COMPLETED', 'MANUAL_REVIEW', 'REFUNDED'].includes(row.state),
  );
}

async function deliveriesOf(intentId: string) {
  const rows = await stack.db.pool.query<{
    kind: string;
    state: string;
    outcome: string;
    attempts: number;
    poll_ref: string | null;
  }>(
    `SELECT b.kind, d.state, d.outcome, d.attempts, d.poll_ref
       FROM policy.channel_deliveries d JOIN policy.channel_bindings b USING (binding_id)
      WHERE d.intent_id = $1 ORDER BY b.kind`,
    [intentId],
  );
  return rows.rows;
}

function parsed(rawBody: string): Record<string, any> {
  return JSON.parse(rawBody) as Record<string, any>;
}

test('COMPLETED: the owner’s Telegram chat and webhook are told, naming the intent, capability, amount and the registry’s confirmation; the webhook body verifies with the binding’s secret', async () => {
  const intentId = await purchase(world, buyer.consumer, 'taken.test');
  expect((await outcomeOf(intentId)).state).toBe('COMPLETED');
  // Queued in the transaction of the move: one delivery per bound channel, before any round.
  expect(await deliveriesOf(intentId)).toEqual([
    { kind: 'telegram', state: 'PENDING', outcome: 'COMPLETED', attempts: 0, poll_ref: null },
    { kind: 'webhook', state: 'PENDING', outcome: 'COMPLETED', attempts: 0, poll_ref: null },
  ]);
  await stack.stack.worker!.runOnce();

  const chat = await telegram.waitForMessage(
    (message) => message.chatId === buyer.chatId && message.text.includes(intentId),
  );
  expect(chat.text.split('\n')[0]).toBe(
    'Purchase completed: domains.check (domain=taken.test) for 0.05025 USDT0.',
  );
  expect(chat.text).toContain(`Intent: ${intentId}`);
  expect(chat.text).toContain(`Amount: 0.05025 USDT0 on ${rails.funding.network}`);
  expect(chat.text).toContain(`Delivery: verified by RDAP at ${registry.url}/domain/taken.test`);
  expect(chat.text).toContain('Finding: the registry agrees with the merchant');
  expect(chat.text).toContain(`Dashboard: http://127.0.0.1/dashboard/consumer/intents/${intentId}`);
  expect(chat.replyMarkup).toBeNull();
  expect(chat.text).not.toMatch(/APPROVE|DENY/);

  const hook = await receiver.waitForRequest(
    (request) => request.path === buyer.hookPath && request.rawBody.includes(intentId),
  );
  const check = {
    timestamp: hook.headers[WEBHOOK_TIMESTAMP_HEADER],
    signature: hook.headers[WEBHOOK_SIGNATURE_HEADER],
    rawBody: hook.rawBody,
    now: new Date(),
  };
  expect(verifyWebhookReply({ ...check, secret: buyer.webhookSecret })).toBe(true);
  expect(verifyWebhookReply({ ...check, secret: other.webhookSecret })).toBe(false);
  const body = parsed(hook.rawBody);
  expect(body).toMatchObject({
    type: 'consumer_intent.outcome',
    intentId,
    outcome: 'COMPLETED',
    policyId: buyer.consumer.policy.policyId,
    capability: 'domains.check',
    params: 'domain=taken.test',
    amount: '0.05025',
    asset: 'USDT0',
    network: rails.funding.network,
    reason: null,
    delivery: { verified: true, method: 'RDAP', source: `${registry.url}/domain/taken.test` },
    humanReview: false,
  });
  expect(body).not.toHaveProperty('code');
  // Nothing secret: neither session, nor the signed payment authorization.
  const row = (await getConsumerIntent(stack.db.pool, intentId))!;
  const authorization = JSON.stringify(row.settlement);
  const signatures = authorization.match(/0x[0-9a-f]{130}/gi) ?? [];
  for (const secret of [buyer.consumer.session, buyer.consumer.owner, ...signatures]) {
    expect(hook.rawBody).not.toContain(secret);
    expect(chat.text).not.toContain(secret);
  }
  expect((await deliveriesOf(intentId)).map((delivery) => delivery.state)).toEqual([
    'SENT',
    'SENT',
  ]);
});

test('the merchant lies → MANUAL_REVIEW: the notice gives the contradiction, that a person reviews it and nothing is re-sent', async () => {
  merchant.setFaults({ lieAboutAvailability: true });
  const intentId = await purchase(world, buyer.consumer, 'example.test');
  const reviewed = await outcomeOf(intentId);
  expect(reviewed.state).toBe('MANUAL_REVIEW');
  expect(reviewed.stateReason).toMatch(/^DELIVERY_CONTRADICTED: /);
  await stack.stack.worker!.runOnce();

  const chat = await telegram.waitForMessage(
    (message) => message.chatId === buyer.chatId && message.text.includes(intentId),
  );
  expect(chat.text.split('\n')[0]).toBe(
    'Purchase held for review: domains.check (domain=example.test) for 0.05025 USDT0.',
  );
  expect(chat.text).toContain(
    'Why: The registry contradicts what the merchant said it delivered: the merchant was paid, but its answer does not match the registry. (DELIVERY_CONTRADICTED)',
  );
  expect(chat.text).toContain(
    `Delivery: not verified (RDAP at ${registry.url}/domain/example.test)`,
  );
  expect(chat.text).toContain(
    'Finding: the registry contradicts the merchant (the merchant said example.test is available)',
  );
  expect(chat.text).toContain(
    'A person at the service reviews this purchase. Nothing is re-sent to the merchant and nothing more is paid while it is reviewed.',
  );

  const hook = await receiver.waitForRequest(
    (request) => request.path === buyer.hookPath && request.rawBody.includes(intentId),
  );
  expect(
    verifyWebhookReply({
      secret: buyer.webhookSecret,
      timestamp: hook.headers[WEBHOOK_TIMESTAMP_HEADER],
      signature: hook.headers[WEBHOOK_SIGNATURE_HEADER],
      rawBody: hook.rawBody,
      now: new Date(),
    }),
  ).toBe(true);
  expect(parsed(hook.rawBody)).toMatchObject({
    type: 'consumer_intent.outcome',
    intentId,
    outcome: 'MANUAL_REVIEW',
    reason: { code: 'DELIVERY_CONTRADICTED' },
    delivery: { verified: false, method: 'RDAP', source: `${registry.url}/domain/example.test` },
    humanReview: true,
  });
});

test('a channel that fails is retried by the same job with its backoff; the other channel is not sent twice', async () => {
  // An unregistered name (the merchant says available, the registry answers 404): COMPLETED too.
  const intentId = await purchase(world, buyer.consumer, `free-${Date.now().toString(36)}.test`);
  expect((await outcomeOf(intentId)).state).toBe('COMPLETED');
  telegram.failNext(500, 1);
  await stack.stack.worker!.runOnce();
  const failed = await stack.db.pool.query<{
    state: string;
    attempts: number;
    last_error: string;
    waits: boolean;
  }>(
    `SELECT d.state, d.attempts, d.last_error, d.next_attempt_at > now() AS waits
       FROM policy.channel_deliveries d JOIN policy.channel_bindings b USING (binding_id)
      WHERE d.intent_id = $1 AND b.kind = 'telegram'`,
    [intentId],
  );
  expect(failed.rows).toEqual([
    { state: 'PENDING', attempts: 1, last_error: expect.stringMatching(/500/), waits: true },
  ]);
  // Move the backoff's clock of this row only, then the next round sends it.
  await stack.db.pool.query(
    `UPDATE policy.channel_deliveries SET next_attempt_at = now() WHERE intent_id = $1 AND state = 'PENDING'`,
    [intentId],
  );
  await stack.stack.worker!.runOnce();
  await telegram.waitForMessage(
    (message) => message.chatId === buyer.chatId && message.text.includes(intentId),
  );
  expect(await deliveriesOf(intentId)).toEqual([
    { kind: 'telegram', state: 'SENT', outcome: 'COMPLETED', attempts: 2, poll_ref: null },
    { kind: 'webhook', state: 'SENT', outcome: 'COMPLETED', attempts: 1, poll_ref: null },
  ]);
  expect(receiver.requests.filter((request) => request.rawBody.includes(intentId))).toHaveLength(1);
});

test('another policy’s channels receive nothing of these purchases, and its own purchase goes to its own channels only', async () => {
  const buyerIntents = (
    await stack.db.pool.query<{ intent_id: string }>(
      'SELECT intent_id FROM intent.consumer_intents WHERE policy_id = $1',
      [buyer.consumer.policy.policyId],
    )
  ).rows.map((row) => row.intent_id);
  expect(buyerIntents.length).toBeGreaterThanOrEqual(3);

  const ownIntent = await purchase(world, other.consumer, 'taken.test');
  expect((await outcomeOf(ownIntent)).state).toBe('COMPLETED');
  await stack.stack.worker!.runOnce();
  await telegram.waitForMessage(
    (message) => message.chatId === other.chatId && message.text.includes(ownIntent),
  );
  await receiver.waitForRequest(
    (request) => request.path === other.hookPath && request.rawBody.includes(ownIntent),
  );

  const toOther = [
    ...telegram.sent.filter((message) => message.chatId === other.chatId).map((m) => m.text),
    ...receiver.requests.filter((request) => request.path === other.hookPath).map((r) => r.rawBody),
  ];
  expect(toOther).toHaveLength(2);
  for (const intentId of buyerIntents)
    for (const text of toOther) expect(text).not.toContain(intentId);
  const toBuyer = [
    ...telegram.sent.filter((message) => message.chatId === buyer.chatId).map((m) => m.text),
    ...receiver.requests.filter((request) => request.path === buyer.hookPath).map((r) => r.rawBody),
  ];
  for (const text of toBuyer) expect(text).not.toContain(ownIntent);
  // The function that queues them is idempotent per change: called again, it queues nothing.
  const row = (await getConsumerIntent(stack.db.pool, ownIntent))!;
  const again = await stack.db.pool.query<{ queued: number }>(
    `SELECT policy.enqueue_outcome_notice($1, $2, $3, 'COMPLETED', '{}'::jsonb, now()) AS queued`,
    [row.policyId, row.intentId, row.stateVersion],
  );
  expect(again.rows[0].queued).toBe(0);
});
