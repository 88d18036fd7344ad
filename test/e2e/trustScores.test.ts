// Trust scores end to end (issue #21): whole purchases through the gateway (create → fund with the
// official x402 client → execute → the devnet merchant paid on its own chain → the delivery job
// asks the devnet RDAP registry), then POST /score_vendor and POST /score_buyer paid with the
// official @x402/fetch client. A provider without history is refused by name (never charged);
// after verified purchases its lower bound rises; a lie the registry catches lowers it; and the
// engine's rule 7 inside the preflight window (the consumer purchase's own policy check) reads the
// same score: unavailable first (onUnavailable decides), observed afterwards, below the floor at last.
import { DEFAULT_Z, wilsonLowerBound } from '../../core/trust/score';
import type { ConsumerIntentRow } from '../../subgraphs/intent/consumer/store';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { postJson, type TestStack } from '../support/stack';
import { createIntent, fundingFetch, intentRow, purchase, untilIntent } from '../support/purchases';

let world: ConsumerWorld;
let stack: TestStack;
let buyer: TestConsumer;
let stranger: TestConsumer;
let cautious: TestConsumer;
let provider: string;
let sequence = 0;

beforeAll(async () => {
  world = await startConsumerWorld({ rdap: true });
  stack = world.stack;
  buyer = await newConsumer(stack, world.devnet, {
    mintAtomic: 20_000_000n,
    policy: { escalateAbove: '5.00' },
  });
  stranger = await newConsumer(stack, world.devnet, { mintAtomic: 2_000_000n });
  // Escalates when the service has no score of the provider (rule 7's onUnavailable).
  cautious = await newConsumer(stack, world.devnet, {
    mintAtomic: 2_000_000n,
    policy: {
      escalateAbove: '5.00',
      vendorRisk: { minScore: 50, onBelow: 'BLOCK', onUnavailable: 'ESCALATE' },
    },
  });
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

afterEach(() => {
  world.merchant.resetFaults();
});

async function paidPost(
  who: TestConsumer,
  path: string,
  body: unknown,
  token?: string,
): Promise<{ status: number; body: any; paid: boolean }> {
  const response = await fundingFetch(world, who.account)(`${stack.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    body: await response.json(),
    paid: response.headers.get('payment-response') !== null,
  };
}

const FINISHED = new Set(['COMPLETED', 'MANUAL_REVIEW', 'REFUNDED']);

/** A whole purchase through the gateway, until the delivery job has judged it. */
async function judgedPurchase(domain: string, who = buyer): Promise<ConsumerIntentRow> {
  const intentId = await purchase(world, who, domain);
  return untilIntent(world, intentId, (current) => FINISHED.has(current.state));
}

const unique = (label: string) => `${label}-${(sequence += 1)}-${Date.now().toString(36)}.test`;

function rule7(current: ConsumerIntentRow): Record<string, unknown> {
  const trace = (current.decision as { ruleTrace: Array<Record<string, unknown>> }).ruleTrace;
  return trace.find((entry) => entry.rule === 'vendor.riskFloor')!;
}

/** What the model says for these counts (the service must agree exactly). */
function expected(verified: number, failed: number) {
  const lowerBound = wilsonLowerBound(verified, verified + failed, DEFAULT_Z);
  return { lowerBound, score: Math.floor(lowerBound * 100) };
}

let lastBound = 0;

describe('scores from real purchases', () => {
  test('bad input is 400 with the field list, before any 402; a provider with no history is 422 SCORE_INSUFFICIENT_HISTORY, never charged', async () => {
    const missing = await postJson(stack.url, '/score_vendor', {});
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('REQUEST_INVALID');
    expect(missing.body.details.map((d: { field: string }) => d.field)).toEqual(['provider']);
    const odd = await postJson(stack.url, '/score_vendor', { provider: 'a b', score: 99 });
    expect(odd.status).toBe(400);
    expect(odd.body.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'provider',
      'score',
    ]);
    const buyerBad = await postJson(
      stack.url,
      '/score_buyer',
      { agentId: 'has space', policyId: 'x' },
      buyer.session,
    );
    expect(buyerBad.status).toBe(400);
    expect(buyerBad.body.details.map((d: { field: string }) => d.field)).toEqual([
      'agentId',
      'policyId',
    ]);

    // The first purchase finds no score: rule 7 passes on onUnavailable ALLOW, saying why.
    const first = await judgedPurchase('taken.test');
    expect(first.state).toBe('COMPLETED');
    expect(rule7(first)).toMatchObject({
      result: 'PASS',
      observed: null,
      note: 'VENDOR_SCORE_UNAVAILABLE',
    });
    provider = first.provider;

    const refused = await paidPost(stranger, '/score_vendor', { provider });
    expect(refused.status).toBe(422);
    expect(refused.paid).toBe(false);
    expect(refused.body).toMatchObject({
      code: 'SCORE_INSUFFICIENT_HISTORY',
      details: {
        provider,
        observations: 1,
        minObservations: 5,
        basis: { verified: 1, failed: 0, observations: 1 },
      },
    });
    expect(refused.body).not.toHaveProperty('score');
    const nobody = await paidPost(stranger, '/score_vendor', { provider: 'never-sold.example' });
    expect(nobody.status).toBe(422);
    expect(nobody.body.details.basis).toMatchObject({ observations: 0, ageSeconds: null });
  }, 120_000);

  test('a policy escalating on an unavailable score escalates the purchase (rule 7 onUnavailable)', async () => {
    const created = await createIntent(world, cautious, unique('cautious'));
    expect(created.nextAction).toBe('AWAIT_APPROVAL');
    const current = await intentRow(world, created.intent.intentId);
    expect(current.state).toBe('AWAITING_APPROVAL');
    expect(rule7(current)).toMatchObject({
      result: 'ESCALATE',
      observed: null,
      note: 'ESCALATED_VENDOR_RISK:SCORE_UNAVAILABLE',
    });
  }, 60_000);

  test('after verified purchases the score is paid for and answered; the lower bound rises with more of them', async () => {
    for (let index = 0; index < 4; index += 1) {
      expect((await judgedPurchase(unique('free'))).state).toBe('COMPLETED');
    }
    const unpaid = await postJson(stack.url, '/score_vendor', { provider });
    expect(unpaid.status).toBe(402);
    expect(unpaid.body).toEqual({});

    const five = await paidPost(stranger, '/score_vendor', { provider });
    expect(five.status).toBe(200);
    expect(five.paid).toBe(true);
    expect(five.body).toMatchObject({
      provider,
      ...expected(5, 0),
      confidence: 0.95,
      basis: { verified: 5, failed: 0, disputed: 0, refunds: 0, ambiguous: 0, observations: 5 },
    });
    expect(Date.parse(five.body.computedAt)).not.toBeNaN();
    expect(five.body.basis.ageSeconds).toBeGreaterThanOrEqual(0);

    // The sixth purchase's own policy check already read the score of five (rule 7 observed it).
    const sixth = await judgedPurchase(unique('free'));
    expect(sixth.state).toBe('COMPLETED');
    expect(rule7(sixth)).toMatchObject({
      result: 'PASS',
      observed: String(expected(5, 0).score),
      limit: '50',
    });
    const six = await paidPost(stranger, '/score_vendor', { provider });
    expect(six.body.basis.verified).toBe(6);
    expect(six.body.lowerBound).toBeGreaterThan(five.body.lowerBound);
    expect(six.body).toMatchObject(expected(6, 0));
    lastBound = six.body.lowerBound;
  }, 240_000);

  test('a lie the registry catches lowers the score; below the floor rule 7 escalates the next purchase', async () => {
    world.merchant.setFaults({ lieAboutAvailability: true });
    const lie = await judgedPurchase('example.test');
    expect(lie.state).toBe('MANUAL_REVIEW');
    expect(lie.serviceVerified).toMatchObject({ verified: false, method: 'RDAP' });
    world.merchant.resetFaults();

    const after = await paidPost(stranger, '/score_vendor', { provider });
    expect(after.status).toBe(200);
    expect(after.body.basis).toMatchObject({ verified: 6, failed: 1, observations: 7 });
    expect(after.body).toMatchObject(expected(6, 1));
    expect(after.body.lowerBound).toBeLessThan(lastBound);
    // 48 < 50: the buyer's default vendorRisk (onBelow ESCALATE) asks the owner.
    const created = await createIntent(world, buyer, unique('below'));
    expect(created.nextAction).toBe('AWAIT_APPROVAL');
    expect(rule7(await intentRow(world, created.intent.intentId))).toMatchObject({
      result: 'ESCALATE',
      observed: String(expected(6, 1).score),
      note: 'ESCALATED_VENDOR_RISK:BELOW_FLOOR',
    });
  }, 120_000);
});

describe('POST /score_buyer', () => {
  const body = () => ({
    agentId: `consumer:${buyer.account.address.toLowerCase()}`,
    policyId: buyer.policy.policyId,
  });

  test('no credential 401, another owner or consumer 403 with no data, all before any 402', async () => {
    const anonymous = await postJson(stack.url, '/score_buyer', body());
    expect(anonymous.status).toBe(401);
    for (const token of [stranger.owner, stranger.session]) {
      const refused = await paidPost(stranger, '/score_buyer', body(), token);
      expect(refused.status).toBe(403);
      expect(refused.paid).toBe(false);
      expect(refused.body.code).toBe('FORBIDDEN');
      expect(Object.keys(refused.body).sort()).toEqual([
        'code',
        'correlationId',
        'docsUrl',
        'message',
        'retryable',
      ]);
    }
  });

  test('the policy’s consumer session and owner get the buyer’s score when paid; 402 unpaid', async () => {
    const unpaid = await postJson(stack.url, '/score_buyer', body(), buyer.session);
    expect(unpaid.status).toBe(402);
    for (const token of [buyer.session, buyer.owner, stack.adminToken]) {
      const answer = await paidPost(stranger, '/score_buyer', body(), token);
      expect(answer.status).toBe(200);
      expect(answer.paid).toBe(true);
      expect(answer.body).toMatchObject({
        ...body(),
        ...expected(6, 1),
        basis: { verified: 6, failed: 1, observations: 7 },
      });
    }
    // The stranger's own buyer record has no history: refused by name, never charged.
    const own = await paidPost(
      stranger,
      '/score_buyer',
      {
        agentId: `consumer:${stranger.account.address.toLowerCase()}`,
        policyId: stranger.policy.policyId,
      },
      stranger.session,
    );
    expect(own.status).toBe(422);
    expect(own.paid).toBe(false);
    expect(own.body.code).toBe('SCORE_INSUFFICIENT_HISTORY');
  });
});
