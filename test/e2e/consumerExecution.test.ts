// Consumer execution end to end: real anvil chains (eip155:196 funding, eip155:8453 settlement),
// the real devnet domains merchant (official x402 server, its own facilitator), the official
// @x402/fetch client paying it through the capability-backed treasury signer, and the service's
// routes through the gateway. Every money claim is read from the chain or the ledger.
import { type Address, type Hex, parseAbi } from 'viem';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import { devnetConsumerRails } from '../../devnet/consumerRails';
import type { DomainsMerchant } from '../../devnet/merchants/domains/server';
import { startDevnetDomainsMerchant } from '../../devnet/merchants/domains/start';
import {
  type ChainPublicClient,
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
} from '../../platform/chain/clients';
import { readTokenBalance } from '../../platform/chain/tokens';
import { getConsumerIntent } from '../../subgraphs/intent/consumer/store';
import {
  mintAndRedeem,
  recordSignedAuthorization,
} from '../../subgraphs/intent/consumer/execution/capabilities';
import { createTreasurySigner } from '../../platform/chain/treasurySigner';
import type { ConsumerRails } from '../../subgraphs/kit';
import {
  COST,
  FUNDING_AMOUNT,
  type SeedContext,
  type SeededPolicy,
  seedFundedIntent,
  seedPolicy,
  seedPolicyCheckingIntent,
} from '../support/consumerExecutionSeed';
import { postJson, startTestStack, type TestStack } from '../support/stack';

const EVENTS = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
]);
const ERC20 = parseAbi(['function transfer(address to, uint256 value) returns (bool)']);

let devnet: DevnetChains;
let merchant: DomainsMerchant;
let shortMerchant: DomainsMerchant;
let rails: ConsumerRails;
let stack: TestStack;
let seed: SeedContext;
let policy: SeededPolicy;
let settlementChain: ChainPublicClient;
let fundingChain: ChainPublicClient;

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
  const settlement = devnet.info.chains.settlement;
  merchant = await startDevnetDomainsMerchant({ settlement, dataDir: null });
  // A merchant asking for 8-second authorizations, so "never settled" is provable within a test.
  shortMerchant = await startDevnetDomainsMerchant({
    settlement,
    dataDir: null,
    maxTimeoutSeconds: 8,
  });
  rails = devnetConsumerRails(devnet.info, { 'spendctl-domains': merchant.url });
  stack = await startTestStack({
    consumer: {
      rails,
      execution: {
        treasuryKey: devnet.keys.treasury,
        relayerKey: devnet.keys.relayer,
        intervalMs: 0,
        // These tests step the worker's rounds by hand (consumerPurchase.test.ts runs it awake).
        wakeOnNotify: false,
        requestTimeoutMs: 4_000,
      },
    },
  });
  seed = { stack, devnet, rails };
  policy = await seedPolicy(seed);
  settlementChain = createChainPublicClient(settlement, { pollingIntervalMs: 20 });
  fundingChain = createChainPublicClient(devnet.info.chains.funding, { pollingIntervalMs: 20 });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await shortMerchant?.stop();
  await merchant?.stop();
  await devnet?.stop();
});

afterEach(() => {
  merchant.resetFaults();
  shortMerchant.resetFaults();
});

const worker = () => stack.stack.consumerExecution!;

function execute(intentId: string, bearer = policy.bearer) {
  return postJson(stack.url, `/consumer/intents/${intentId}/execute`, {}, bearer);
}

function resolve(intentId: string, body: unknown, token = stack.adminToken) {
  return postJson(stack.url, `/consumer/intents/${intentId}/resolve`, body, token);
}

async function intent(intentId: string) {
  return (await getConsumerIntent(stack.db.pool, intentId))!;
}

async function settlementBalances(payTo: Address) {
  const token = rails.settlement.token;
  return {
    treasury: await readTokenBalance(settlementChain, token, rails.settlement.treasury),
    payTo: await readTokenBalance(settlementChain, token, payTo),
  };
}

/** AuthorizationUsed events of the settlement treasury in the blocks after `fromBlock`. */
async function treasuryAuthorizationsUsed(fromBlock: bigint) {
  if ((await settlementChain.getBlockNumber()) <= fromBlock) return [];
  return settlementChain.getLogs({
    address: rails.settlement.token,
    event: EVENTS[1],
    args: { authorizer: rails.settlement.treasury },
    fromBlock: fromBlock + 1n,
    toBlock: 'latest',
  });
}

/** The intent's groups in posting order: its FUNDING group (booked by the reservation) first. */
async function groupsOf(intentId: string): Promise<Array<{ kind: string; asset: string }>> {
  const row = await intent(intentId);
  const result = await stack.db.pool.query<{ kind: string; asset: string }>(
    'SELECT kind, asset FROM ledger.groups WHERE intent_ref = $1 OR group_id = $2 ORDER BY seq',
    [intentId, row.funding?.groupId ?? null],
  );
  return result.rows;
}

async function expectTrialBalanceZero(): Promise<void> {
  const result = await stack.db.pool.query<{ asset: string; net: string }>(
    'SELECT asset, net::text AS net FROM ledger.trial_balance',
  );
  expect(result.rows.length).toBeGreaterThanOrEqual(2);
  for (const row of result.rows) expect(row).toEqual({ asset: row.asset, net: '0' });
}

async function expectRefundedOnChain(intentId: string): Promise<void> {
  const row = await intent(intentId);
  expect(row.state).toBe('REFUNDED');
  const refund = row.refund as Record<string, string>;
  expect(refund).toMatchObject({ amount: FUNDING_AMOUNT.toString(), to: row.funding!.payer });
  const receipt = await fundingChain.getTransactionReceipt({ hash: refund.txHash as Hex });
  expect(receipt.status).toBe('success');
  const transfers = receipt.logs.filter(
    (log) => log.address.toLowerCase() === rails.funding.token.toLowerCase(),
  );
  expect(transfers.length).toBeGreaterThan(0);
  expect(
    await readTokenBalance(fundingChain, rails.funding.token, row.funding!.payer as Address),
  ).toBe(FUNDING_AMOUNT);
  const kinds = (await groupsOf(intentId)).map((group) => group.kind);
  expect(kinds.filter((kind) => kind === 'REFUND')).toHaveLength(2);
}

test('happy path: execute → DELIVERY_PENDING, the merchant paid on 8453 from the treasury, SETTLEMENT and the RECOGNITION pair booked', async () => {
  const seeded = await seedFundedIntent(seed, policy, { merchant });
  const payTo = merchant.payTo;
  const before = await settlementBalances(payTo);
  const queued = await execute(seeded.intentId);
  expect(queued.status).toBe(202);
  expect(queued.body.intent).toMatchObject({
    intentId: seeded.intentId,
    state: 'EXECUTION_QUEUED',
  });
  await worker().runOnce();
  const row = await intent(seeded.intentId);
  expect(row.state).toBe('DELIVERY_PENDING');
  const after = await settlementBalances(payTo);
  expect(after.treasury - before.treasury).toBe(-COST);
  expect(after.payTo - before.payTo).toBe(COST);
  expect(row.settlement).toMatchObject({
    capabilityId: expect.stringMatching(/^cap_[0-9a-f]{24}$/),
    authorization: {
      from: rails.settlement.treasury.toLowerCase(),
      to: payTo.toLowerCase(),
      value: COST.toString(),
    },
    txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    blockNumber: expect.stringMatching(/^[0-9]+$/),
    requestLeftAt: expect.any(String),
  });
  expect(row.providerAttested).toMatchObject({
    status: 'ATTESTED',
    fields: { domain: seeded.params.domain, available: true },
  });
  const groups = await groupsOf(seeded.intentId);
  expect(groups.map((group) => group.kind)).toEqual([
    'FUNDING',
    'SETTLEMENT',
    'RECOGNITION',
    'RECOGNITION',
  ]);
  expect(new Set(groups.slice(2).map((group) => group.asset)).size).toBe(2);
  await expectTrialBalanceZero();
  // A repeat answers the intent as it is and changes nothing.
  const repeat = await execute(seeded.intentId);
  expect(repeat.status).toBe(202);
  expect(repeat.body.intent.state).toBe('DELIVERY_PENDING');
});

test('20 concurrent execute calls on one intent pay the merchant exactly once', async () => {
  const seeded = await seedFundedIntent(seed, policy, { merchant });
  const fromBlock = await settlementChain.getBlockNumber();
  const answers = await Promise.all(Array.from({ length: 20 }, () => execute(seeded.intentId)));
  expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(202));
  await Promise.all([worker().runOnce(), worker().runOnce()]);
  expect((await intent(seeded.intentId)).state).toBe('DELIVERY_PENDING');
  expect(await treasuryAuthorizationsUsed(fromBlock)).toHaveLength(1);
  const capabilities = await stack.db.pool.query(
    'SELECT count(*)::int AS n FROM intent.payment_capabilities WHERE intent_id = $1 AND signed_at IS NOT NULL',
    [seeded.intentId],
  );
  expect(capabilities.rows[0].n).toBe(1);
});

test('another policy’s session gets 404; an admin cannot resolve an intent that is not under review', async () => {
  const seeded = await seedFundedIntent(seed, policy, { merchant });
  const other = await seedPolicy(seed);
  const refused = await execute(seeded.intentId, other.bearer);
  expect(refused.status).toBe(404);
  expect(refused.body.code).toBe('CONSUMER_INTENT_NOT_FOUND');
  expect((await execute('ci_000000000000000000000000')).body.code).toBe(
    'CONSUMER_INTENT_NOT_FOUND',
  );
  expect(
    (await postJson(stack.url, `/consumer/intents/${seeded.intentId}/execute`, {})).status,
  ).toBe(401);
  const notUnderReview = await resolve(seeded.intentId, { outcome: 'PAID', evidence: 'x' });
  expect(notUnderReview.status).toBe(409);
  expect(notUnderReview.body.code).toBe('CONSUMER_INTENT_NOT_RESOLVABLE');
  expect(
    (await resolve(seeded.intentId, { outcome: 'PAID', evidence: 'x' }, policy.bearer)).status,
  ).toBe(401);
  expect((await intent(seeded.intentId)).state).toBe('FUNDED');
});

test('the merchant refuses before payment: FAILED_BEFORE_PAYMENT, then refunded on 196', async () => {
  const seeded = await seedFundedIntent(seed, policy, { merchant });
  merchant.setFaults({ refuseBeforePayment: true });
  const fromBlock = await settlementChain.getBlockNumber();
  expect((await execute(seeded.intentId)).status).toBe(202);
  await worker().runOnce();
  expect(await treasuryAuthorizationsUsed(fromBlock)).toHaveLength(0);
  await expectRefundedOnChain(seeded.intentId);
  expect((await intent(seeded.intentId)).stateReason).toMatch(/^MERCHANT_REFUSED_BEFORE_PAYMENT/);
  await expectTrialBalanceZero();
});

test('expired quote and insufficient float fail before payment and are refunded', async () => {
  const expired = await seedFundedIntent(seed, policy, {
    merchant,
    quoteExpiresAt: new Date(Date.now() - 1000),
  });
  await execute(expired.intentId);
  await worker().runOnce();
  await expectRefundedOnChain(expired.intentId);
  expect((await intent(expired.intentId)).stateReason).toMatch(/^QUOTE_EXPIRED/);

  // Move the settlement float away (to an address the test controls), then put it back.
  const short = await seedFundedIntent(seed, policy, { merchant });
  const settlement = devnet.info.chains.settlement;
  const holder = devnet.keys.deployer;
  const float = await readTokenBalance(
    settlementChain,
    rails.settlement.token,
    rails.settlement.treasury,
  );
  const moveFloat = async (from: typeof holder, to: Address, value: bigint) => {
    const wallet = createChainWalletClient(settlement, from.account);
    const hash = await wallet.writeContract({
      address: rails.settlement.token,
      abi: ERC20,
      functionName: 'transfer',
      args: [to, value],
    });
    await settlementChain.waitForTransactionReceipt({ hash });
  };
  await moveFloat(devnet.keys.treasury, holder.address, float - 10_000n);
  try {
    await execute(short.intentId);
    await worker().runOnce();
  } finally {
    await moveFloat(holder, rails.settlement.treasury, float - 10_000n);
  }
  await expectRefundedOnChain(short.intentId);
  expect((await intent(short.intentId)).stateReason).toMatch(/^TREASURY_FLOAT_INSUFFICIENT/);
  await expectTrialBalanceZero();
});

test('dropped after settling: MANUAL_REVIEW with SUSPENSE, one payment on chain, the reconciler finds PAID, resolve PAID books the payment and sends it to delivery verification', async () => {
  const seeded = await seedFundedIntent(seed, policy, { merchant });
  merchant.setFaults({ dropAfterSettle: true });
  const fromBlock = await settlementChain.getBlockNumber();
  await execute(seeded.intentId);
  await worker().runOnce();
  let row = await intent(seeded.intentId);
  expect(row.state).toBe('MANUAL_REVIEW');
  expect(row.stateReason).toMatch(/^PAYMENT_AMBIGUOUS/);
  expect((await groupsOf(seeded.intentId)).map((group) => group.kind)).toEqual([
    'FUNDING',
    'SUSPENSE_MOVE',
  ]);
  expect(await treasuryAuthorizationsUsed(fromBlock)).toHaveLength(1);
  const events = await stack.db.pool.query(
    `SELECT to_state FROM intent.consumer_intent_events WHERE intent_id = $1 ORDER BY event_id`,
    [seeded.intentId],
  );
  expect(events.rows.map((event) => event.to_state)).toContain('MANUAL_REVIEW');
  // Rounds go on; nothing is ever re-sent.
  merchant.resetFaults();
  await worker().runOnce();
  expect(await treasuryAuthorizationsUsed(fromBlock)).toHaveLength(1);
  row = await intent(seeded.intentId);
  expect(row.resolution).toMatchObject({ chainFinding: { status: 'PAID' } });
  const contradicted = await resolve(seeded.intentId, {
    outcome: 'NOT_PAID',
    evidence: 'merchant says no',
  });
  expect(contradicted.status).toBe(409);
  expect(contradicted.body.code).toBe('RESOLUTION_CONTRADICTS_CHAIN');
  const resolved = await resolve(seeded.intentId, {
    outcome: 'PAID',
    evidence: 'AuthorizationUsed on 8453',
  });
  expect(resolved.status).toBe(200);
  // Paid is not delivered: the purchase still needs its delivery checked (consumerExits.test.ts).
  expect(resolved.body.intent).toMatchObject({
    state: 'DELIVERY_PENDING',
    resolution: { outcome: 'PAID', evidence: 'AuthorizationUsed on 8453' },
  });
  expect((await groupsOf(seeded.intentId)).map((group) => group.kind)).toEqual([
    'FUNDING',
    'SUSPENSE_MOVE',
    'SUSPENSE_MOVE',
    'RECOGNITION',
    'RECOGNITION',
  ]);
  await expectTrialBalanceZero();
});

test('a merchant asking less (or more) than the quote at execution is refused before anything is signed: MERCHANT_AMOUNT_CHANGED, refunded', async () => {
  for (const askAtomic of [(COST - 1_000n).toString(), (COST + 1n).toString()]) {
    const seeded = await seedFundedIntent(seed, policy, { merchant });
    merchant.setFaults({ askAtomic });
    const fromBlock = await settlementChain.getBlockNumber();
    const before = await settlementBalances(merchant.payTo);
    expect((await execute(seeded.intentId)).status).toBe(202);
    await worker().runOnce();
    await worker().runOnce();
    await expectRefundedOnChain(seeded.intentId);
    const row = await intent(seeded.intentId);
    expect(row.stateReason).toMatch(
      new RegExp(
        `^MERCHANT_AMOUNT_CHANGED: the merchant asked ${askAtomic} to .* the quote decided ${COST} to`,
      ),
    );
    // Nothing was signed, so nothing could settle: no authorization, no transfer.
    expect(row.settlement).toBeNull();
    expect(await treasuryAuthorizationsUsed(fromBlock)).toHaveLength(0);
    expect(await settlementBalances(merchant.payTo)).toEqual(before);
    expect((await groupsOf(seeded.intentId)).map((group) => group.kind)).toEqual([
      'FUNDING',
      'REFUND',
      'REFUND',
    ]);
  }
  await expectTrialBalanceZero();
});

test('a decided quote cannot be edited: the database refuses a new amount or payee, and the intent pays what was decided', async () => {
  const seeded = await seedFundedIntent(seed, policy, { merchant });
  const raised = {
    ...seeded.quote,
    providerCost: { ...(seeded.quote!.providerCost as object), amount: (COST + 1n).toString() },
  };
  await expect(
    stack.db.pool.query('UPDATE intent.consumer_intents SET quote = $2 WHERE intent_id = $1', [
      seeded.intentId,
      raised,
    ]),
  ).rejects.toThrow(/decided on its quote/);
  const otherPayee = {
    ...seeded.quote,
    merchant: { ...(seeded.quote!.merchant as object), payTo: `0x${'12'.repeat(20)}` },
  };
  await expect(
    stack.db.pool.query('UPDATE intent.consumer_intents SET quote = $2 WHERE intent_id = $1', [
      seeded.intentId,
      otherPayee,
    ]),
  ).rejects.toThrow(/decided on its quote/);
  // The intent goes on with the quote it was decided on.
  expect((await intent(seeded.intentId)).quote).toEqual(seeded.quote);
  await execute(seeded.intentId);
  await worker().runOnce();
  expect((await intent(seeded.intentId)).state).toBe('DELIVERY_PENDING');
  await expectTrialBalanceZero();
});

test('a FUNDED intent never executed is refunded by the worker once its quote expires', async () => {
  const fresh = await seedFundedIntent(seed, policy, { merchant });
  const stale = await seedFundedIntent(seed, policy, {
    merchant,
    quoteExpiresAt: new Date(Date.now() - 1000),
  });
  await worker().runOnce();
  expect((await intent(stale.intentId)).state).toBe('REFUND_PENDING');
  await worker().runOnce();
  await expectRefundedOnChain(stale.intentId);
  expect((await intent(stale.intentId)).stateReason).toMatch(
    /^QUOTE_EXPIRED: funded, never executed/,
  );
  const events = await stack.db.pool.query<{ to_state: string }>(
    'SELECT to_state FROM intent.consumer_intent_events WHERE intent_id = $1 ORDER BY event_id',
    [stale.intentId],
  );
  expect(events.rows.map((event) => event.to_state).slice(-2)).toEqual([
    'REFUND_PENDING',
    'REFUNDED',
  ]);
  // The public receipt says so.
  const receipt = await fetch(`${stack.url}/consumer/receipt/${stale.intentId}`);
  expect(((await receipt.json()) as { state: string }).state).toBe('REFUNDED');
  // A fresh quote waits for its consumer.
  expect((await intent(fresh.intentId)).state).toBe('FUNDED');
  await expectTrialBalanceZero();
});

test('an intent a crash left in POLICY_CHECKING is decided by the worker once it has been still 30 s', async () => {
  const left = await seedPolicyCheckingIntent(seed, policy, { merchant });
  // Fresh: a create request may still be deciding it, so a round leaves it alone.
  await worker().runOnce();
  expect((await intent(left.intentId)).state).toBe('POLICY_CHECKING');
  await stack.db.pool.query(
    `UPDATE intent.consumer_intents SET updated_at = now() - interval '31 seconds' WHERE intent_id = $1`,
    [left.intentId],
  );
  const round = await worker().runOnce();
  expect(round.policyChecked).toBe(1);
  const decided = await intent(left.intentId);
  expect(decided.state).toBe('AWAITING_FUNDING');
  expect(decided.decision).toMatchObject({ decision: 'APPROVED', intentHash: left.intentHash });
  expect(decided.reservationId).toMatch(/^rsv_/);
  // The consumer sees it ready to fund.
  const view = await fetch(`${stack.url}/consumer/intents/${left.intentId}`, {
    headers: { authorization: `Bearer ${policy.bearer}` },
  });
  expect(((await view.json()) as { intent: { state: string } }).intent.state).toBe(
    'AWAITING_FUNDING',
  );
});

test('never settled: the request timed out, the authorization expired unused, NOT_PAID is resolved and refunded', async () => {
  const seeded = await seedFundedIntent(seed, policy, { merchant: shortMerchant });
  // The merchant holds the paid request past the client's timeout and past validBefore.
  shortMerchant.setFaults({ delayMs: 11_000 });
  const fromBlock = await settlementChain.getBlockNumber();
  await execute(seeded.intentId);
  await worker().runOnce();
  const row = await intent(seeded.intentId);
  expect(row.state).toBe('MANUAL_REVIEW');
  const validBefore = BigInt((row.settlement!.authorization as Record<string, string>).validBefore);
  const early = await resolve(seeded.intentId, { outcome: 'NOT_PAID', evidence: 'timed out' });
  expect(early.status).toBe(409);
  expect(early.body.code).toBe('RESOLUTION_CONTRADICTS_CHAIN');
  // Let the merchant's held request end and the chain's clock pass validBefore.
  await new Promise((done) => setTimeout(done, 12_000));
  await createAnvilTestClient(devnet.info.chains.settlement).mine({ blocks: 1 });
  const latest = await settlementChain.getBlock({ blockTag: 'latest' });
  expect(latest.timestamp >= validBefore).toBe(true);
  await worker().runOnce();
  expect((await intent(seeded.intentId)).resolution).toMatchObject({
    chainFinding: { status: 'NOT_PAID' },
  });
  const resolved = await resolve(seeded.intentId, {
    outcome: 'NOT_PAID',
    evidence: 'validBefore passed, nonce unused',
  });
  expect(resolved.status).toBe(200);
  expect(resolved.body.intent.state).toBe('REFUND_PENDING');
  await worker().runOnce();
  await expectRefundedOnChain(seeded.intentId);
  expect(await treasuryAuthorizationsUsed(fromBlock)).toHaveLength(0);
  await expectTrialBalanceZero();
}, 90_000);

test('recovery: a capability redeemed by a crashed run is replaced; a signature recorded by a crashed run is never re-sent', async () => {
  // Crash after redeem: the queued intent holds a redeemed, unsigned capability.
  const redeemed = await seedFundedIntent(seed, policy, { merchant });
  await execute(redeemed.intentId);
  const dead = await mintAndRedeem(stack.db.pool, redeemed.intentId, rails.settlement, new Date());
  expect(dead).not.toBeNull();
  await worker().runOnce();
  expect((await intent(redeemed.intentId)).state).toBe('DELIVERY_PENDING');
  const capabilities = await stack.db.pool.query<{ capability_id: string; signed: boolean }>(
    `SELECT capability_id, signed_at IS NOT NULL AS signed FROM intent.payment_capabilities
      WHERE intent_id = $1 ORDER BY minted_at`,
    [redeemed.intentId],
  );
  expect(capabilities.rows).toEqual([
    { capability_id: dead!.capabilityId, signed: false },
    { capability_id: expect.stringMatching(/^cap_/), signed: true },
  ]);

  // Crash after signing: the authorization is recorded (PROVIDER_PAYMENT_PENDING), never sent.
  const signedOnly = await seedFundedIntent(seed, policy, { merchant });
  await execute(signedOnly.intentId);
  const fromBlock = await settlementChain.getBlockNumber();
  const capability = (await mintAndRedeem(
    stack.db.pool,
    signedOnly.intentId,
    rails.settlement,
    new Date(),
  ))!;
  const now = new Date();
  const signed = await createTreasurySigner(devnet.keys.treasury).signTransferAuthorization(
    capability,
    {
      domain: {
        name: rails.settlement.name,
        version: rails.settlement.version,
        chainId: rails.settlement.chainId,
        verifyingContract: rails.settlement.token,
      },
      types: {
        TransferWithAuthorization: [
          { name: 'from', type: 'address' },
          { name: 'to', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'validAfter', type: 'uint256' },
          { name: 'validBefore', type: 'uint256' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'TransferWithAuthorization',
      message: {
        from: rails.settlement.treasury,
        to: merchant.payTo,
        value: COST,
        validAfter: 0n,
        validBefore: BigInt(Math.floor(now.getTime() / 1000) + 60),
        nonce: `0x${'5a'.repeat(32)}`,
      },
    },
    now,
  );
  await recordSignedAuthorization(stack.db.pool, capability, signed.typedData.message, {
    fromBlock: fromBlock.toString(),
    now,
  });
  await worker().runOnce();
  const parked = await intent(signedOnly.intentId);
  expect(parked.state).toBe('MANUAL_REVIEW');
  expect(parked.stateReason).toMatch(/^PAYMENT_AMBIGUOUS: found after a restart/);
  expect(parked.resolution).toMatchObject({ chainFinding: { status: 'OPEN' } });
  expect(await treasuryAuthorizationsUsed(fromBlock)).toHaveLength(0);
  await expectTrialBalanceZero();
});

test('an OPEN finding that stays open is not rewritten: the intent and its receipt keep their version across rounds', async () => {
  // The parked intent of the recovery test above: its nonce unused, validBefore a minute away.
  const { rows: open } = await stack.db.pool.query<{ intent_id: string }>(
    `SELECT intent_id FROM intent.consumer_intents
      WHERE state = 'MANUAL_REVIEW' AND resolution->'chainFinding'->>'status' = 'OPEN'`,
  );
  expect(open).toHaveLength(1);
  const intentId = open[0]!.intent_id;
  const version = async () =>
    (
      await stack.db.pool.query(
        `SELECT i.updated_at, i.resolution, r.digest, r.written_at
           FROM intent.consumer_intents i JOIN intent.consumer_receipts r USING (intent_id)
          WHERE i.intent_id = $1`,
        [intentId],
      )
    ).rows[0];
  const before = await version();
  expect(before.digest).toMatch(/^0x[0-9a-f]{64}$/);
  for (let round = 0; round < 3; round += 1) {
    const result = await worker().runOnce();
    expect(result.reconciled).toBeGreaterThanOrEqual(1); // the chain was read again…
  }
  expect(await version()).toEqual(before); // …and nothing was written
  expect((await intent(intentId)).resolution).toMatchObject({ chainFinding: { status: 'OPEN' } });
});
