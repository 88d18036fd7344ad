// The service as a fleet (issue #32): two replicas (`spend-control start`, real processes) behind
// haproxy, both on PostgreSQL through PgBouncer in transaction mode, LISTEN and migrations on direct
// connections, and a worker (`start --role worker`), the only process holding the treasury key.
// Everything is configured by environment: external database, chain RPCs, merchant and RDAP
// registry (the devnet's, as HTTP servers on 127.0.0.1). A paid x402 call goes through the
// balancer; an escalation raised through one replica is approved through the other, and each
// replica's owner socket hears what the other did; a consumer purchase is created on one replica,
// funded through the balancer and executed on the other, the worker pays the merchant and checks
// the delivery with the registry; then a replica is killed (SIGKILL) while agents pay, its payments
// are presented again to the survivor, and its websocket clients reconnect there. The books end
// balanced, every payment booked once, and the fee receiver's chain balance equals the ledger's.
import { createHash, randomBytes } from 'node:crypto';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import type { DomainsMerchant } from '../../devnet/merchants/domains/server';
import { startDevnetDomainsMerchant } from '../../devnet/merchants/domains/start';
import { type DevnetRdapRegistry, startDevnetRdapRegistry } from '../../devnet/rdap/registry';
import { createChainPublicClient } from '../../platform/chain/clients';
import { readTokenBalance } from '../../platform/chain/tokens';
import { createTestDatabase, serverUrl, type TestDatabase } from '../../platform/db/testDb';
import { createConsumerPolicy } from '../support/consumers';
import { fundingBalance, mintedPayer } from '../support/devnetPayers';
import {
  createEscalatingPolicy,
  escalatingIntent,
  subscribeToEscalations,
  type EscalationMessage,
  type EscalationSubscriber,
  type TestPolicy,
} from '../support/escalations';
import {
  freePort,
  startHaproxy,
  startPgBouncer,
  startReplica,
  startWorkerRole,
  type FleetProcess,
  type Haproxy,
  type PgBouncer,
  type Replica,
} from '../support/fleet';
import { officialFetch } from '../support/officialClient';
import { signIn } from '../support/siwe';
import { graphql, postJson, type TestStack } from '../support/stack';
import { transferIn } from '../support/transfers';
import { feeReceiverDrift, trialBalanceLines } from '../support/x402Books';

jest.setTimeout(240_000);

const PING_PRICE = 10_000n;
const DECIDE = `mutation ($pollRef: ID!) {
  decideEscalation(pollRef: $pollRef, decision: APPROVE) { pollRef state outcome }
}`;

let db: TestDatabase;
let devnet: DevnetChains;
let bouncer: PgBouncer;
let balancer: Haproxy;
const replicas: Replica[] = [];
let worker: FleetProcess;
let merchant: DomainsMerchant;
let registry: DevnetRdapRegistry;
/** Sockets still open when a test fails half-way. */
const disposers: Array<() => Promise<void>> = [];
const adminToken = randomBytes(32).toString('hex');
const owner = privateKeyToAccount(generatePrivateKey());
let ownerToken: string;
let policy: TestPolicy;
/** The agent paying for preflights (a priced route) with the official x402 client. */
let agentFetch: typeof fetch;

function fundingPayment(sentSignatures?: string[]) {
  return {
    network: devnet.info.chains.funding.caip2 as `${string}:${string}`,
    asset: devnet.info.chains.funding.token.address.toLowerCase(),
    ...(sentSignatures ? { sentSignatures } : {}),
  };
}

/** A paid preflight of a fresh escalating intent through `url`. */
async function escalate(
  url: string,
): Promise<{ decision: string; escalation: { pollRef: string } }> {
  const response = await agentFetch(`${url}/preflight_payment`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      policyId: policy.policyId,
      intent: escalatingIntent(policy, Date.now()),
    }),
  });
  const body = (await response.json()) as { decision: string; escalation: { pollRef: string } };
  if (response.status !== 200)
    throw new Error(`preflight answered ${response.status}: ${JSON.stringify(body)}`);
  return body;
}

/** What the support helpers read of a stack, pointed at one URL (a replica or the balancer). */
function at(url: string): TestStack {
  return {
    url,
    wsUrl: `${url.replace(/^http/, 'ws')}/graphql`,
    adminToken,
    db: { pool: db.pool },
  } as unknown as TestStack;
}

/**
 * A relayer key of the replica's own, with gas on the funding chain: each replica sends its
 * settlements from its own account, so two replicas never race for one account's nonces.
 */
async function replicaRelayer(): Promise<string> {
  const key = generatePrivateKey();
  const response = await fetch(devnet.info.chains.funding.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'anvil_setBalance',
      params: [privateKeyToAccount(key).address, '0x3635c9adc5dea00000'],
    }),
  });
  const answer = (await response.json()) as { error?: unknown };
  if (answer.error !== undefined) throw new Error(`anvil_setBalance: ${JSON.stringify(answer)}`);
  return key;
}

/**
 * A replica's environment. Replicas know the treasury by its address only (they quote and take
 * funding); its key is the worker's, which pays merchants and refunds.
 */
function replicaEnv(publicUrl: string, relayerKey: string): Record<string, string> {
  const { TREASURY_PRIVATE_KEY: _treasuryKey, ...shared } = fleetEnv(publicUrl, relayerKey);
  return { ...shared, TREASURY_ADDRESS: devnet.info.addresses.treasury };
}

/** What every process of the fleet is configured with (the worker's treasury key included). */
function fleetEnv(publicUrl: string, relayerKey: string): Record<string, string> {
  const { funding, settlement } = devnet.info.chains;
  return {
    NODE_ENV: 'test',
    PUBLIC_URL: publicUrl,
    // The service's pool goes through PgBouncer; LISTEN and migrations go direct.
    DATABASE_URL: bouncer.through(db.url),
    DATABASE_LISTEN_URL: db.url,
    MIGRATION_DATABASE_URL: db.ownerUrl,
    FUNDING_RPC_URL: funding.rpcUrl,
    SETTLEMENT_RPC_URL: settlement.rpcUrl,
    FUNDING_TOKEN_ADDRESS: funding.token.address,
    SETTLEMENT_TOKEN_ADDRESS: settlement.token.address,
    TREASURY_PRIVATE_KEY: devnet.keys.treasury.exportPrivateKey(),
    RELAYER_PRIVATE_KEY: relayerKey,
    FEE_RECEIVER_ADDRESS: devnet.info.addresses.feeReceiver,
    // Consumer purchases: the merchant on the settlement chain, deliveries checked by RDAP.
    PROVIDER_DOMAINS_URL: merchant.url,
    RDAP_BOOTSTRAP_URL: registry.bootstrapUrl,
    ADMIN_TOKEN_HASHES: createHash('sha256').update(adminToken).digest('hex'),
    SESSION_SECRET: fleetSecrets.session,
    INTERNAL_ACTOR_SECRET: fleetSecrets.actor,
    // A payment left by a killed replica is resumable by the other after its lease.
    X402_SETTLE_TIMEOUT_MS: '3000',
    X402_LEASE_MS: '6000',
    X402_RECONCILE_INTERVAL_MS: '1000',
    RATE_LIMIT_IP_PER_MINUTE: '1000000',
    RATE_LIMIT_IP_BURST: '1000000',
  };
}

const fleetSecrets = {
  session: randomBytes(32).toString('hex'),
  actor: randomBytes(32).toString('hex'),
};

beforeAll(async () => {
  for (const name of ['FUNDING_RPC_URL', 'SETTLEMENT_RPC_URL', 'DATA_DIR'])
    delete process.env[name];
  db = await createTestDatabase();
  devnet = await startDevnetChains({ dataDir: null });
  merchant = await startDevnetDomainsMerchant({
    settlement: devnet.info.chains.settlement,
    dataDir: null,
  });
  registry = await startDevnetRdapRegistry();
  bouncer = await startPgBouncer(serverUrl(), [db.logins.service]);
  const [edgePort, portA, portB] = [await freePort(), await freePort(), await freePort()];
  const publicUrl = `http://127.0.0.1:${edgePort}`;
  // One at a time: the first start applies nothing new (the test database is migrated), both
  // check the migrations under the migration lock on the direct connection.
  replicas.push(await startReplica(portA, replicaEnv(publicUrl, await replicaRelayer())));
  replicas.push(await startReplica(portB, replicaEnv(publicUrl, await replicaRelayer())));
  worker = await startWorkerRole(fleetEnv(publicUrl, await replicaRelayer()));
  balancer = await startHaproxy(edgePort, [portA, portB]);
  await waitUntilServing(balancer.url);
  policy = await createEscalatingPolicy(at(balancer.url), owner.address.toLowerCase());
  ownerToken = await signIn(balancer.url, owner);
  agentFetch = officialFetch(await mintedPayer(devnet, 1_000_000n), fundingPayment());
});

afterAll(async () => {
  for (const dispose of disposers) await dispose();
  await balancer?.stopAndClean();
  for (const replica of replicas) await replica.stop();
  await worker?.stop();
  await bouncer?.stopAndClean();
  await registry?.stop();
  await merchant?.stop();
  await devnet?.stop();
  await db?.drop();
});

async function waitUntilServing(url: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answered = await fetch(`${url}/readyz`).then(
      (response) => response.status,
      () => 0,
    );
    if (answered === 200) return;
    if (Date.now() > deadline) throw new Error(`${url} never became ready`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Subscribes and waits until the replica's fan-out has the socket (its ack, then a short settle). */
async function ownerSocket(url: string): Promise<EscalationSubscriber> {
  const socket = subscribeToEscalations(at(url), ownerToken);
  await new Promise((resolve) => setTimeout(resolve, 500));
  return socket;
}

function onePollRef(pollRef: string, state: string) {
  return (message: EscalationMessage) => message.pollRef === pollRef && message.state === state;
}

test('a purchase through the balancer, an escalation raised on one replica and approved on the other, each socket hearing the other', async () => {
  const [a, b] = replicas;
  const payer = await mintedPayer(devnet, 1_000_000n);
  const pay = officialFetch(payer, fundingPayment());
  const paid = await pay(`${balancer.url}/ping_service`);
  expect(paid.status).toBe(200);
  expect(await paid.json()).toMatchObject({ ok: true, tool: 'ping_service' });

  const onA = await ownerSocket(a.url);
  const onB = await ownerSocket(b.url);
  try {
    const escalated = await escalate(a.url);
    expect(escalated.decision).toBe('ESCALATED_THRESHOLD');
    const { pollRef } = escalated.escalation;
    // Raised through A: B's socket hears it (PostgreSQL NOTIFY, B's own LISTEN connection).
    await onB.waitFor(onePollRef(pollRef, 'PENDING'));

    const approved = await graphql(b.url, DECIDE, { pollRef }, ownerToken);
    expect(approved.body.errors).toBeUndefined();
    expect(approved.body.data.decideEscalation).toEqual({
      pollRef,
      state: 'APPROVED',
      outcome: 'APPROVED',
    });
    // Approved through B: A's socket hears it.
    await expect(onA.waitFor(onePollRef(pollRef, 'APPROVED'))).resolves.toMatchObject({
      policyId: policy.policyId,
    });
    expect(onA.errors).toEqual([]);
    expect(onB.errors).toEqual([]);
  } finally {
    await onA.close();
    await onB.close();
  }
});

/** The chain's view of a purchase's parties: the buyer and treasury on 196, treasury and merchant on 8453. */
async function purchaseBalances(buyer: `0x${string}`) {
  const { funding, settlement } = devnet.info.chains;
  const fundingChain = createChainPublicClient(funding, { pollingIntervalMs: 20 });
  const settlementChain = createChainPublicClient(settlement, { pollingIntervalMs: 20 });
  const treasury = devnet.info.addresses.treasury;
  return {
    buyer: await readTokenBalance(fundingChain, funding.token.address, buyer),
    fundingTreasury: await readTokenBalance(fundingChain, funding.token.address, treasury),
    settlementTreasury: await readTokenBalance(settlementChain, settlement.token.address, treasury),
    merchant: await readTokenBalance(settlementChain, settlement.token.address, merchant.payTo),
  };
}

/** Reads the intent through the balancer until COMPLETED; a state that cannot get there fails. */
async function untilCompleted(intentId: string, session: string): Promise<any> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const response = await fetch(`${balancer.url}/consumer/intents/${intentId}`, {
      headers: { authorization: `Bearer ${session}` },
    });
    expect(response.status).toBe(200);
    const { intent } = (await response.json()) as { intent: any };
    if (intent.state === 'COMPLETED') return intent;
    if (
      ['MANUAL_REVIEW', 'REFUND_PENDING', 'REFUNDED', 'BLOCKED', 'EXPIRED'].includes(intent.state)
    )
      throw new Error(`intent ended ${intent.state}: ${intent.stateReason}`);
    if (Date.now() > deadline) throw new Error(`intent ${intentId} is still ${intent.state}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('a consumer purchase across the fleet: created on one replica, funded through the balancer, executed on the other, run by the worker role; COMPLETED with its receipt, each leg paid once, the books balanced', async () => {
  const [a, b] = replicas;
  const funding = devnet.info.chains.funding;
  const buyer = await mintedPayer(devnet, 10_000_000n);
  // Only the consumer session: every sign-in counts in the shared bucket the next test reads.
  const buyerPolicy = await createConsumerPolicy(at(a.url), devnet, buyer.address, {
    escalateAbove: '5.00',
  });
  const session = await signIn(balancer.url, buyer, buyerPolicy.policyId);
  const domain = `fleet-${Date.now().toString(36)}.test`;
  const before = await purchaseBalances(buyer.address);

  // Create on A: the quote is the merchant's own 402 (PROVIDER_DOMAINS_URL).
  const created = await postJson(
    a.url,
    '/consumer/intents',
    { capability: 'domains.check', params: { domain } },
    session,
  );
  expect(created.status).toBe(201);
  expect(created.body.fundingRequest.payTo).toBe(devnet.info.addresses.treasury.toLowerCase());
  const intentId = created.body.intent.intentId as string;
  const fundingAmount = BigInt(created.body.fundingRequest.amount);
  const providerCost = BigInt(created.body.quote.providerCost.amount);
  expect(providerCost).toBeGreaterThan(0n);
  // Fund through the balancer with the official x402 client, execute on B.
  const funded = await officialFetch(buyer, fundingPayment())(
    `${balancer.url}/consumer/intents/${intentId}/fund`,
    { method: 'POST', headers: { authorization: `Bearer ${session}` } },
  );
  expect(funded.status).toBe(200);
  const executed = await postJson(b.url, `/consumer/intents/${intentId}/execute`, {}, session);
  expect(executed.status).toBe(202);
  // Only the worker holds the treasury key: it pays the merchant, then RDAP confirms the delivery.
  const intent = await untilCompleted(intentId, session);
  expect(intent.providerAttested).toMatchObject({ status: 'ATTESTED', fields: { domain } });
  expect(intent.serviceVerified).toMatchObject({ verified: true, method: 'RDAP' });
  expect(registry.requests.map((request) => request.path)).toContain(`/domain/${domain}`);

  // Each leg paid exactly once on chain.
  const after = await purchaseBalances(buyer.address);
  expect({
    buyer: after.buyer - before.buyer,
    fundingTreasury: after.fundingTreasury - before.fundingTreasury,
    settlementTreasury: after.settlementTreasury - before.settlementTreasury,
    merchant: after.merchant - before.merchant,
  }).toEqual({
    buyer: -fundingAmount,
    fundingTreasury: fundingAmount,
    settlementTreasury: -providerCost,
    merchant: providerCost,
  });

  // The public receipt, through the balancer: COMPLETED, its legs the chains' own transfers.
  const receiptResponse = await fetch(`${balancer.url}/consumer/receipt/${intentId}`);
  expect(receiptResponse.status).toBe(200);
  const receipt = (await receiptResponse.json()) as any;
  expect(receipt).toMatchObject({
    intentId,
    state: 'COMPLETED',
    paymentLegs: {
      funding: { amount: fundingAmount.toString(), sender: buyer.address.toLowerCase() },
      settlement: { amount: providerCost.toString(), recipient: merchant.payTo.toLowerCase() },
    },
  });
  const fundingChain = createChainPublicClient(funding, { pollingIntervalMs: 20 });
  expect(
    await transferIn(fundingChain, funding.token.address, receipt.paymentLegs.funding.txHash),
  ).toEqual({
    from: buyer.address.toLowerCase(),
    to: devnet.info.addresses.treasury.toLowerCase(),
    value: fundingAmount.toString(),
  });

  // The books: the funding payment booked once, one group per step, every asset at zero.
  const payments = await db.pool.query<{ state: string; funding_group_id: string | null }>(
    `SELECT state, funding_group_id FROM ledger.service_payments WHERE intent_ref = $1`,
    [intentId],
  );
  expect(payments.rows).toEqual([{ state: 'ANSWERED', funding_group_id: expect.any(String) }]);
  const groups = await db.pool.query<{ kind: string }>(
    `SELECT kind FROM ledger.groups WHERE intent_ref = $1 OR group_id = $2 ORDER BY seq`,
    [intentId, payments.rows[0]!.funding_group_id],
  );
  expect(groups.rows.map((group) => group.kind)).toEqual([
    'FUNDING',
    'SETTLEMENT',
    'RECOGNITION',
    'RECOGNITION',
  ]);
  for (const line of await trialBalanceLines(at(balancer.url)))
    expect(line).toMatchObject({ netAtomic: '0', balanced: true });
});

test('rate limits are shared: the sign-in bucket of one client address holds across both replicas', async () => {
  // RATE_LIMIT_SIGN_IN_* keeps its default (10 a minute, burst 10): one replica alone would grant
  // 10, two replicas with buckets of their own 20. beforeAll and the purchase signed in once each
  // (four requests), so a shared bucket has about 6 left, separate ones would grant all 14.
  const statuses: number[] = [];
  for (let n = 0; n < 14; n += 1) {
    const response = await fetch(`${balancer.url}/consumer/auth/nonce`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    await response.arrayBuffer();
    statuses.push(response.status);
  }
  const granted = statuses.filter((status) => status === 200).length;
  expect(granted).toBeLessThanOrEqual(10);
  expect(granted).toBeGreaterThanOrEqual(5);
  expect(statuses.slice(granted)).toEqual(Array(14 - granted).fill(429));
});

/** Pays `calls` ping_service calls one after another; a failed call presents the same payment again. */
async function payRepeatedly(
  payer: PrivateKeyAccount,
  calls: number,
  onPaid: () => void,
): Promise<{ paid: number; retries: number }> {
  const sentSignatures: string[] = [];
  const pay = officialFetch(payer, fundingPayment(sentSignatures));
  let paid = 0;
  let retries = 0;
  for (let call = 0; call < calls; call += 1) {
    for (;;) {
      const sentBefore = sentSignatures.length;
      const status = await pay(`${balancer.url}/ping_service`).then(
        (response) => response.arrayBuffer().then(() => response.status),
        () => 0,
      );
      if (status === 200) break;
      // The replica may have died holding it: present the very same authorization until served.
      if (sentSignatures.length > sentBefore) {
        retries += await presentAgain(sentSignatures[sentSignatures.length - 1]);
        break;
      }
      // Refused before any payment was signed (the 402 challenge): ask again.
      retries += 1;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    paid += 1;
    onPaid();
  }
  return { paid, retries };
}

async function presentAgain(signature: string): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (let attempt = 1; ; attempt += 1) {
    const [status, body] = await fetch(`${balancer.url}/ping_service`, {
      headers: { 'payment-signature': signature },
    }).then(
      (response) => response.text().then((text) => [response.status, text] as const),
      (error: Error) => [0, error.message] as const,
    );
    if (status === 200) return attempt;
    if (Date.now() > deadline)
      throw new Error(`a payment presented again still answers ${status}: ${body}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

test('a replica killed mid-load: payments presented again are served once by the other, sockets reconnect there, the books balance', async () => {
  const [a] = replicas;
  // Two sockets through the balancer, opened back to back: round-robin puts one on each replica.
  const sockets = [reconnectingSocket(), reconnectingSocket()];
  await Promise.all(sockets.map((socket) => socket.connected));
  await new Promise((resolve) => setTimeout(resolve, 500));

  const payers: PrivateKeyAccount[] = [];
  // One mint at a time: the deployer's nonces come one after another.
  for (let n = 0; n < 3; n += 1) payers.push(await mintedPayer(devnet, 1_000_000n));
  let paidSoFar = 0;
  let killed = false;
  const load = payers.map((payer) =>
    payRepeatedly(payer, 6, () => {
      paidSoFar += 1;
      if (paidSoFar === 5 && !killed) {
        killed = true;
        a.child.kill('SIGKILL');
      }
    }),
  );
  const results = await Promise.all(load);
  expect(killed).toBe(true);
  await expect(a.exited).resolves.toBeNull();
  expect(results.map((result) => result.paid)).toEqual([6, 6, 6]);

  // The socket that was on the killed replica reconnected (to the survivor): a change made now
  // reaches both sockets.
  expect(sockets.some((socket) => socket.closes() > 0)).toBe(true);
  const escalated = await escalate(balancer.url);
  const pollRef = escalated.escalation.pollRef;
  for (const socket of sockets) await socket.waitFor(pollRef);

  // Every authorization is booked once; each payer paid exactly its 6 calls on chain.
  const doubled = await db.pool.query(
    `SELECT payer, nonce, count(*) FROM ledger.service_payments GROUP BY payer, nonce HAVING count(*) > 1`,
  );
  expect(doubled.rows).toEqual([]);
  const booked = await db.pool.query<{ payer: string; n: string }>(
    `SELECT payer, count(*)::text AS n FROM ledger.service_payments
      WHERE payer = ANY($1::text[]) AND fee_group_id IS NOT NULL GROUP BY payer`,
    [payers.map((payer) => payer.address.toLowerCase())],
  );
  expect(booked.rows.map((row) => row.n)).toEqual(['6', '6', '6']);
  for (const payer of payers)
    expect(await fundingBalanceOf(payer.address)).toBe(1_000_000n - 6n * PING_PRICE);

  for (const line of await trialBalanceLines(at(balancer.url)))
    expect(line).toMatchObject({ netAtomic: '0', balanced: true });
  const drift = await feeReceiverDrift(at(balancer.url), devnet);
  for (const chain of drift) expect(chain.onchainAtomic).toBe(chain.ledgerAtomic);
});

function fundingBalanceOf(address: string): Promise<bigint> {
  return fundingBalance(devnet, address);
}

/** An owner socket through the balancer that retries when its replica goes away. */
function reconnectingSocket() {
  let closes = 0;
  const seen: string[] = [];
  const waiters: Array<{ pollRef: string; resolve: () => void }> = [];
  const client = createClient({
    url: `${balancer.url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 20,
    retryWait: () => new Promise((resolve) => setTimeout(resolve, 300)),
    shouldRetry: () => true,
    connectionParams: { authorization: `Bearer ${ownerToken}` },
    onNonLazyError: () => undefined,
  });
  const connected = new Promise<void>((resolve) => client.on('connected', () => resolve()));
  client.on('closed', () => (closes += 1));
  client.subscribe<{ escalationUpdated: EscalationMessage }>(
    { query: 'subscription { escalationUpdated { pollRef state } }' },
    {
      next: (result) => {
        const pollRef = result.data?.escalationUpdated.pollRef;
        if (pollRef === undefined) return;
        seen.push(pollRef);
        for (const waiter of waiters.filter((w) => w.pollRef === pollRef)) waiter.resolve();
      },
      error: () => undefined,
      complete: () => undefined,
    },
  );
  disposers.push(async () => client.dispose());
  return {
    connected,
    closes: () => closes,
    waitFor(pollRef: string): Promise<void> {
      if (seen.includes(pollRef)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ pollRef, resolve }));
    },
  };
}
