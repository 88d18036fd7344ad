// A whole consumer purchase end to end, as a consumer app and an owner drive it through the
// gateway, on real anvil chains with the real devnet merchant and the official x402 client:
// session → create (the merchant's own 402 is the quote) → fund (the official client pays exactly
// the funding amount to the funding treasury on eip155:196) → execute (the worker, woken by the
// intent's NOTIFY, pays the merchant on eip155:8453 through a one-time capability) →
// DELIVERY_PENDING. Balances are read from both chains; the ledger tells the same story, zero per
// asset on each rail. An escalated purchase is approved by the owner and then paid; a denied one
// never pays.
import type { Address } from 'viem';
import type { DevnetChains } from '../../devnet/chains';
import type { DomainsMerchant } from '../../devnet/merchants/domains/server';
import type { ChainPublicClient } from '../../platform/chain/clients';
import { readTokenBalance } from '../../platform/chain/tokens';
import type { ConsumerRails } from '../../subgraphs/kit';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { postJson, type TestStack } from '../support/stack';
import { createIntent, executeIntent, fundIntent } from '../support/purchases';

let devnet: DevnetChains;
let merchant: DomainsMerchant;
let rails: ConsumerRails;
let stack: TestStack;
let fundingChain: ChainPublicClient;
let settlementChain: ChainPublicClient;
let domains = 0;

type Consumer = TestConsumer;

let world: ConsumerWorld;

beforeAll(async () => {
  world = await startConsumerWorld();
  ({ devnet, merchant, rails, stack, fundingChain, settlementChain } = world);
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

/** A wallet with 10 USD₮0, a policy it owns (escalating above `escalateAbove`), both sessions. */
function consumer(escalateAbove = '1.00'): Promise<Consumer> {
  return newConsumer(stack, devnet, { mintAtomic: 10_000_000n, policy: { escalateAbove } });
}

/** GET /consumer/intents/:intentId as the consumer session: the intent. */
async function getIntent(who: Consumer, intentId: string): Promise<any> {
  const response = await fetch(`${stack.url}/consumer/intents/${intentId}`, {
    headers: { authorization: `Bearer ${who.session}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { intent: unknown }).intent;
}

/** Reads the intent until it reaches `state` (the worker runs on its own; nothing is stepped). */
async function settledIn(who: Consumer, intentId: string, state: string): Promise<any> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const intent = await getIntent(who, intentId);
    if (intent.state === state) return intent;
    if (['MANUAL_REVIEW', 'REFUNDED', 'BLOCKED', 'EXPIRED'].includes(intent.state))
      throw new Error(`intent ended ${intent.state}: ${intent.stateReason}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`intent ${intentId} never reached ${state}`);
}

async function balances(payer: Address) {
  return {
    payer: await readTokenBalance(fundingChain, rails.funding.token, payer),
    fundingTreasury: await readTokenBalance(
      fundingChain,
      rails.funding.token,
      rails.funding.treasury,
    ),
    settlementTreasury: await readTokenBalance(
      settlementChain,
      rails.settlement.token,
      rails.settlement.treasury,
    ),
    merchant: await readTokenBalance(settlementChain, rails.settlement.token, merchant.payTo),
  };
}

async function groupsOf(intentId: string, fundingGroupId: string) {
  const result = await stack.db.pool.query<{ kind: string; asset: string; entries: string[] }>(
    `SELECT g.kind, g.asset,
            array_agg(e.account_id || ' ' || e.amount::text ORDER BY e.amount DESC, e.account_id) AS entries
       FROM ledger.groups g JOIN ledger.entries e ON e.group_id = g.group_id
      WHERE g.intent_ref = $1 OR g.group_id = $2
      GROUP BY g.group_id, g.kind, g.asset, g.seq ORDER BY g.seq`,
    [intentId, fundingGroupId],
  );
  return result.rows;
}

async function buy(who: Consumer, intentId: string): Promise<any> {
  const paid = await fundIntent(world, who, intentId);
  expect(paid.headers.get('payment-response')).toEqual(expect.any(String));
  await executeIntent(world, who, intentId);
  return settledIn(who, intentId, 'DELIVERY_PENDING');
}

test('happy path: create → fund with the official client → execute → DELIVERY_PENDING; both chains and the ledger agree', async () => {
  const who = await consumer();
  const domain = `happy-${(domains += 1)}-${Date.now().toString(36)}.test`;
  const created = await createIntent(world, who, domain);
  expect(created.nextAction).toBe('FUND');
  expect(created.fundingRequest).toMatchObject({
    amount: '50250',
    payTo: rails.funding.treasury.toLowerCase(),
  });
  const intentId = created.intent.intentId as string;
  const before = await balances(who.account.address);

  const intent = await buy(who, intentId);

  const after = await balances(who.account.address);
  expect({
    payer: after.payer - before.payer,
    fundingTreasury: after.fundingTreasury - before.fundingTreasury,
    settlementTreasury: after.settlementTreasury - before.settlementTreasury,
    merchant: after.merchant - before.merchant,
  }).toEqual({
    payer: -50250n,
    fundingTreasury: 50250n,
    settlementTreasury: -50000n,
    merchant: 50000n,
  });
  expect(intent.providerAttested).toMatchObject({
    status: 'ATTESTED',
    fields: { domain, available: true },
  });
  expect(intent.funding).toMatchObject({ amount: '50250', txHash: expect.stringMatching(/^0x/) });
  expect(intent.settlement).toMatchObject({ txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });

  // The story in the ledger: FUNDING on F, SETTLEMENT on S, then the recognition pair, each rail
  // through CROSS_RAIL_CLEARING, the spread to SPREAD_REVENUE; every group single-asset, zero-sum.
  const groups = await groupsOf(intentId, intent.funding.groupId);
  const F = `${rails.funding.network}|${rails.funding.token.toLowerCase()}`;
  const S = `${rails.settlement.network}|${rails.settlement.token.toLowerCase()}`;
  expect(groups.map((g) => [g.kind, g.asset])).toEqual([
    ['FUNDING', F],
    ['SETTLEMENT', S],
    ['RECOGNITION', F],
    ['RECOGNITION', S],
  ]);
  const recognitionF = groups[2]!.entries.join('\n');
  expect(recognitionF).toMatch(/SPREAD_REVENUE:.* -250/);
  expect(recognitionF).toMatch(/CROSS_RAIL_CLEARING:.* -50000/);
  expect(groups[3]!.entries.join('\n')).toMatch(/CROSS_RAIL_CLEARING:.* 50000/);
  const balance = await stack.db.pool.query<{ asset: string; net: string }>(
    `SELECT g.asset, sum(e.amount)::text AS net FROM ledger.entries e
       JOIN ledger.groups g ON g.group_id = e.group_id GROUP BY g.asset`,
  );
  for (const row of balance.rows) expect(row.net).toBe('0');
  expect(balance.rows.map((row) => row.asset)).toEqual(expect.arrayContaining([F, S]));
});

test('escalated: the owner approves by route, then the purchase is funded and paid; a denied one never pays', async () => {
  const who = await consumer('0.05');
  const ask = async () =>
    postJson(
      stack.url,
      '/consumer/intents',
      {
        capability: 'domains.check',
        params: { domain: `esc-${(domains += 1)}-${Date.now().toString(36)}.test` },
      },
      who.session,
    );
  const approvedOne = await ask();
  expect(approvedOne.body.nextAction).toBe('AWAIT_APPROVAL');
  const intentId = approvedOne.body.intent.intentId as string;
  const approve = await postJson(
    stack.url,
    `/consumer/intents/${intentId}/approve`,
    { decision: 'APPROVE', intentHash: approvedOne.body.intent.intentHash },
    who.owner,
  );
  expect(approve.status).toBe(200);
  const paid = await buy(who, intentId);
  expect(paid.state).toBe('DELIVERY_PENDING');

  const deniedOne = await ask();
  const deniedId = deniedOne.body.intent.intentId as string;
  const deny = await postJson(
    stack.url,
    `/consumer/intents/${deniedId}/approve`,
    { decision: 'DENY', intentHash: deniedOne.body.intent.intentHash },
    who.owner,
  );
  expect(deny.status).toBe(200);
  const merchantBefore = await readTokenBalance(
    settlementChain,
    rails.settlement.token,
    merchant.payTo,
  );
  const unpaid = await fetch(`${stack.url}/consumer/intents/${deniedId}/fund`, {
    method: 'POST',
    headers: { authorization: `Bearer ${who.session}` },
  });
  expect(unpaid.status).toBe(409);
  expect(((await unpaid.json()) as { code: string }).code).toBe('INTENT_NOT_FUNDABLE');
  const execute = await postJson(
    stack.url,
    `/consumer/intents/${deniedId}/execute`,
    {},
    who.session,
  );
  expect(execute.status).toBe(409);
  expect((await getIntent(who, deniedId)).state).toBe('BLOCKED');
  expect(await readTokenBalance(settlementChain, rails.settlement.token, merchant.payTo)).toBe(
    merchantBefore,
  );
});
