// The steps of a consumer purchase through the gateway, as the purchase-path e2e tests take them:
// create an intent (POST /consumer/intents → 201), fund it with the official x402 client on the
// funding rail (POST …/fund → 200), execute it (POST …/execute → 202), then read the intent row
// until the worker has moved it where the test wants it. Each step asserts its own status.
import type { DomainsMerchant } from '../../devnet/merchants/domains/server';
import { type ConsumerIntentRow, getConsumerIntent } from '../../subgraphs/intent/consumer/store';
import type { TestConsumer } from './consumers';
import type { ConsumerWorld } from './consumerWorld';
import { fundingPayment, officialFetch } from './officialClient';
import { postJson } from './stack';

/** What the steps need of the world: the gateway (and database), the rails and the merchant. */
export type PurchaseWorld = Pick<ConsumerWorld, 'stack' | 'rails' | 'merchant'>;

export type MerchantFaults = Parameters<DomainsMerchant['setFaults']>[0];

/** The official fetch of `payer` on the world's funding rail. */
export function fundingFetch(world: Pick<ConsumerWorld, 'rails'>, payer: TestConsumer['account']) {
  return officialFetch(payer, fundingPayment(world.rails));
}

/** POST /consumer/intents for domains.check of `domain`; asserts 201 and returns the body. */
export async function createIntent(
  world: PurchaseWorld,
  who: TestConsumer,
  domain: string,
): Promise<any> {
  const created = await postJson(
    world.stack.url,
    '/consumer/intents',
    { capability: 'domains.check', params: { domain } },
    who.session,
  );
  expect(created.status).toBe(201);
  return created.body;
}

/** Pays POST /consumer/intents/:id/fund with the buyer's official client; asserts 200. */
export async function fundIntent(
  world: PurchaseWorld,
  who: TestConsumer,
  intentId: string,
): Promise<Response> {
  const funded = await fundingFetch(world, who.account)(
    `${world.stack.url}/consumer/intents/${intentId}/fund`,
    { method: 'POST', headers: { authorization: `Bearer ${who.session}` } },
  );
  expect(funded.status).toBe(200);
  return funded;
}

/** POST /consumer/intents/:id/execute; asserts 202. */
export async function executeIntent(
  world: PurchaseWorld,
  who: TestConsumer,
  intentId: string,
): Promise<void> {
  const executed = await postJson(
    world.stack.url,
    `/consumer/intents/${intentId}/execute`,
    {},
    who.session,
  );
  expect(executed.status).toBe(202);
}

export interface PurchaseOptions {
  /**
   * Merchant faults set after funding and before execution: they apply to the paid request only
   * (the quote was the unpaid 402 before).
   */
  readonly faults?: MerchantFaults;
}

/** Funds and executes an intent already created. */
export async function fundAndExecute(
  world: PurchaseWorld,
  who: TestConsumer,
  intentId: string,
  options: PurchaseOptions = {},
): Promise<void> {
  await fundIntent(world, who, intentId);
  if (options.faults !== undefined) world.merchant.setFaults(options.faults);
  await executeIntent(world, who, intentId);
}

/** A whole purchase of domains.check for `domain` up to execution; returns the intent id. */
export async function purchase(
  world: PurchaseWorld,
  who: TestConsumer,
  domain: string,
  options: PurchaseOptions = {},
): Promise<string> {
  const intentId = (await createIntent(world, who, domain)).intent.intentId as string;
  await fundAndExecute(world, who, intentId, options);
  return intentId;
}

export async function intentRow(
  world: PurchaseWorld,
  intentId: string,
): Promise<ConsumerIntentRow> {
  return (await getConsumerIntent(world.stack.db.pool, intentId))!;
}

/**
 * Reads the intent row until `done` holds (the worker moves it; nothing is timed). `eachRound`
 * runs between reads that did not hold (e.g. a worker round stepped by hand).
 */
export async function untilIntent(
  world: PurchaseWorld,
  intentId: string,
  done: (row: ConsumerIntentRow) => boolean,
  eachRound?: () => Promise<unknown>,
): Promise<ConsumerIntentRow> {
  for (let attempt = 0; attempt < 800; attempt += 1) {
    const current = await intentRow(world, intentId);
    if (done(current)) return current;
    if (eachRound !== undefined) await eachRound();
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const last = await intentRow(world, intentId);
  throw new Error(`intent ${intentId} never got there: ${JSON.stringify(last)}`);
}

/** Reads the intent row until it is in `state`. */
export function untilState(
  world: PurchaseWorld,
  intentId: string,
  state: string,
  eachRound?: () => Promise<unknown>,
): Promise<ConsumerIntentRow> {
  return untilIntent(world, intentId, (row) => row.state === state, eachRound);
}
