// POST /mcp with the MCP SDK's own client, on an x402 stack on the devnet: tools/list names every
// tool, a priced tool answers unpaid with the x402 payment-required tool result (or the
// `payment_required` result of the org.x402/payment extension when the request advertises it),
// paid (a payload made by @x402/evm's client scheme) it answers the decision with a successful
// x402/payment-response, the payer pays exactly the price once, the fee is booked once, and a
// replayed payment is refused. Refusals before payment carry the service's error body.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { z } from 'zod';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { policyDocument, wireIntent } from '../../core/test-support/spend-fixtures';
import { formatIsoSeconds } from '../../core/validation/timestamp';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import { fundingBalance, mintedPayer } from '../support/devnetPayers';
import { officialClient } from '../support/officialClient';
import { signIn } from '../support/siwe';
import { postJson, startTestStack, type TestStack } from '../support/stack';

const PREFLIGHT_PRICE = 50_000n;
const PING_PRICE = 10_000n;
const FUNDED = 1_000_000n;

/** DECISIONS "MCP". */
const TOOLS = [
  'ping_service',
  'create_spend_intent',
  'preflight_payment',
  'verify_delivery',
  'detect_duplicate',
  'redact_payment_metadata',
  'get_ledger',
  'log_receipt',
  'score_vendor',
  'score_buyer',
  'generate_dispute_packet',
  'reconcile_agent_spend',
  'policy_what_if',
  'receipt_status',
  'escalation_status',
  'catalog',
  'consumer_catalog',
  'consumer_create_intent',
  'consumer_intent',
  'consumer_fund_intent',
  'consumer_execute_intent',
  'consumer_receipt',
  'cafe_menu',
  'cafe_order_latte',
  'builder_brand_pack',
  'builder_suggest_names',
  'builder_check_domains',
  'builder_rank_options',
  'builder_seo_tips',
];

let devnet: DevnetChains;
let stack: TestStack;
let client: Client;
let token: string;
let policy: { policyId: string; policyHash: string };

function funding() {
  return devnet.info.chains.funding;
}

function fundedPayer(): Promise<PrivateKeyAccount> {
  return mintedPayer(devnet, FUNDED);
}

function balance(address: string): Promise<bigint> {
  return fundingBalance(devnet, address);
}

/** The payload @x402/evm's client scheme makes for this PaymentRequired. */
function paymentFor(payer: PrivateKeyAccount, required: PaymentRequired): Promise<PaymentPayload> {
  return officialClient(payer, { network: 'eip155:196', asset: token }).createPaymentPayload(
    required,
  );
}

async function connect(headers: Record<string, string> = {}): Promise<Client> {
  const mcp = new Client({ name: 'spend-control-e2e', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), { requestInit: { headers } }),
  );
  return mcp;
}

let intentNonce = 0;
function preflightArguments(): Record<string, unknown> {
  intentNonce += 1;
  return {
    policyId: policy.policyId,
    intent: wireIntent(policy, {
      token,
      deadline: formatIsoSeconds(Math.floor(Date.now() / 1000) + 3600),
      nonce: String(intentNonce),
      item: { description: 'candles', n: intentNonce },
    }),
  };
}

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
  stack = await startTestStack({ x402: { devnet } });
  token = funding().token.address.toLowerCase();
  const created = await postJson(
    stack.url,
    '/create_spend_policy',
    { policy: policyDocument() },
    stack.adminToken,
  );
  expect(created.status).toBe(201);
  policy = { policyId: created.body.policyId, policyHash: created.body.policyHash };
  client = await connect();
});

afterAll(async () => {
  await client?.close();
  await stack?.stop();
  await devnet?.stop();
});

it('tools/list names every tool, each with an object input schema and its price', async () => {
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOLS].sort());
  const preflight = tools.find((tool) => tool.name === 'preflight_payment')!;
  expect(preflight.inputSchema.type).toBe('object');
  expect(preflight.inputSchema.properties).toHaveProperty('intent');
  expect(preflight.description).toContain('0.05 USDT0');
  expect(tools.find((tool) => tool.name === 'receipt_status')!.inputSchema.required).toEqual([
    'receiptId',
  ]);
});

it('preflight_payment unpaid answers the x402 payment-required tool result, and nothing runs', async () => {
  const result = await client.callTool({
    name: 'preflight_payment',
    arguments: preflightArguments(),
  });
  expect(result.isError).toBe(true);
  const required = result.structuredContent as unknown as PaymentRequired;
  expect(required).toMatchObject({
    x402Version: 2,
    resource: { url: expect.stringMatching(/\/preflight_payment$/) },
    accepts: [{ scheme: 'exact', network: 'eip155:196', amount: '50000' }],
  });
  const content = result.content as Array<{ type: string; text: string }>;
  expect(JSON.parse(content[0]!.text)).toEqual(required);
});

it('preflight_payment paid returns the decision with a successful x402/payment-response; the payer pays the price once and the fee is booked once; a replay is refused', async () => {
  const payer = await fundedPayer();
  const args = preflightArguments();
  const unpaid = await client.callTool({ name: 'preflight_payment', arguments: args });
  const payment = await paymentFor(payer, unpaid.structuredContent as unknown as PaymentRequired);
  const receiverBefore = await balance(devnet.info.addresses.feeReceiver);

  const paid = await client.callTool({
    name: 'preflight_payment',
    arguments: args,
    _meta: { 'x402/payment': payment },
  });
  expect(paid.isError).toBeFalsy();
  const decision = paid.structuredContent as any;
  expect(decision.policyId).toBe(policy.policyId);
  expect(decision.ruleTrace).toHaveLength(14);
  const content = paid.content as Array<{ type: string; text: string }>;
  expect(JSON.parse(content[0]!.text)).toEqual(decision);
  const settlement = (paid._meta as any)['x402/payment-response'];
  expect(settlement).toMatchObject({
    success: true,
    network: 'eip155:196',
    payer: payer.address.toLowerCase(),
    transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
  });
  expect(await balance(payer.address)).toBe(FUNDED - PREFLIGHT_PRICE);
  expect(await balance(devnet.info.addresses.feeReceiver)).toBe(receiverBefore + PREFLIGHT_PRICE);

  const fees = await stack.db.pool.query<{ state: string; kind: string; groups: number }>(
    `SELECT p.state, g.kind, count(*) OVER ()::int AS groups
       FROM ledger.service_payments p JOIN ledger.groups g ON g.group_id = p.fee_group_id
      WHERE p.payer = $1`,
    [payer.address.toLowerCase()],
  );
  expect(fees.rows).toEqual([{ state: 'ANSWERED', kind: 'SERVICE_FEE', groups: 1 }]);

  // The same payment presented again for this call: the recorded answer, no more money.
  const again = await client.callTool({
    name: 'preflight_payment',
    arguments: args,
    _meta: { 'x402/payment': payment },
  });
  expect(again.structuredContent).toEqual(decision);
  // The same payment for another call is refused: it paid for one call only.
  const replay = await client.callTool({
    name: 'preflight_payment',
    arguments: preflightArguments(),
    _meta: { 'x402/payment': payment },
  });
  expect(replay.isError).toBe(true);
  expect(replay.structuredContent).toMatchObject({
    x402Version: 2,
    error: 'invalid_exact_evm_nonce_already_used',
  });
  expect(await balance(payer.address)).toBe(FUNDED - PREFLIGHT_PRICE);
  const rows = await stack.db.pool.query(`SELECT 1 FROM ledger.service_payments WHERE payer = $1`, [
    payer.address.toLowerCase(),
  ]);
  expect(rows.rowCount).toBe(1);
});

it('a paid call through MCP and through REST cost the same and land in the same ledger', async () => {
  const payer = await fundedPayer();
  const unpaid = await client.callTool({ name: 'ping_service', arguments: {} });
  const required = unpaid.structuredContent as unknown as PaymentRequired;
  const rest = await fetch(`${stack.url}/ping_service`);
  expect(rest.status).toBe(402);
  expect(required.accepts).toEqual(
    (
      JSON.parse(
        Buffer.from(rest.headers.get('payment-required')!, 'base64').toString(),
      ) as PaymentRequired
    ).accepts,
  );
  const paid = await client.callTool({
    name: 'ping_service',
    arguments: {},
    _meta: { 'x402/payment': await paymentFor(payer, required) },
  });
  expect(paid.isError).toBeFalsy();
  expect(await balance(payer.address)).toBe(FUNDED - PING_PRICE);
});

it('answers the payment_required result of the org.x402/payment extension when the request advertises it', async () => {
  const result = await client.request(
    {
      method: 'tools/call',
      params: {
        name: 'ping_service',
        arguments: {},
        _meta: {
          'io.modelcontextprotocol/clientCapabilities': { extensions: { 'org.x402/payment': {} } },
        },
      },
    },
    z.object({ resultType: z.string(), paymentRequired: z.any() }).passthrough(),
  );
  expect(result.resultType).toBe('payment_required');
  expect(result.paymentRequired).toMatchObject({
    x402Version: 2,
    accepts: [{ amount: '10000', network: 'eip155:196' }],
  });
});

it('answers a tool refused before payment with isError and the service’s error body', async () => {
  const result = await client.callTool({
    name: 'preflight_payment',
    arguments: { policyId: policy.policyId, intent: { amount: 'lots' } },
  });
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toMatchObject({
    code: 'INTENT_MALFORMED',
    retryable: false,
    docsUrl: expect.stringMatching(/#intent_malformed$/),
  });
});

it('serves free tools with the REST body, and takes the bearer from the HTTP request', async () => {
  const catalog = await client.callTool({ name: 'catalog', arguments: {} });
  expect(catalog.isError).toBeFalsy();
  const rest = await fetch(`${stack.url}/catalog`);
  expect(catalog.structuredContent).toEqual(await rest.json());

  const anonymous = await client.callTool({
    name: 'get_ledger',
    arguments: { policyId: policy.policyId },
  });
  const admin = await connect({ authorization: `Bearer ${stack.adminToken}` });
  try {
    const asAdmin = await admin.callTool({
      name: 'get_ledger',
      arguments: { policyId: policy.policyId },
    });
    const restAnswer = await postJson(
      stack.url,
      '/get_ledger',
      { policyId: policy.policyId },
      stack.adminToken,
    );
    expect(asAdmin.structuredContent).toEqual({ ...restAnswer.body, asOf: expect.any(String) });
    expect(anonymous.structuredContent).not.toEqual(asAdmin.structuredContent);
  } finally {
    await admin.close();
  }
});

it('policy_what_if with the owner’s bearer answers the same report as REST', async () => {
  const owner = privateKeyToAccount(generatePrivateKey());
  const document = policyDocument({ owner: owner.address });
  const created = await postJson(
    stack.url,
    '/create_spend_policy',
    { policy: document },
    stack.adminToken,
  );
  expect(created.status).toBe(201);
  const ownerToken = await signIn(stack.url, owner);
  const body = {
    policyId: created.body.policyId,
    draft: { ...document, dailyBudget: '5.00' },
    from: '2026-01-01T00:00:00Z',
    to: '2026-02-01T00:00:00Z',
  };
  const asOwner = await connect({ authorization: `Bearer ${ownerToken}` });
  try {
    const viaMcp = await asOwner.callTool({ name: 'policy_what_if', arguments: body });
    expect(viaMcp.isError).toBeFalsy();
    const viaRest = await postJson(stack.url, '/policy_what_if', body, ownerToken);
    expect(viaRest.status).toBe(200);
    expect(viaMcp.structuredContent).toEqual(viaRest.body);
    expect(viaRest.body.from).toBe('2026-01-01T00:00:00.000Z');
  } finally {
    await asOwner.close();
  }
  const anonymous = await client.callTool({ name: 'policy_what_if', arguments: body });
  expect(anonymous.isError).toBe(true);
});

it('refuses GET /mcp: the endpoint is stateless', async () => {
  const response = await fetch(`${stack.url}/mcp`);
  expect(response.status).toBe(405);
  expect(response.headers.get('allow')).toBe('POST');
});
