// Delivery verification end to end: whole purchases through the gateway (create → fund with the
// official x402 client on eip155:196 → execute → the merchant paid on eip155:8453), then the
// worker's delivery job asks the devnet RDAP registry (never the merchant) and the intent ends
// COMPLETED, MANUAL_REVIEW (the merchant lied) or, with the registry down, stays DELIVERY_PENDING
// with verified: false and is retried until the bound hands it to a human. POST /verify_delivery is
// paid with the official client to the fee receiver; a request it cannot answer (an intent the
// caller may not read, or one the merchant has not answered) is refused before any 402 and moves
// no money. Real chains, merchant, registry and database.
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { DevnetChains } from '../../devnet/chains';
import type { DomainsMerchant } from '../../devnet/merchants/domains/server';
import type { DevnetRdapRegistry } from '../../devnet/rdap/registry';
import { createChainPublicClient } from '../../platform/chain/clients';
import { readTokenBalance } from '../../platform/chain/tokens';
import type { ConsumerRails } from '../../subgraphs/kit';
import { newConsumer, type TestConsumer } from '../support/consumers';
import { startConsumerWorld, type ConsumerWorld } from '../support/consumerWorld';
import { postJson, type TestStack } from '../support/stack';
import { fundingPayment, officialClient } from '../support/officialClient';
import { fundingFetch, intentRow, purchase, untilIntent } from '../support/purchases';

const MAX_ATTEMPTS = 3;
/** Long enough that only a test moving the clock of the row lets a retry run. */
const BACKOFF_MS = 600_000;
const VERIFY_PRICE = 100_000n;

let devnet: DevnetChains;
let merchant: DomainsMerchant;
let registry: DevnetRdapRegistry;
let rails: ConsumerRails;
let stack: TestStack;
let buyer: TestConsumer;
let stranger: TestConsumer;
let sequence = 0;

let world: ConsumerWorld;

beforeAll(async () => {
  world = await startConsumerWorld({
    rdap: true,
    // Awake on NOTIFY; the retry rounds are stepped by hand with runOnce.
    execution: { deliveryRetry: { maxAttempts: MAX_ATTEMPTS, backoffMs: [BACKOFF_MS] } },
  });
  ({ devnet, merchant, rails, stack } = world);
  registry = world.registry!;
  buyer = await newConsumer(stack, devnet, {
    mintAtomic: 10_000_000n,
    // This suite's lies and failed lookups lower the merchant's score (docs/trust.md); rule 7 is
    // trustScores.test.ts's subject, so here no score is low enough to ask the owner.
    policy: {
      escalateAbove: '5.00',
      vendorRisk: { minScore: 0, onBelow: 'ESCALATE', onUnavailable: 'ALLOW' },
    },
  });
  stranger = await newConsumer(stack, devnet, { mintAtomic: 1_000_000n });
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

afterEach(() => {
  merchant.resetFaults();
  registry.clearFaults();
});

const worker = () => stack.stack.consumerExecution!;

async function statesOf(intentId: string): Promise<string[]> {
  const events = await stack.db.pool.query<{ to_state: string }>(
    'SELECT to_state FROM intent.consumer_intent_events WHERE intent_id = $1 ORDER BY event_id',
    [intentId],
  );
  return events.rows.map((event) => event.to_state);
}

async function ledgerKindsOf(intentId: string, fundingGroupId: string): Promise<string[]> {
  const groups = await stack.db.pool.query<{ kind: string }>(
    'SELECT kind FROM ledger.groups WHERE intent_ref = $1 OR group_id = $2 ORDER BY seq',
    [intentId, fundingGroupId],
  );
  return groups.rows.map((group) => group.kind);
}

const unique = (label: string) => `${label}-${(sequence += 1)}-${Date.now().toString(36)}.test`;
const TERMINAL_OR_REVIEW = new Set(['COMPLETED', 'MANUAL_REVIEW', 'REFUNDED']);

describe('the delivery job', () => {
  test('registered name: the merchant says taken, RDAP says taken → DELIVERY_VERIFIED → COMPLETED; providerAttested and serviceVerified stored apart', async () => {
    const intentId = await purchase(world, buyer, 'taken.test');
    const done = await untilIntent(world, intentId, (current) =>
      TERMINAL_OR_REVIEW.has(current.state),
    );
    expect(done.state).toBe('COMPLETED');
    expect(done.stateReason).toBeNull();
    // The merchant's word, as it said it, and the service's own finding, in separate fields.
    expect(done.providerAttested).toEqual({
      status: 'ATTESTED',
      attestedAt: expect.any(String),
      fields: { domain: 'taken.test', available: false, checkedAt: expect.any(String) },
    });
    expect(done.serviceVerified).toEqual({
      verified: true,
      method: 'RDAP',
      source: `${registry.url}/domain/taken.test`,
      checkedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      detail: expect.stringMatching(/^the registry agrees with the merchant/),
    });
    expect(registry.requests.map((request) => request.path)).toContain('/domain/taken.test');
    // Two transitions (one transaction), each in the outbox; nothing posted after the recognition.
    expect((await statesOf(intentId)).slice(-3)).toEqual([
      'DELIVERY_PENDING',
      'DELIVERY_VERIFIED',
      'COMPLETED',
    ]);
    const fundingGroupId = (done.funding as { groupId: string }).groupId;
    expect(await ledgerKindsOf(intentId, fundingGroupId)).toEqual([
      'FUNDING',
      'SETTLEMENT',
      'RECOGNITION',
      'RECOGNITION',
    ]);
    // The REST view carries both, unmerged.
    const view = await fetch(`${stack.url}/consumer/intents/${intentId}`, {
      headers: { authorization: `Bearer ${buyer.session}` },
    });
    const { intent } = (await view.json()) as { intent: Record<string, any> };
    expect(intent.serviceVerified).toEqual(done.serviceVerified);
    expect(intent.providerAttested).toEqual(done.providerAttested);
    expect(intent.providerAttested).not.toHaveProperty('verified');
  });

  test('an unregistered name: the merchant says available, the registry answers 404 → COMPLETED', async () => {
    const domain = unique('free');
    const intentId = await purchase(world, buyer, domain);
    const done = await untilIntent(world, intentId, (current) =>
      TERMINAL_OR_REVIEW.has(current.state),
    );
    expect(done.state).toBe('COMPLETED');
    expect(done.providerAttested).toMatchObject({ fields: { domain, available: true } });
    expect(done.serviceVerified).toMatchObject({
      verified: true,
      method: 'RDAP',
      source: `${registry.url}/domain/${domain}`,
      detail: expect.stringMatching(
        /^the registry agrees with the merchant .*is available.*has no domain object/,
      ),
    });
  });

  test('the merchant lies (says available, the registry says taken) → MANUAL_REVIEW DELIVERY_CONTRADICTED, never a pass', async () => {
    merchant.setFaults({ lieAboutAvailability: true });
    const intentId = await purchase(world, buyer, 'example.test');
    const done = await untilIntent(world, intentId, (current) =>
      TERMINAL_OR_REVIEW.has(current.state),
    );
    expect(done.state).toBe('MANUAL_REVIEW');
    expect(done.stateReason).toMatch(
      /^DELIVERY_CONTRADICTED: the registry contradicts the merchant \(the merchant said example\.test is available\)/,
    );
    expect(done.providerAttested).toMatchObject({
      status: 'ATTESTED',
      fields: { domain: 'example.test', available: true },
    });
    expect(done.serviceVerified).toMatchObject({
      verified: false,
      method: 'RDAP',
      source: `${registry.url}/domain/example.test`,
    });
    expect((await statesOf(intentId)).slice(-2)).toEqual(['DELIVERY_PENDING', 'MANUAL_REVIEW']);
    // Nothing posted automatically: a human decides.
    const fundingGroupId = (done.funding as { groupId: string }).groupId;
    expect(await ledgerKindsOf(intentId, fundingGroupId)).toEqual([
      'FUNDING',
      'SETTLEMENT',
      'RECOGNITION',
      'RECOGNITION',
    ]);
    // The ambiguity reconciler leaves it alone: it is not a payment question.
    await worker().runOnce();
    expect((await intentRow(world, intentId)).resolution).toBeNull();
  });

  test('registry down: verified false with the reason, retried after the backoff, then MANUAL_REVIEW DELIVERY_UNVERIFIED at the bound', async () => {
    registry.setFaults({ answer: 'HTTP_500' });
    const domain = unique('down');
    const intentId = await purchase(world, buyer, domain);
    const first = await untilIntent(world, intentId, (current) => current.deliveryAttempts >= 1);
    expect(first.state).toBe('DELIVERY_PENDING');
    expect(first.serviceVerified).toEqual({
      verified: false,
      method: 'RDAP',
      source: `${registry.url}/domain/${domain}`,
      checkedAt: expect.any(String),
      detail: expect.stringMatching(/^not verified: the RDAP lookup failed \(SERVER_ERROR\)/),
    });
    expect(first.deliveryNextAttemptAt!.getTime()).toBeGreaterThanOrEqual(
      Date.parse(first.serviceVerified!.checkedAt as string) + BACKOFF_MS - 1_000,
    );
    const asked = () => registry.requests.filter((r) => r.path === `/domain/${domain}`).length;
    const askedOnce = asked();

    // Before the backoff has passed, a round leaves it alone and does not ask the registry.
    await worker().runOnce();
    expect((await intentRow(world, intentId)).deliveryAttempts).toBe(1);
    expect(asked()).toBe(askedOnce);

    const due = () =>
      stack.db.pool.query(
        `UPDATE intent.consumer_intents SET delivery_next_attempt_at = now() - interval '1 second'
          WHERE intent_id = $1`,
        [intentId],
      );
    await due();
    await worker().runOnce();
    const second = await intentRow(world, intentId);
    expect(second).toMatchObject({ state: 'DELIVERY_PENDING', deliveryAttempts: 2 });
    expect(second.serviceVerified).toMatchObject({ verified: false });
    expect(asked()).toBeGreaterThan(askedOnce);

    await due();
    await worker().runOnce();
    const last = await intentRow(world, intentId);
    expect(last.state).toBe('MANUAL_REVIEW');
    expect(last.deliveryAttempts).toBe(MAX_ATTEMPTS);
    expect(last.stateReason).toMatch(
      /^DELIVERY_UNVERIFIED: no usable answer after 3 attempts; last: not verified: the RDAP lookup failed \(SERVER_ERROR\)/,
    );
    expect(last.serviceVerified).toMatchObject({ verified: false, method: 'RDAP' });
  });
});

describe('POST /verify_delivery', () => {
  let completedId: string;

  beforeAll(async () => {
    completedId = await purchase(world, buyer, 'registered.example');
    await untilIntent(world, completedId, (current) => current.state === 'COMPLETED');
  }, 60_000);

  /** POST /verify_delivery as `who`'s consumer session (or `bearer`), paid from `who`'s wallet. */
  const verify = (
    body: unknown,
    who: TestConsumer | null = buyer,
    paid = true,
    bearer = who?.session,
  ) =>
    (paid && who !== null ? fundingFetch(world, who.account) : fetch)(
      `${stack.url}/verify_delivery`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
        },
        body: JSON.stringify(body),
      },
    );

  test('unpaid: 402 with the $0.10 terms to the fee receiver on eip155:196', async () => {
    const answer = await verify({ intentId: completedId }, buyer, false);
    expect(answer.status).toBe(402);
    const required = JSON.parse(
      Buffer.from(answer.headers.get('payment-required')!, 'base64').toString('utf8'),
    ) as { accepts: Array<Record<string, unknown>> };
    expect(required.accepts[0]).toMatchObject({
      network: rails.funding.network,
      amount: VERIFY_PRICE.toString(),
      payTo: expect.stringMatching(new RegExp(`^${devnet.info.addresses.feeReceiver}$`, 'i')),
    });
  });

  test('a malformed body is a 400 before any 402; {intentId} without a bearer is a 401', async () => {
    const bad = [
      {},
      { intentId: 'ci_nope' },
      { intentId: completedId, capability: 'domains.check' },
      { capability: 'domains.check', params: { domain: 'taken.test' } },
      {
        capability: 'domains.check',
        params: { domain: 'taken.test' },
        providerAttested: { fields: { domain: 'taken.test', available: 'no' } },
      },
      {
        capability: 'domains.check',
        params: { domain: 'not a name' },
        providerAttested: { fields: { domain: 'taken.test', available: false } },
      },
      { capability: 'Not-A-Capability', params: {}, providerAttested: {} },
    ];
    for (const body of bad) {
      const answer = await verify(body, buyer, false);
      const error = (await answer.json()) as { code: string };
      expect([answer.status, error.code, body]).toEqual([400, 'REQUEST_INVALID', body]);
    }
    const anonymous = await verify({ intentId: completedId }, null, false);
    expect(anonymous.status).toBe(401);
  });

  test('paid with the official client, {intentId}: the stored serviceVerified, never the merchant’s claim', async () => {
    const feeReceiver = devnet.info.addresses.feeReceiver as `0x${string}`;
    const fundingChain = createChainPublicClient(devnet.info.chains.funding, {
      pollingIntervalMs: 20,
    });
    const before = await readTokenBalance(fundingChain, rails.funding.token, feeReceiver);
    const answer = await verify({ intentId: completedId });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('payment-response')).toEqual(expect.any(String));
    const body = (await answer.json()) as Record<string, unknown>;
    const stored = await intentRow(world, completedId);
    expect(body).toEqual({
      intentId: completedId,
      state: 'COMPLETED',
      serviceVerified: stored.serviceVerified,
    });
    expect(body).not.toHaveProperty('providerAttested');
    expect(await readTokenBalance(fundingChain, rails.funding.token, feeReceiver)).toBe(
      before + VERIFY_PRICE,
    );
    // The policy's owner and an admin may ask too, and get the same finding.
    for (const bearer of [buyer.owner, stack.adminToken]) {
      const asked = await verify({ intentId: completedId }, buyer, true, bearer);
      expect(asked.status).toBe(200);
      expect(await asked.json()).toEqual(body);
    }
  });

  test('paid, {capability, params, providerAttested}: the same check for a purchase made elsewhere', async () => {
    const honest = await verify({
      capability: 'domains.check',
      params: { domain: 'taken.test' },
      providerAttested: {
        status: 'ATTESTED',
        fields: { domain: 'taken.test', available: false, checkedAt: '2026-01-01T00:00:00Z' },
      },
    });
    expect(honest.status).toBe(200);
    expect(await honest.json()).toEqual({
      serviceVerified: {
        verified: true,
        method: 'RDAP',
        source: `${registry.url}/domain/taken.test`,
        checkedAt: expect.any(String),
        detail: expect.stringMatching(/^the registry agrees with the merchant/),
      },
    });

    // A merchant claim the registry contradicts is answered as not verified.
    const lie = await verify({
      capability: 'domains.check',
      params: { domain: 'taken.test' },
      providerAttested: { fields: { domain: 'taken.test', available: true } },
    });
    expect(lie.status).toBe(200);
    const lied = (await lie.json()) as { serviceVerified: Record<string, unknown> };
    expect(lied.serviceVerified).toMatchObject({
      verified: false,
      method: 'RDAP',
      detail: expect.stringMatching(/^the registry contradicts the merchant/),
    });
    expect(Object.keys(lied)).toEqual(['serviceVerified']);

    // Any other capability has no independent source, and says so.
    const other = await verify({
      capability: 'travel.book',
      params: { from: 'AMS' },
      providerAttested: { status: 'ATTESTED', fields: { booked: true } },
    });
    expect(other.status).toBe(200);
    expect(((await other.json()) as { serviceVerified: unknown }).serviceVerified).toMatchObject({
      verified: false,
      method: 'PROVIDER_ATTESTATION',
    });

    // The registry down: verified false with the reason, never verified.
    registry.setFaults({ answer: 'MALFORMED_JSON' });
    const down = await verify({
      capability: 'domains.check',
      params: { domain: 'taken.test' },
      providerAttested: { fields: { domain: 'taken.test', available: false } },
    });
    expect(((await down.json()) as { serviceVerified: unknown }).serviceVerified).toMatchObject({
      verified: false,
      detail: expect.stringMatching(/^not verified: the RDAP lookup failed \(MALFORMED_ANSWER\)/),
    });
  });

  /** The wallet's USD₮0 on the funding chain (eip155:196), where x402 settles. */
  async function balanceOf(address: string): Promise<bigint> {
    const fundingChain = createChainPublicClient(devnet.info.chains.funding, {
      pollingIntervalMs: 20,
    });
    return readTokenBalance(fundingChain, rails.funding.token, address as `0x${string}`);
  }

  async function unansweredIntent(): Promise<string> {
    const created = await postJson(
      stack.url,
      '/consumer/intents',
      { capability: 'domains.check', params: { domain: unique('unanswered') } },
      buyer.session,
    );
    expect(created.body.intent.state).toBe('AWAITING_FUNDING');
    return created.body.intent.intentId as string;
  }

  test('refused before any 402 and never charged: an unknown intent and another policy’s are the same 404, an unanswered one 409 DELIVERY_NOT_READY', async () => {
    const unansweredId = await unansweredIntent();
    const refused: Array<[TestConsumer, unknown, number, string]> = [
      [stranger, { intentId: completedId }, 404, 'CONSUMER_INTENT_NOT_FOUND'],
      [stranger, { intentId: 'ci_0123456789abcdef01234567' }, 404, 'CONSUMER_INTENT_NOT_FOUND'],
      [buyer, { intentId: 'ci_0123456789abcdef01234567' }, 404, 'CONSUMER_INTENT_NOT_FOUND'],
      [buyer, { intentId: unansweredId }, 409, 'DELIVERY_NOT_READY'],
    ];
    const feeReceiver = devnet.info.addresses.feeReceiver;
    const before = {
      buyer: await balanceOf(buyer.account.address),
      stranger: await balanceOf(stranger.account.address),
      feeReceiver: await balanceOf(feeReceiver),
    };
    for (const [who, body, status, code] of refused) {
      // Unpaid, then with the official client ready to pay: the same refusal, and no 402 to pay.
      for (const paid of [false, true]) {
        const answer = await verify(body, who, paid);
        const error = (await answer.json()) as Record<string, unknown>;
        expect([answer.status, error.code, body, paid]).toEqual([status, code, body, paid]);
        expect(answer.headers.get('payment-required')).toBeNull();
        expect(answer.headers.get('payment-response')).toBeNull();
      }
    }
    const notReady = await verify({ intentId: unansweredId }, buyer, false);
    expect(await notReady.json()).toMatchObject({
      code: 'DELIVERY_NOT_READY',
      retryable: expect.any(Boolean),
      details: { intentId: unansweredId, state: 'AWAITING_FUNDING' },
    });
    // The unknown and the foreign intent answer byte-for-byte alike (bar the correlation id).
    const [foreign, unknown] = await Promise.all(
      [completedId, 'ci_0123456789abcdef01234567'].map(async (intentId) => {
        const answer = (await (await verify({ intentId }, stranger, false)).json()) as Record<
          string,
          unknown
        >;
        const { correlationId: _ignored, details, ...rest } = answer;
        return { ...rest, detailKeys: Object.keys((details ?? {}) as object) };
      }),
    );
    expect(foreign).toEqual(unknown);
    expect({
      buyer: await balanceOf(buyer.account.address),
      stranger: await balanceOf(stranger.account.address),
      feeReceiver: await balanceOf(feeReceiver),
    }).toEqual(before);
  });

  test('a payment sent along with a refused request is not taken; it still pays for one that can be answered', async () => {
    const unpaid = await verify({ intentId: completedId }, buyer, false);
    expect(unpaid.status).toBe(402);
    const required = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
    const payload = await officialClient(buyer.account, fundingPayment(rails)).createPaymentPayload(
      required,
    );
    const header = encodePaymentSignatureHeader(payload);
    const send = (body: unknown) =>
      fetch(`${stack.url}/verify_delivery`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${buyer.session}`,
          'payment-signature': header,
        },
        body: JSON.stringify(body),
      });
    const before = await balanceOf(buyer.account.address);
    const unansweredId = await unansweredIntent();
    for (const [body, status] of [
      [{ intentId: 'ci_0123456789abcdef01234567' }, 404],
      [{ intentId: unansweredId }, 409],
    ] as const) {
      const refused = await send(body);
      expect([refused.status, refused.headers.get('payment-response')]).toEqual([status, null]);
    }
    expect(await balanceOf(buyer.account.address)).toBe(before);

    const answered = await send({ intentId: completedId });
    expect(answered.status).toBe(200);
    expect(decodePaymentResponseHeader(answered.headers.get('payment-response')!)).toMatchObject({
      success: true,
    });
    expect(((await answered.json()) as Record<string, unknown>).intentId).toBe(completedId);
    expect(await balanceOf(buyer.account.address)).toBe(before - VERIFY_PRICE);
  });
});
