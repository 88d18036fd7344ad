// Consumer intents end to end through the gateway: real anvil chains, the real devnet domains
// merchant (an official x402 v2 seller on eip155:8453) quoting its own price, a real PostgreSQL,
// sessions signed in with real keys. Creating quotes from the merchant's 402 and runs the policy;
// gated, unverified and unquotable requests store nothing; escalated intents are approved by the
// owner's route or a Telegram stand-in reply; unfunded quotes expire and give their reservation back.
import { createChannelAdapters, type ChannelAdapters } from '../../channels';
import { NOW_MS } from '../../core/test-support/spend-fixtures';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import { devnetConsumerRails } from '../../devnet/consumerRails';
import type { DomainsMerchant } from '../../devnet/merchants/domains/server';
import { startDevnetDomainsMerchant } from '../../devnet/merchants/domains/start';
import { startTelegramStandIn, type TelegramStandIn } from '../../devnet/peers/telegram';
import { deriveSealingKey } from '../../platform/sealing';
import { advanceConsumerApprovals, expireConsumerIntents } from '../../subgraphs/intent';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { graphql, postJson, startTestStack, type TestStack } from '../support/stack';

const TELEGRAM_TOKEN = '7000000002:devnet-consumer';
const TELEGRAM_SECRET = 'telegram-webhook-secret-consumer';
const CODE = /APPROVE ([0-9a-f]{24})/;

let clockMs = NOW_MS;
const now = (): Date => new Date(clockMs);
let devnet: DevnetChains;
let merchant: DomainsMerchant;
let telegram: TelegramStandIn;
let adapters: ChannelAdapters;
let stack: TestStack;
let domainCounter = 0;

type Consumer = TestConsumer;

function freshDomain(): string {
  domainCounter += 1;
  return `shop-${domainCounter}-${Date.now().toString(36)}.test`;
}

/** A fresh wallet with its policy (the domains category allowed, `overrides` on top) and sessions. */
function consumer(overrides: Record<string, unknown> = {}): Promise<Consumer> {
  return newConsumer(stack, devnet, { policy: overrides });
}

async function getJson(path: string, token?: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${stack.url}${path}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: await response.json() };
}

async function create(
  who: Consumer,
  body: Record<string, unknown> = {
    capability: 'domains.check',
    params: { domain: freshDomain() },
  },
) {
  return postJson(stack.url, '/consumer/intents', body, who.session);
}

async function countIntents(): Promise<number> {
  const result = await stack.db.pool.query<{ n: string }>(
    'SELECT count(*)::text AS n FROM intent.consumer_intents',
  );
  return Number(result.rows[0]!.n);
}

async function reservationState(reservationId: string): Promise<string> {
  const result = await stack.db.pool.query<{ state: string }>(
    'SELECT state FROM intent.reservations WHERE reservation_id = $1',
    [reservationId],
  );
  return result.rows[0]!.state;
}

function expectError(answer: { status: number; body: any }, status: number, code: string): void {
  expect({ status: answer.status, code: answer.body.code }).toEqual({ status, code });
  expect(answer.body).toEqual(
    expect.objectContaining({ message: expect.any(String), retryable: expect.any(Boolean) }),
  );
}

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
  merchant = await startDevnetDomainsMerchant({
    settlement: devnet.info.chains.settlement,
    dataDir: null,
  });
  telegram = await startTelegramStandIn({ botToken: TELEGRAM_TOKEN, now });
  adapters = createChannelAdapters({
    telegram: { apiBaseUrl: telegram.url, botToken: TELEGRAM_TOKEN },
    now,
  });
  stack = await startTestStack({
    now,
    chains: {
      funding: {
        chainId: devnet.info.chains.funding.chainId,
        rpcUrl: devnet.info.chains.funding.rpcUrl,
        policyRegistry: null,
      },
    },
    consumer: {
      rails: devnetConsumerRails(devnet.info, { 'spendctl-domains': merchant.url }),
    },
    escalationWorker: { adapters, dashboardBaseUrl: 'http://127.0.0.1/dashboard', intervalMs: 0 },
    channelInbound: {
      telegram: {
        webhookSecret: TELEGRAM_SECRET,
        answerCallbackQuery: (id, text) => adapters.telegram!.answerCallbackQuery(id, text),
      },
    },
  });
  await adapters.telegram!.setWebhook({
    url: `${stack.url}/channels/telegram/webhook`,
    secretToken: TELEGRAM_SECRET,
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await telegram?.stop();
  await merchant?.stop();
  await devnet?.stop();
});

beforeEach(() => {
  clockMs = NOW_MS;
  merchant.resetFaults();
});

test('create: the merchant’s own 402 is the quote (50000 → fee 0, spread 250, funding 50250), the policy approves with a reservation, the answer asks for exact funding', async () => {
  const who = await consumer();
  const domain = freshDomain();
  const answer = await create(who, { capability: 'domains.check', params: { domain } });
  expect(answer.status).toBe(201);
  const { intent, quote, decision, nextAction, fundingRequest } = answer.body;
  const funding = devnet.info.chains.funding;
  const settlement = devnet.info.chains.settlement;
  const treasury = devnet.info.addresses.treasury.toLowerCase();

  expect(intent).toMatchObject({
    intentId: expect.stringMatching(/^ci_[0-9a-f]{24}$/),
    policyId: who.policy.policyId,
    capability: 'domains.check',
    provider: 'spendctl-domains',
    category: 'domains',
    params: { domain },
    state: 'AWAITING_FUNDING',
    fundingAmount: '50250',
    intentHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    reservationId: expect.stringMatching(/^rsv_[0-9a-f]{24}$/),
    pollRef: null,
  });
  expect(quote).toMatchObject({
    quoteId: expect.stringMatching(/^cq_[0-9a-f]{18}$/),
    capability: 'domains.check',
    provider: 'spendctl-domains',
    providerCost: {
      network: settlement.caip2,
      asset: settlement.token.address.toLowerCase(),
      amount: '50000',
    },
    feeBps: 0,
    fee: '0',
    spreadBps: 50,
    spread: '250',
    funding: {
      network: funding.caip2,
      asset: funding.token.address.toLowerCase(),
      amount: '50250',
      payTo: treasury,
    },
    merchant: {
      url: merchant.checkUrl(domain),
      method: 'GET',
      payTo: merchant.payTo.toLowerCase(),
      maxTimeoutSeconds: 300,
      requirements: {
        scheme: 'exact',
        network: settlement.caip2,
        amount: '50000',
        payTo: merchant.payTo,
        extra: { name: settlement.token.name, version: settlement.token.version },
      },
      resource: { url: expect.stringContaining('/domains/check') },
    },
  });
  expect(Date.parse(quote.expiresAt) - Date.parse(quote.quotedAt)).toBe(300_000);
  expect(decision).toMatchObject({
    decision: 'APPROVED',
    intentHash: intent.intentHash,
    policyId: who.policy.policyId,
    policyHash: who.policy.policyHash,
    reservation: {
      reservationId: intent.reservationId,
      state: 'ACTIVE',
      amountAtomic: '50250',
      expiresAt: quote.expiresAt,
    },
  });
  expect(nextAction).toBe('FUND');
  expect(fundingRequest).toEqual({
    method: 'POST',
    path: `/consumer/intents/${intent.intentId}/fund`,
    network: funding.caip2,
    asset: funding.token.address.toLowerCase(),
    amount: '50250',
    payTo: treasury,
  });
  expect(await reservationState(intent.reservationId)).toBe('ACTIVE');

  // The stored SpendIntent is the documented mapping.
  const stored = await stack.db.pool.query<{ spend_intent: Record<string, unknown> }>(
    'SELECT spend_intent FROM intent.consumer_intents WHERE intent_id = $1',
    [intent.intentId],
  );
  expect(stored.rows[0]!.spend_intent).toEqual({
    policyId: who.policy.policyId,
    policyHash: who.policy.policyHash,
    agentId: `consumer:${who.account.address.toLowerCase()}`,
    category: 'domains',
    provider: 'spendctl-domains',
    capability: 'domains.check',
    item: { description: `domains.check ${domain}`, params: { domain } },
    recipient: merchant.payTo.toLowerCase(),
    network: funding.caip2,
    token: funding.token.address.toLowerCase(),
    amount: '50250',
    deadline: quote.expiresAt.replace('.000Z', 'Z'),
    nonce: BigInt(`0x${intent.intentId.slice(3)}`).toString(),
    endpoint: merchant.checkUrl(domain),
  });
  // Every step through the lifecycle wrote its outbox row.
  const events = await stack.db.pool.query<{ to_state: string }>(
    'SELECT to_state FROM intent.consumer_intent_events WHERE intent_id = $1 ORDER BY event_id',
    [intent.intentId],
  );
  expect(events.rows.map((row) => row.to_state)).toEqual([
    'CREATED',
    'QUOTED',
    'POLICY_CHECKING',
    'APPROVED',
    'AWAITING_FUNDING',
  ]);

  const read = await getJson(`/consumer/intents/${intent.intentId}`, who.session);
  expect(read.status).toBe(200);
  expect(read.body.intent).toEqual(intent);
});

test('the same idempotencyKey on the policy answers the same intent (200), with no second quote or decision', async () => {
  const who = await consumer();
  const body = {
    capability: 'domains.check',
    params: { domain: freshDomain() },
    idempotencyKey: 'order-42',
  };
  const first = await create(who, body);
  expect(first.status).toBe(201);
  const before = await countIntents();
  const again = await create(who, body);
  expect(again.status).toBe(200);
  expect(again.body.intent).toEqual(first.body.intent);
  expect(again.body.quote.quoteId).toBe(first.body.quote.quoteId);
  expect(again.body.decision.receiptId).toBe(first.body.decision.receiptId);
  expect(again.body.fundingRequest).toEqual(first.body.fundingRequest);
  expect(await countIntents()).toBe(before);
  // Even while the merchant refuses: the repeat never reaches it.
  merchant.setFaults({ refuseBeforePayment: true });
  expect((await create(who, body)).status).toBe(200);
});

test('list: the session’s policy only, newest first, cursor paging and a state filter; another policy’s intent is 404', async () => {
  const who = await consumer();
  const other = await consumer();
  const ids: string[] = [];
  for (let index = 0; index < 3; index += 1) {
    clockMs += 1_000;
    ids.push((await create(who)).body.intent.intentId);
  }
  const foreign = (await create(other)).body.intent.intentId as string;

  const firstPage = await getJson('/consumer/intents?first=2', who.session);
  expect(firstPage.status).toBe(200);
  expect(firstPage.body.intents.map((intent: any) => intent.intentId)).toEqual([ids[2], ids[1]]);
  expect(firstPage.body.pageInfo.hasNextPage).toBe(true);
  const secondPage = await getJson(
    `/consumer/intents?first=2&after=${firstPage.body.pageInfo.endCursor}`,
    who.session,
  );
  expect(secondPage.body.intents.map((intent: any) => intent.intentId)).toEqual([ids[0]]);
  expect(secondPage.body.pageInfo).toEqual({ endCursor: expect.any(String), hasNextPage: false });

  const funding = await getJson('/consumer/intents?state=AWAITING_FUNDING', who.session);
  expect(funding.body.intents).toHaveLength(3);
  expect((await getJson('/consumer/intents?state=BLOCKED', who.session)).body.intents).toEqual([]);
  expectError(await getJson('/consumer/intents?state=NOPE', who.session), 400, 'REQUEST_INVALID');
  expectError(await getJson('/consumer/intents?first=0', who.session), 400, 'REQUEST_INVALID');
  expectError(await getJson('/consumer/intents?after=bogus', who.session), 400, 'REQUEST_INVALID');
  expectError(
    await getJson(`/consumer/intents?policyId=${other.policy.policyId}`, who.session),
    403,
    'FORBIDDEN',
  );

  expectError(
    await getJson(`/consumer/intents/${foreign}`, who.session),
    404,
    'CONSUMER_INTENT_NOT_FOUND',
  );
  expectError(
    await getJson('/consumer/intents/ci_000000000000000000000000', who.session),
    404,
    'CONSUMER_INTENT_NOT_FOUND',
  );
  expect((await getJson(`/consumer/intents/${foreign}`, other.session)).status).toBe(200);
});

test('without a bearer (CONSUMER_AUTH_REQUIRED=1): 401 AUTH_REQUIRED, even naming a policyId', async () => {
  const who = await consumer();
  expectError(
    await getJson(`/consumer/intents?policyId=${who.policy.policyId}`),
    401,
    'AUTH_REQUIRED',
  );
  expectError(await getJson('/consumer/intents/ci_000000000000000000000000'), 401, 'AUTH_REQUIRED');
  const before = await countIntents();
  expectError(
    await postJson(stack.url, '/consumer/intents', {
      capability: 'domains.check',
      params: { domain: freshDomain() },
    }),
    401,
    'AUTH_REQUIRED',
  );
  // An owner session is not a consumer session.
  expectError(
    await postJson(
      stack.url,
      '/consumer/intents',
      { capability: 'domains.check', params: { domain: freshDomain() } },
      who.owner,
    ),
    403,
    'FORBIDDEN',
  );
  expect(await countIntents()).toBe(before);
});

test('gated, unverified, unknown and malformed requests refuse with their code and store nothing', async () => {
  const who = await consumer();
  const before = await countIntents();
  const refusals: Array<[Record<string, unknown>, number, string]> = [
    [
      { capability: 'domains.register', params: { domain: 'a.test' } },
      409,
      'DOMAIN_REGISTRATION_GATED',
    ],
    [{ capability: 'travel.search', params: {} }, 409, 'TRAVEL_BOOKING_GATED'],
    [{ capability: 'shop.order', params: {} }, 409, 'SHOPPING_GATED'],
    [{ capability: 'gifts.x', params: {} }, 409, 'GIFT_ORDERING_GATED'],
    [{ capability: 'notify.x', params: {} }, 409, 'NOTIFICATION_SENDING_GATED'],
    [{ capability: 'domains.quote', params: { domain: 'a.test' } }, 409, 'CAPABILITY_NOT_VERIFIED'],
    [{ capability: 'weather.today', params: {} }, 404, 'CAPABILITY_NOT_FOUND'],
  ];
  for (const [body, status, code] of refusals) {
    const answer = await create(who, body);
    expectError(answer, status, code);
    expect(answer.body.retryable).toBe(false);
  }
  const unknownField = await create(who, {
    capability: 'domains.check',
    params: { domain: 'a.test' },
    extra: 1,
  });
  expectError(unknownField, 400, 'REQUEST_INVALID');
  expect(unknownField.body.details).toEqual([{ field: 'extra', reason: 'is not a known field' }]);
  const badDomain = await create(who, {
    capability: 'domains.check',
    params: { domain: 'not a domain', port: 1 },
  });
  expectError(badDomain, 400, 'REQUEST_INVALID');
  expect(badDomain.body.details).toEqual([
    { field: 'params.port', reason: 'is not a known field' },
    { field: 'params.domain', reason: 'must be a domain name such as example.test' },
  ]);
  const missing = await create(who, {});
  expect(missing.body.details).toEqual([
    { field: 'capability', reason: 'is required' },
    { field: 'params', reason: 'is required' },
  ]);
  expect(await countIntents()).toBe(before);
});

test('a merchant that refuses before payment (no 402) is 502 PROVIDER_UNAVAILABLE and nothing is stored', async () => {
  const who = await consumer();
  merchant.setFaults({ refuseBeforePayment: true });
  const before = await countIntents();
  const answer = await create(who);
  expectError(answer, 502, 'PROVIDER_UNAVAILABLE');
  expect(answer.body.retryable).toBe(true);
  expect(await countIntents()).toBe(before);
});

test('a policy that does not allow the category blocks: BLOCKED, nextAction NONE, no reservation', async () => {
  const who = await consumer({ categories: { allow: ['research'], deny: [] } });
  const answer = await create(who);
  expect(answer.status).toBe(201);
  expect(answer.body.intent).toMatchObject({
    state: 'BLOCKED',
    stateReason: 'BLOCKED_CATEGORY',
    reservationId: null,
  });
  expect(answer.body.decision.decision).toBe('BLOCKED_CATEGORY');
  expect(answer.body.nextAction).toBe('NONE');
  expect(answer.body.fundingRequest).toBeNull();
});

test('a policy kept in another asset blocks (BLOCKED_ASSET): the amount is never weighed in another unit', async () => {
  const who = await consumer({
    asset: {
      network: devnet.info.chains.funding.caip2,
      token: '0x' + '5a'.repeat(20),
      symbol: 'OTHER',
      decimals: 6,
    },
  });
  const answer = await create(who);
  expect(answer.status).toBe(201);
  expect(answer.body.intent).toMatchObject({ state: 'BLOCKED', reservationId: null });
  expect(answer.body.decision.decision).toBe('BLOCKED_ASSET');
  expect(answer.body.nextAction).toBe('NONE');
});

describe('escalated intents', () => {
  const escalating = { escalateAbove: '0.05' };

  test('AWAITING_APPROVAL with a pollRef; a stale intentHash is 409 APPROVAL_HASH_MISMATCH; the owner’s route approves → AWAITING_FUNDING with a reservation', async () => {
    const who = await consumer(escalating);
    const created = await create(who);
    expect(created.status).toBe(201);
    const { intent } = created.body;
    expect(intent).toMatchObject({
      state: 'AWAITING_APPROVAL',
      pollRef: expect.stringMatching(/^esc_[0-9a-f]{24}$/),
      reservationId: null,
    });
    expect(created.body.decision.decision).toBe('ESCALATED_THRESHOLD');
    expect(created.body.decision.escalation.pollRef).toBe(intent.pollRef);
    expect(created.body.nextAction).toBe('AWAIT_APPROVAL');
    expect(created.body.fundingRequest).toBeNull();

    const path = `/consumer/intents/${intent.intentId}/approve`;
    expectError(
      await postJson(
        stack.url,
        path,
        { decision: 'APPROVE', intentHash: `0x${'ab'.repeat(32)}` },
        who.owner,
      ),
      409,
      'APPROVAL_HASH_MISMATCH',
    );
    // The consumer session cannot approve; another owner cannot see it.
    expectError(
      await postJson(
        stack.url,
        path,
        { decision: 'APPROVE', intentHash: intent.intentHash },
        who.session,
      ),
      403,
      'FORBIDDEN',
    );
    const stranger = await consumer();
    expectError(
      await postJson(
        stack.url,
        path,
        { decision: 'APPROVE', intentHash: intent.intentHash },
        stranger.owner,
      ),
      404,
      'CONSUMER_INTENT_NOT_FOUND',
    );
    expectError(
      await postJson(
        stack.url,
        path,
        { decision: 'MAYBE', intentHash: intent.intentHash },
        who.owner,
      ),
      400,
      'REQUEST_INVALID',
    );
    expect(
      (await getJson(`/consumer/intents/${intent.intentId}`, who.session)).body.intent.state,
    ).toBe('AWAITING_APPROVAL');

    const approved = await postJson(
      stack.url,
      path,
      { decision: 'APPROVE', intentHash: intent.intentHash },
      who.owner,
    );
    expect(approved.status).toBe(200);
    expect(approved.body.intent).toMatchObject({
      state: 'AWAITING_FUNDING',
      reservationId: expect.stringMatching(/^rsv_[0-9a-f]{24}$/),
      intentHash: intent.intentHash,
    });
    expect(approved.body.decision.decision).toBe('APPROVED');
    expect(approved.body.nextAction).toBe('FUND');
    expect(approved.body.fundingRequest).toMatchObject({ amount: '50250' });
    expect(await reservationState(approved.body.intent.reservationId)).toBe('ACTIVE');
    const escalation = await getJson(`/escalation_status/${intent.pollRef}`);
    expect(escalation.body).toMatchObject({ state: 'APPROVED', outcome: 'APPROVED' });
    // Decided: a second decision is an illegal move.
    expectError(
      await postJson(
        stack.url,
        path,
        { decision: 'DENY', intentHash: intent.intentHash },
        who.owner,
      ),
      409,
      'ILLEGAL_STATE_TRANSITION',
    );
  });

  test('DENY → BLOCKED, never funded', async () => {
    const who = await consumer(escalating);
    const { intent } = (await create(who)).body;
    const denied = await postJson(
      stack.url,
      `/consumer/intents/${intent.intentId}/approve`,
      { decision: 'DENY', intentHash: intent.intentHash },
      who.owner,
    );
    expect(denied.status).toBe(200);
    expect(denied.body.intent).toMatchObject({
      state: 'BLOCKED',
      stateReason: 'ESCALATION_DENIED',
      reservationId: null,
    });
    expect(denied.body.nextAction).toBe('NONE');
    expect(denied.body.fundingRequest).toBeNull();
  });

  test('a Telegram stand-in reply approves outside the route; advanceConsumerApprovals moves the intent to AWAITING_FUNDING', async () => {
    const who = await consumer({
      ...escalating,
      escalation: { timeoutMinutes: 30, channels: ['telegram'] },
    });
    const chatId = 7301;
    const link = await graphql(
      stack.url,
      'mutation ($kind: ChannelKind!) { startChannelLink(kind: $kind) { linkCode } }',
      { kind: 'TELEGRAM' },
      who.owner,
    );
    const linkCode = link.body.data.startChannelLink.linkCode as string;
    expect(await telegram.replyText({ chatId, userId: chatId, text: `/start ${linkCode}` })).toBe(
      200,
    );

    const { intent } = (await create(who)).body;
    expect(intent.state).toBe('AWAITING_APPROVAL');
    await stack.stack.worker!.runOnce();
    const notice = await telegram.waitForMessage(
      (message) => message.chatId === String(chatId) && message.text.includes(intent.pollRef),
    );
    const code = CODE.exec(notice.text)![1];
    // Nothing moves while the escalation is pending.
    const deps = { db: stack.db.pool, sealingKey: deriveSealingKey(Buffer.alloc(32)) };
    expect(await advanceConsumerApprovals(deps, now())).toBe(0);

    expect(await telegram.replyText({ chatId, userId: chatId, text: `APPROVE ${code}` })).toBe(200);
    expect(await advanceConsumerApprovals(deps, now())).toBe(1);
    const read = await getJson(`/consumer/intents/${intent.intentId}`, who.session);
    expect(read.body.intent).toMatchObject({
      state: 'AWAITING_FUNDING',
      reservationId: expect.stringMatching(/^rsv_[0-9a-f]{24}$/),
    });
    expect(read.body.intent.decision.decision).toBe('APPROVED');
    expect(await reservationState(read.body.intent.reservationId)).toBe('ACTIVE');
    expect(await advanceConsumerApprovals(deps, now())).toBe(0);
  });

  test('an escalation that times out is the default deny: the worker round leaves the intent BLOCKED', async () => {
    const who = await consumer({
      ...escalating,
      escalation: { timeoutMinutes: 1, channels: ['webhook'] },
    });
    const { intent } = (await create(who)).body;
    clockMs += 61_000;
    const round = await stack.stack.worker!.runOnce();
    expect(round.consumerApprovalsAdvanced).toBeGreaterThanOrEqual(1);
    const read = await getJson(`/consumer/intents/${intent.intentId}`, who.session);
    expect(read.body.intent).toMatchObject({
      state: 'BLOCKED',
      stateReason: 'ESCALATION_EXPIRED_DEFAULT_DENY',
    });
  });
});

test('a quote past its expiry: expireConsumerIntents ends the unfunded intent EXPIRED and releases its reservation', async () => {
  const who = await consumer();
  const { intent, quote } = (await create(who)).body;
  expect(intent.state).toBe('AWAITING_FUNDING');
  clockMs = Date.parse(quote.expiresAt) - 1;
  expect(await expireConsumerIntents(stack.db.pool, now())).toBe(0);
  clockMs = Date.parse(quote.expiresAt);
  expect(await expireConsumerIntents(stack.db.pool, now())).toBeGreaterThanOrEqual(1);
  const read = await getJson(`/consumer/intents/${intent.intentId}`, who.session);
  expect(read.body.intent).toMatchObject({ state: 'EXPIRED', stateReason: 'QUOTE_EXPIRED' });
  expect(await reservationState(intent.reservationId)).toBe('RELEASED');
});

test('GraphQL: the owner sees their intents (consumerIntents, Policy.consumerIntents, consumerIntent); another owner sees none', async () => {
  const who = await consumer();
  const stranger = await consumer();
  const { intent } = (await create(who)).body;
  const LIST = `query ($policyId: ID) { consumerIntents(policyId: $policyId) { nodes { intentId state fundingAmount quote } pageInfo { hasNextPage } } }`;
  const ONE = `query ($id: ID!) { consumerIntent(intentId: $id) { intentId state params } }`;
  const POLICY = `query ($id: ID!) { policy(id: $id) { id consumerIntents { nodes { intentId } } } }`;

  const mine = await graphql(stack.url, LIST, {}, who.owner);
  expect(mine.body.errors).toBeUndefined();
  expect(mine.body.data.consumerIntents.nodes).toEqual([
    {
      intentId: intent.intentId,
      state: 'AWAITING_FUNDING',
      fundingAmount: '50250',
      quote: intent.quote,
    },
  ]);
  const one = await graphql(stack.url, ONE, { id: intent.intentId }, who.owner);
  expect(one.body.data.consumerIntent).toEqual({
    intentId: intent.intentId,
    state: 'AWAITING_FUNDING',
    params: intent.params,
  });
  const viaPolicy = await graphql(stack.url, POLICY, { id: who.policy.policyId }, who.owner);
  expect(viaPolicy.body.errors).toBeUndefined();
  expect(viaPolicy.body.data.policy.consumerIntents.nodes).toEqual([{ intentId: intent.intentId }]);

  const theirs = await graphql(stack.url, LIST, {}, stranger.owner);
  expect(theirs.body.data.consumerIntents.nodes).toEqual([]);
  const named = await graphql(stack.url, LIST, { policyId: who.policy.policyId }, stranger.owner);
  expect(named.body.data.consumerIntents.nodes).toEqual([]);
  expect(
    (await graphql(stack.url, ONE, { id: intent.intentId }, stranger.owner)).body.data
      .consumerIntent,
  ).toBeNull();
  const admin = await graphql(stack.url, LIST, { policyId: who.policy.policyId }, stack.adminToken);
  expect(admin.body.data.consumerIntents.nodes.map((node: any) => node.intentId)).toEqual([
    intent.intentId,
  ]);
});
