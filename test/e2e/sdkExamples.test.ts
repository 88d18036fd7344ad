// The agent SDK's examples (sdk/examples/) run against the real stack: anvil chains, the devnet
// domains merchant and RDAP registry, the gateway taking x402 on eip155:196, the escalation worker
// delivering to a Telegram stand-in. An approved preflight (the SDK's local intentHash equal to the
// service's, the fee paid once), an escalation the owner approves on the bound chat while the SDK
// polls, a lost answer retried without a second payment, and a domains.check purchase that ends
// COMPLETED with its receipt digest checked.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type BuiltSpendIntent, checkReceipt, SpendControlError } from '@spend-control/agent';
import { createChannelAdapters, type ChannelAdapters } from '../../channels';
import { startTelegramStandIn, type TelegramStandIn } from '../../devnet/peers/telegram';
import { readTokenBalance } from '../../platform/chain/tokens';
import { escalationExample } from '../../sdk/examples/escalation';
import {
  type ExamplePolicy,
  exampleAgent,
  exampleIntent,
  preflightExample,
} from '../../sdk/examples/preflight';
import { purchaseExample } from '../../sdk/examples/purchase';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { graphql } from '../support/stack';

const TELEGRAM_TOKEN = '7000000002:devnet-sdk';
const TELEGRAM_SECRET = 'telegram-webhook-secret-sdk';
const CODE = /APPROVE ([0-9a-f]{24})/;
const START_LINK = `mutation ($kind: ChannelKind!) {
  startChannelLink(kind: $kind) { linkCode }
}`;

let world: ConsumerWorld;
let telegram: TelegramStandIn;
let adapters: ChannelAdapters;
let chats = 7100;

beforeAll(async () => {
  telegram = await startTelegramStandIn({ botToken: TELEGRAM_TOKEN });
  adapters = createChannelAdapters({
    telegram: { apiBaseUrl: telegram.url, botToken: TELEGRAM_TOKEN },
  });
  world = await startConsumerWorld({
    rdap: true,
    stack: {
      escalationWorker: { adapters, dashboardBaseUrl: 'http://127.0.0.1/dashboard', intervalMs: 0 },
      channelInbound: {
        telegram: {
          webhookSecret: TELEGRAM_SECRET,
          answerCallbackQuery: (id, text) => adapters.telegram!.answerCallbackQuery(id, text),
        },
      },
    },
  });
  await adapters.telegram!.setWebhook({
    url: `${world.stack.url}/channels/telegram/webhook`,
    secretToken: TELEGRAM_SECRET,
  });
}, 120_000);

afterAll(async () => {
  await world?.stop();
  await telegram?.stop();
});

/** A wallet with 10 USD₮0 and a policy it owns in the funding asset, escalating above 1.00 to Telegram. */
async function agentWithPolicy(): Promise<{
  who: TestConsumer;
  policy: ExamplePolicy;
  key: `0x${string}`;
}> {
  const key = generatePrivateKey();
  const who = await newConsumer(world.stack, world.devnet, {
    mintAtomic: 10_000_000n,
    account: privateKeyToAccount(key),
    policy: {
      categories: { allow: ['market-data', 'domains'], deny: [] },
      escalation: { timeoutMinutes: 30, channels: ['telegram'] },
      vendorRisk: { minScore: 0, onBelow: 'ESCALATE', onUnavailable: 'ALLOW' },
    },
  });
  const funding = world.devnet.info.chains.funding;
  return {
    who,
    key,
    policy: {
      ...who.policy,
      network: funding.caip2,
      token: funding.token.address.toLowerCase(),
    },
  };
}

/**
 * fetch as a network that loses answers: a paid request (one carrying PAYMENT-SIGNATURE) reaches
 * the service and is served, then its answer is dropped while `drop(signature)` says so. Every
 * signature sent is recorded.
 */
function lossyFetch(drop: (signature: string) => boolean): {
  fetch: typeof fetch;
  signatures: string[];
  dropped: () => number;
} {
  const signatures: string[] = [];
  let dropped = 0;
  const lossy: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const response = await fetch(request);
    const signature = request.headers.get('payment-signature');
    if (signature === null) return response;
    signatures.push(signature);
    if (!drop(signature)) return response;
    dropped += 1;
    await response.arrayBuffer();
    throw new TypeError('fetch failed: socket hang up');
  };
  return { fetch: lossy, signatures, dropped: () => dropped };
}

function agentBalance(who: TestConsumer): Promise<bigint> {
  return readTokenBalance(world.fundingChain, world.rails.funding.token, who.account.address);
}

test('approved preflight: the SDK validates the intent, its local intentHash is the service’s, and the x402 fee ($0.05) is paid once', async () => {
  const { who, policy, key } = await agentWithPolicy();
  const before = await agentBalance(who);

  const { intent, stored, decision } = await preflightExample({
    baseUrl: world.stack.url,
    agentKey: key,
    policy,
  });

  expect(stored.intentHash).toBe(intent.intentHash);
  expect(decision).toMatchObject({ decision: 'APPROVED', intentHash: intent.intentHash });
  expect(decision.paymentId).toMatch(/^pay_[0-9a-f]{32}$/);
  // The service speaks payment-identifier: the SDK's id is bound to this payer's one payment.
  const bound = await world.stack.db.pool.query<{ payer: string }>(
    'SELECT payer FROM gateway.payment_identifiers WHERE identifier = $1',
    [decision.paymentId],
  );
  expect(bound.rows.map((row) => row.payer.toLowerCase())).toEqual([
    who.account.address.toLowerCase(),
  ]);
  expect(before - (await agentBalance(who))).toBe(50_000n);
});

test('escalation: the SDK polls while the owner approves on the bound Telegram chat, then the same intent preflights APPROVED', async () => {
  const { who, policy, key } = await agentWithPolicy();
  const chatId = (chats += 1);
  const linked = await graphql(world.stack.url, START_LINK, { kind: 'TELEGRAM' }, who.owner);
  expect(linked.body.errors).toBeUndefined();
  const linkCode = linked.body.data.startChannelLink.linkCode as string;
  expect(await telegram.replyText({ chatId, userId: chatId, text: `/start ${linkCode}` })).toBe(
    200,
  );

  let escalated: (pollRef: string) => void = () => undefined;
  const pollRefKnown = new Promise<string>((resolve) => (escalated = resolve));
  const running = escalationExample({
    baseUrl: world.stack.url,
    agentKey: key,
    policy,
    onEscalated: escalated,
  });
  const pollRef = await pollRefKnown;
  await world.stack.stack.worker!.runOnce();
  const notice = await telegram.waitForMessage(
    (message) => message.chatId === String(chatId) && message.text.includes(pollRef),
  );
  const code = CODE.exec(notice.text)![1];
  expect(await telegram.replyText({ chatId, userId: chatId, text: `APPROVE ${code}` })).toBe(200);

  const { first, escalation, second } = await running;
  expect(first.decision).toBe('ESCALATED_THRESHOLD');
  expect(escalation).toMatchObject({ pollRef, state: 'APPROVED', outcome: 'APPROVED' });
  expect(second).toMatchObject({ decision: 'APPROVED', intentHash: first.intentHash });
});

test('a paid call whose answer is lost is presented again with the same payment: same decision, one fee', async () => {
  const { who, policy, key } = await agentWithPolicy();
  // The network eats the first answer to a paid request after the service has handled it.
  const network = lossyFetch(() => network.dropped() === 0);
  const agent = exampleAgent({
    baseUrl: world.stack.url,
    agentKey: key,
    policy,
    fetch: network.fetch,
  });
  const intent: BuiltSpendIntent = exampleIntent(policy, 50_000n);
  const before = await agentBalance(who);

  const decision = await agent.preflight(policy.policyId, intent);

  expect(network.dropped()).toBe(1);
  expect(new Set(network.signatures).size).toBe(1);
  expect(decision).toMatchObject({ decision: 'APPROVED', intentHash: intent.intentHash });
  expect(before - (await agentBalance(who))).toBe(50_000n);
});

test('every answer lost: NETWORK_ERROR names the paymentId, and the caller’s retry with it presents the same payment: one fee', async () => {
  const { who, policy, key } = await agentWithPolicy();
  let cut = true;
  // The network eats every answer to a paid request until the cut is mended.
  const network = lossyFetch(() => cut);
  const agent = exampleAgent({
    baseUrl: world.stack.url,
    agentKey: key,
    policy,
    fetch: network.fetch,
  });
  const intent = exampleIntent(policy, 50_000n);
  const before = await agentBalance(who);

  const failure = await agent.preflight(policy.policyId, intent).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(SpendControlError);
  expect(failure).toMatchObject({ code: 'NETWORK_ERROR', retryable: true });
  const { paymentId } = (failure as SpendControlError).details as { paymentId: string };
  cut = false;
  const decision = await agent.preflight(policy.policyId, intent, { paymentId });

  expect(decision).toMatchObject({
    decision: 'APPROVED',
    intentHash: intent.intentHash,
    paymentId,
  });
  expect(network.dropped()).toBeGreaterThan(1);
  expect(new Set(network.signatures).size).toBe(1);
  expect(before - (await agentBalance(who))).toBe(50_000n);
});

test('typed errors: a malformed intent is refused before any call with the service’s code and field details', () => {
  const policy = {
    policyId: '1',
    policyHash: '0x' + '1'.repeat(64),
    network: 'eip155:196',
    token: '0xnot',
  };
  let caught: unknown;
  try {
    exampleIntent(policy, 50_000n);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(SpendControlError);
  expect(caught).toMatchObject({
    code: 'INTENT_MALFORMED',
    details: [{ field: 'token', reason: 'must be 0x followed by 40 hex characters' }],
  });
});

test('purchase: domains.check bought through the consumer path ends COMPLETED and its receipt digest checks', async () => {
  const { who, key } = await agentWithPolicy();
  const domain = `sdk-${Date.now().toString(36)}.test`;
  const before = await agentBalance(who);

  const { intent, receipt } = await purchaseExample({
    baseUrl: world.stack.url,
    agentKey: key,
    policyId: who.policy.policyId,
    domain,
  });

  expect(intent.state).toBe('COMPLETED');
  expect(receipt).toMatchObject({
    intentId: intent.intentId,
    capability: 'domains.check',
    state: 'COMPLETED',
    integrity: { digest: expect.stringMatching(/^0x[0-9a-f]{64}$/) },
  });
  expect(before - (await agentBalance(who))).toBe(BigInt(receipt.paymentLegs.funding!.amount!));
  const altered = { ...receipt, capability: 'domains.register' };
  expect(() => checkReceipt(altered)).toThrow(
    expect.objectContaining({ code: 'RECEIPT_DIGEST_MISMATCH' }),
  );
});
