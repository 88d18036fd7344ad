// Paying attackers (issue 27, item 3): a request the paywall offers a payment for has passed every
// check that comes before the charge, so once paid it must get an answer, never a 5xx (a 500 after
// payment charges for nothing, and answers 500 again on every re-presentation). Seeded requests
// are drawn from the priced routes of the route table (the fuzz's own generator); each one the
// service answers 402 unpaid is schema-valid, and is paid with the official x402 client and sent
// again byte for byte; so are the odd but valid bodies named below. No paid answer is a 5xx.
import http from 'node:http';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import fc from 'fast-check';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import { buildRoutes } from '../../gateway/rest/routes';
import { createChainPublicClient, createChainWalletClient } from '../../platform/chain/clients';
import { mintToken } from '../../platform/chain/tokens';
import { officialClient } from '../support/officialClient';
import { startTestStack, type TestStack } from '../support/stack';
import { type AttackRequest, describeRequest, sendAttack } from './http';
import { attackRequest } from './requests';
import { type AttackTarget, restTargets } from './surface';
import type { FuzzWorld } from './values';
import { attackStackOptions, newChannelSecrets, worldOn } from './world';

const SEED = Number(process.env.ATTACK_SEED ?? 20_261_128);
const DRAWS = 400;
/** Paid requests per route at most (each costs its price on the devnet). */
const PAID_PER_ROUTE = 4;
const TIMEOUT_MS = 20_000;
const PAYMENT_HEADERS = ['payment-signature', 'x-payment'];

let devnet: DevnetChains;
let stack: TestStack;
let world: FuzzWorld;
let priced: AttackTarget[];
const agent = new http.Agent({ keepAlive: false });
const payer = privateKeyToAccount(generatePrivateKey());

function jsonPost(path: string, body: unknown, bearer?: string): AttackRequest {
  return {
    method: 'POST',
    path,
    headers: {
      'content-type': 'application/json',
      ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
    },
    body: Buffer.from(JSON.stringify(body)),
    label: path,
    kind: 'rest',
  };
}

/** Odd verify_delivery claims the validator accepts (issue 27: paid, then 500 forever). */
const ODD_CLAIMS: ReadonlyArray<Record<string, unknown>> = [
  { capability: 'shop.*', params: {}, providerAttested: {} },
  { capability: 'a.1b', params: {}, providerAttested: {} },
  {
    capability: `a${'.b'.repeat(31)}_`,
    params: { deep: [[[{}]]] },
    providerAttested: { fields: null },
  },
];

/** Odd but schema-valid bodies, at least one per priced POST route that reads a body. */
function oddButValid(): AttackRequest[] {
  const { policyId } = world;
  const intent = (overrides: Record<string, unknown>) => ({ ...world.intent, ...overrides });
  const bodies: Array<[string, unknown, string?]> = [
    ...ODD_CLAIMS.map((claim): [string, unknown] => ['/verify_delivery', claim]),
    ['/preflight_payment', { policyId, intent: intent({ capability: 'shop.*', amount: '1' }) }],
    ['/preflight_payment', { policyId, intent: intent({ capability: 'a.1b', provider: '~' }) }],
    ['/detect_duplicate', { policyId, intent: intent({ capability: 'x.*.*' }) }],
    ['/score_vendor', { provider: '~' }],
    ['/score_vendor', { provider: 'x'.repeat(253) }],
    ['/score_buyer', { policyId, agentId: 'a' }, world.ownerToken],
    [
      '/redact_payment_metadata',
      { metadata: { '': '', a: { b: [1, null, `0x${'f'.repeat(40)}`] } } },
    ],
    ['/cafe/order/latte', { cupName: '\u2615' }],
  ];
  return bodies.map(([path, body, bearer]) => jsonPost(path, body, bearer));
}

/** Sends `request` again with the payment the 402 asks for, signed by the official client. */
async function paid(request: AttackRequest, challenge: string): Promise<AttackRequest> {
  const required = decodePaymentRequiredHeader(challenge);
  const payload = await officialClient(payer, {
    network: 'eip155:196',
    asset: devnet.info.chains.funding.token.address.toLowerCase(),
  }).createPaymentPayload(required);
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(
      ([name]) => !PAYMENT_HEADERS.includes(name.toLowerCase()),
    ),
  );
  return {
    ...request,
    headers: { ...headers, 'payment-signature': encodePaymentSignatureHeader(payload) },
  };
}

interface PaidOutcome {
  readonly request: string;
  readonly status: number | string;
  readonly body: string;
}

/** The unpaid answer's status (or why none came), for a request not offered a payment. */
let lastUnpaid: number | string = 0;

/** Unpaid first: a 402 with a challenge means the request is valid; then paid. Null when not offered. */
async function payFor(request: AttackRequest): Promise<PaidOutcome | null> {
  const unpaid = await sendAttack(stack.url, request, TIMEOUT_MS, agent);
  lastUnpaid = unpaid.kind === 'response' ? unpaid.status : unpaid.kind;
  if (unpaid.kind !== 'response' || unpaid.status !== 402) return null;
  const challenge = unpaid.headers['payment-required'];
  if (typeof challenge !== 'string') return null;
  const answer = await sendAttack(stack.url, await paid(request, challenge), TIMEOUT_MS, agent);
  return {
    request: describeRequest(request),
    status: answer.kind === 'response' ? answer.status : answer.kind,
    body: answer.kind === 'response' ? answer.body.toString('utf8').slice(0, 300) : '',
  };
}

function failed(outcome: PaidOutcome): boolean {
  return typeof outcome.status !== 'number' || outcome.status >= 500;
}

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
  const channels = newChannelSecrets();
  stack = await startTestStack({ ...attackStackOptions(devnet, channels), x402: { devnet } });
  world = await worldOn(stack, SEED, false, channels);
  const openapi = (await (await fetch(`${stack.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  priced = restTargets(openapi, buildRoutes()).filter((target) => target.priced);
  const funding = devnet.info.chains.funding;
  await mintToken({
    publicClient: createChainPublicClient(funding, { pollingIntervalMs: 20 }),
    minter: createChainWalletClient(funding, devnet.keys.deployer.account, {
      pollingIntervalMs: 20,
    }),
    token: funding.token.address,
    to: payer.address,
    amountAtomic: 1_000_000_000n,
  });
}, 120_000);

afterAll(async () => {
  agent.destroy();
  await stack?.stop();
  await devnet?.stop();
});

test('odd but schema-valid bodies for each priced route: each offered a payment, and once paid never a 5xx', async () => {
  const outcomes: PaidOutcome[] = [];
  const refusedUnpaid: Array<{ request: string; status: number | string }> = [];
  for (const request of oddButValid()) {
    const outcome = await payFor(request);
    if (outcome === null)
      refusedUnpaid.push({ request: describeRequest(request), status: lastUnpaid });
    else outcomes.push(outcome);
  }
  // A route may refuse before any charge (a score without history is 422, never charged): a 4xx.
  for (const refusal of refusedUnpaid)
    expect([refusal.request, refusal.status]).toEqual([refusal.request, 422]);
  const offered = new Set(outcomes.map((outcome) => outcome.request.split(' ')[1]));
  expect([...offered].sort()).toEqual([
    '/cafe/order/latte',
    '/detect_duplicate',
    '/preflight_payment',
    '/redact_payment_metadata',
    '/verify_delivery',
  ]);
  expect(outcomes.filter(failed)).toEqual([]);
  // The odd claims are answered (PROVIDER_ATTESTATION), not refused after the charge.
  expect(outcomes.slice(0, ODD_CLAIMS.length).map((outcome) => outcome.status)).toEqual(
    ODD_CLAIMS.map(() => 200),
  );
}, 120_000);

test(`${DRAWS} seeded requests to the priced routes: every one offered a payment is paid, and no paid answer is a 5xx`, async () => {
  expect(priced.length).toBeGreaterThan(5);
  const requests = fc.sample(attackRequest(priced, world), { numRuns: DRAWS, seed: SEED });
  const paidPerRoute = new Map<string, number>();
  const outcomes: PaidOutcome[] = [];
  for (const request of requests) {
    if (request.kind !== 'rest' || (paidPerRoute.get(request.label) ?? 0) >= PAID_PER_ROUTE)
      continue;
    const outcome = await payFor(request);
    if (outcome === null) continue;
    paidPerRoute.set(request.label, (paidPerRoute.get(request.label) ?? 0) + 1);
    outcomes.push(outcome);
  }
  console.log(
    `paid fuzz: ${outcomes.length} paid requests over ${paidPerRoute.size} priced routes: ${JSON.stringify(Object.fromEntries(paidPerRoute))}`,
  );
  expect(outcomes.length).toBeGreaterThan(0);
  expect(outcomes.filter(failed)).toEqual([]);
}, 300_000);
