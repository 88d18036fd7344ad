// The world the authorization matrix runs in: one production-like stack (x402 on the devnet,
// PolicyRegistry configured), owners A and B with a policy each, the six actors' credentials, and
// policy A's records every operation can name: a paid APPROVED preflight (intent, decision,
// receipt), two escalations (one to read, one to decide), a settled ledger group, a confirmed
// on-chain registration and an owner channel binding. Fixtures are made the way a client makes them
// (paid calls, sign-in, GraphQL); only the ledger group is posted through the settlement module.
import { randomBytes } from 'node:crypto';
import { type Address, type Hex, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { TOKEN, freshWireIntent, policyDocument } from '../../core/test-support/spend-fixtures';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import { devnetConsumerRails } from '../../devnet/consumerRails';
import type { ConsumerRails } from '../../subgraphs/kit';
import type { DomainsMerchant } from '../../devnet/merchants/domains/server';
import { startDevnetDomainsMerchant } from '../../devnet/merchants/domains/start';
import {
  createAnvilTestClient,
  createChainPublicClient,
  createChainWalletClient,
} from '../../platform/chain/clients';
import { mintToken } from '../../platform/chain/tokens';
import { consumeReservation } from '../../subgraphs/intent';
import { accountId, assetId } from '../../subgraphs/ledger';
import { registerAsset } from '../../subgraphs/ledger';
import { officialFetch } from '../support/officialClient';
import { signIn } from '../support/siwe';
import { graphql, postJson, startTestStack, type TestStack } from '../support/stack';
import type { ActorName } from './authorization-matrix';
import { attackStackOptions } from './world';

const POLLING = { pollingIntervalMs: 20 };

/** The provider the score rows ask about (the devnet domains merchant). */
export const TRUST_VENDOR = 'spendctl-domains';

export interface MatrixPolicy {
  readonly policyId: string;
  readonly policyHash: string;
  readonly name: string;
  readonly owner: PrivateKeyAccount;
  readonly document: Record<string, unknown>;
}

export interface ConsumerIntentRef {
  readonly intentId: string;
  readonly intentHash: string;
}

export interface MatrixWorld {
  readonly stack: TestStack;
  readonly devnet: DevnetChains;
  readonly a: MatrixPolicy;
  readonly b: MatrixPolicy;
  /** The bearer each actor sends (null: none). */
  readonly tokens: Readonly<Record<ActorName, string | null>>;
  readonly approved: {
    readonly intentHash: string;
    readonly receiptId: string;
    readonly decisionId: string;
  };
  /** Open escalations of A: one only read, one the owner decides; B's opened after A's. */
  readonly pollRefA: string;
  readonly decidablePollRefA: string;
  readonly pollRefB: string;
  /** The intent of A's escalation that is only read (its decision is ESCALATED). */
  readonly escalatedIntentHashA: string;
  readonly groupIdA: string;
  readonly obligationAccountA: string;
  readonly registrationTxA: string;
  readonly bindingA: { readonly bindingId: string; readonly address: string };
  /** Owner A's webhook endpoints (for policy A) and a delivery queued by escalatedA. */
  readonly webhooksA: {
    readonly endpointId: string;
    readonly disableEndpointId: string;
    readonly deliveryId: string;
  };
  /** A's consumer intents (created by A's consumer session, escalated): one to read, one per approve operation. */
  readonly consumerIntentsA: {
    readonly read: ConsumerIntentRef;
    readonly approveRest: ConsumerIntentRef;
    readonly approveGraphQL: ConsumerIntentRef;
  };
  /** chain|token of the two registered assets (the policy asset and the payment asset). */
  readonly assets: readonly [string, string];
  /** Strings only policy A's data holds: one in an answer that was not in the request is A's data. */
  readonly markersOfA: readonly string[];
  /** Intents against A that pass validation, fresh each call (never a duplicate). */
  freshIntentA(): Record<string, unknown>;
  stop(): Promise<void>;
}

/** POSTs paid through the official x402 client, from a payer funded on the devnet. */
async function payingPost(
  devnet: DevnetChains,
  stack: TestStack,
): Promise<(path: string, body: unknown) => Promise<any>> {
  const funding = devnet.info.chains.funding;
  const payer = privateKeyToAccount(generatePrivateKey());
  const publicClient = createChainPublicClient(funding, POLLING);
  const minter = createChainWalletClient(funding, devnet.keys.deployer.account, POLLING);
  await mintToken({
    publicClient,
    minter,
    token: funding.token.address,
    to: payer.address,
    amountAtomic: 10_000_000n,
  });
  const paidFetch = officialFetch(payer, { network: 'eip155:196', asset: funding.token.address });
  return async (path, body) => {
    const response = await paidFetch(`${stack.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (response.status !== 200)
      throw new Error(`paid ${path} answered ${response.status}: ${await response.text()}`);
    return response.json();
  };
}

function expectDecision(answer: any, decision: string): any {
  if (answer.decision !== decision)
    throw new Error(
      `fixture preflight decided ${answer.decision}, not ${decision}: ${JSON.stringify(answer)}`,
    );
  return answer;
}

async function createPolicy(
  stack: TestStack,
  owner: PrivateKeyAccount,
  label: string,
): Promise<MatrixPolicy> {
  const name = `matrix ${label} ${randomBytes(6).toString('hex')}`;
  // A domains purchase (0.05025 funded) escalates; the fixtures' 0.05 intents still approve.
  const document = policyDocument({
    owner: owner.address.toLowerCase(),
    name,
    escalateAbove: '0.05',
    categories: { allow: ['market-data', 'security', 'research', 'domains'], deny: [] },
  });
  const created = await postJson(
    stack.url,
    '/create_spend_policy',
    { policy: document },
    stack.adminToken,
  );
  if (created.status !== 201)
    throw new Error(`fixture policy refused: ${JSON.stringify(created.body)}`);
  return {
    policyId: created.body.policyId,
    policyHash: created.body.policyHash,
    name,
    owner,
    document,
  };
}

async function gql(
  stack: TestStack,
  query: string,
  variables: Record<string, unknown>,
  token: string,
): Promise<any> {
  const { body } = await graphql(stack.url, query, variables, token);
  if (body.errors) throw new Error(`fixture ${query.slice(0, 40)}: ${JSON.stringify(body.errors)}`);
  return body.data;
}

/** Sends A's PolicyRegistry registration from owner A's wallet; the mined transaction's hash. */
async function registerOnChain(
  world: { stack: TestStack; devnet: DevnetChains; a: MatrixPolicy },
  ownerToken: string,
): Promise<string> {
  const funding = world.devnet.info.chains.funding;
  await createAnvilTestClient(funding).setBalance({
    address: world.a.owner.address,
    value: parseEther('1'),
  });
  const request = (
    await gql(
      world.stack,
      'mutation ($id: ID!) { requestPolicyRegistration(policyId: $id) { to data value } }',
      { id: world.a.policyId },
      ownerToken,
    )
  ).requestPolicyRegistration;
  const wallet = createChainWalletClient(funding, world.a.owner, POLLING);
  const txHash = await wallet.sendTransaction({
    to: request.to as Address,
    data: request.data as Hex,
    value: BigInt(request.value),
  });
  await createChainPublicClient(funding, POLLING).waitForTransactionReceipt({ hash: txHash });
  return txHash;
}

/** Settles A's approved reservation with a FUNDING posting: A's money in the ledger. */
async function settleApproved(
  stack: TestStack,
  policyId: string,
  reservationId: string,
): Promise<{ groupId: string; account: string }> {
  const asset = assetId('eip155:196', TOKEN);
  const account = accountId('USER_OBLIGATION', asset, policyId);
  const entries = [
    { account: accountId('TREASURY', asset, 'float'), amountAtomic: 50_000n },
    { account, amountAtomic: -50_000n },
  ];
  const state = await consumeReservation(
    stack.db.pool,
    reservationId,
    [{ kind: 'FUNDING', asset, entries, idempotencyKey: `matrix:${reservationId}` }],
    () => new Date(),
  );
  return { groupId: state.groupIds[0], account };
}

/**
 * A scoreable history (five verified purchases) for the provider and A's buyer the score rows ask
 * about, written as the counters migration 0020 keeps them: this world buys nothing (trustScores
 * e2e drives real purchases), and without history the score routes refuse before any 402.
 */
async function seedTrustHistory(stack: TestStack, a: MatrixPolicy): Promise<void> {
  const agentId = `consumer:${a.owner.address.toLowerCase()}`;
  await stack.db.pool.query(
    `INSERT INTO intent.trust_vendor_outcomes (provider, verified, first_seen_at) VALUES ($1, 5, now())`,
    [TRUST_VENDOR],
  );
  await stack.db.pool.query(
    `INSERT INTO intent.trust_buyer_outcomes (policy_id, agent_id, verified, first_seen_at)
     VALUES ($1::numeric, $2, 5, now())`,
    [a.policyId, agentId],
  );
}

/** An escalated consumer intent of the session's policy, created through the REST route. */
async function escalatedConsumerIntent(
  stack: TestStack,
  session: string,
  domain: string,
): Promise<ConsumerIntentRef> {
  const created = await postJson(
    stack.url,
    '/consumer/intents',
    { capability: 'domains.check', params: { domain } },
    session,
  );
  if (created.status !== 201 || created.body.intent.state !== 'AWAITING_APPROVAL')
    throw new Error(`fixture consumer intent: ${created.status} ${JSON.stringify(created.body)}`);
  return { intentId: created.body.intent.intentId, intentHash: created.body.intent.intentHash };
}

/**
 * The devnet rails, with the funding asset named as the world's policies keep theirs (the fixture
 * token on eip155:196): purchases are weighed in the asset they are paid in, and this world only
 * creates and reads intents (nothing is funded here), so the policies and the rails must agree.
 */
function matrixRails(devnet: DevnetChains, merchantUrl: string): ConsumerRails {
  const rails = devnetConsumerRails(devnet.info, { 'spendctl-domains': merchantUrl });
  return { ...rails, funding: { ...rails.funding, token: TOKEN } };
}

export async function startMatrixWorld(): Promise<MatrixWorld> {
  const devnet = await startDevnetChains({ dataDir: null });
  const funding = devnet.info.chains.funding;
  let merchant: DomainsMerchant;
  try {
    merchant = await startDevnetDomainsMerchant({
      settlement: devnet.info.chains.settlement,
      dataDir: null,
    });
  } catch (error) {
    await devnet.stop();
    throw error;
  }
  const stack = await startTestStack({
    ...attackStackOptions(devnet),
    x402: { devnet },
    consumer: { rails: matrixRails(devnet, merchant.url) },
  });
  try {
    const policyAsset = await registerAsset(stack.db.pool, {
      chain: 'eip155:196',
      token: TOKEN,
      symbol: 'USDT0',
      decimals: 6,
    });
    const a = await createPolicy(stack, privateKeyToAccount(generatePrivateKey()), 'A');
    const b = await createPolicy(stack, privateKeyToAccount(generatePrivateKey()), 'B');
    const tokens: Record<ActorName, string | null> = {
      anonymous: null,
      consumerA: await signIn(stack.url, a.owner, a.policyId),
      consumerB: await signIn(stack.url, b.owner, b.policyId),
      ownerA: await signIn(stack.url, a.owner),
      ownerB: await signIn(stack.url, b.owner),
      admin: stack.adminToken,
    };
    const paid = await payingPost(devnet, stack);
    const freshIntentA = () => freshWireIntent(a, Date.now());
    const approved = expectDecision(
      await paid('/preflight_payment', { policyId: a.policyId, intent: freshIntentA() }),
      'APPROVED',
    );
    const escalate = async (policy: MatrixPolicy) =>
      expectDecision(
        await paid('/preflight_payment', {
          policyId: policy.policyId,
          intent: freshWireIntent(policy, Date.now(), { amount: '1500000' }),
        }),
        'ESCALATED_THRESHOLD',
      );
    const endpoint = async () =>
      (
        await gql(
          stack,
          'mutation ($p: ID!) { createWebhookEndpoint(input: {url: "http://127.0.0.1:9/hook", events: ["escalation.created"], policyIds: [$p]}) { endpoint { id } } }',
          { p: a.policyId },
          tokens.ownerA!,
        )
      ).createWebhookEndpoint.endpoint.id as string;
    const webhookEndpointA = await endpoint();
    const disableEndpointId = await endpoint();
    const escalatedA = await escalate(a);
    const webhookDeliveries = await gql(
      stack,
      'query ($e: ID!) { webhookDeliveries(endpointId: $e) { nodes { id } } }',
      { e: webhookEndpointA },
      tokens.ownerA!,
    );
    const decidableA = await escalate(a);
    const escalatedB = await escalate(b);
    const decisions = await gql(
      stack,
      'query ($p: ID!) { spendDecisions(policyId: $p, decision: "APPROVED") { nodes { id intentHash } } }',
      { p: a.policyId },
      stack.adminToken,
    );
    const decisionId = decisions.spendDecisions.nodes.find(
      (node: { intentHash: string }) => node.intentHash === approved.intentHash,
    ).id;
    const ledger = await settleApproved(stack, a.policyId, approved.reservation.reservationId);
    const registrationTxA = await registerOnChain({ stack, devnet, a }, tokens.ownerA!);
    const bindingAddress = `owner-a-${randomBytes(4).toString('hex')}@example.com`;
    const link = await gql(
      stack,
      'mutation ($a: String) { startChannelLink(kind: EMAIL, address: $a) { binding { bindingId } } }',
      { a: bindingAddress },
      tokens.ownerA!,
    );
    await seedTrustHistory(stack, a);
    const paymentAsset = assetId(`eip155:${funding.chainId}`, funding.token.address);
    const suffix = randomBytes(4).toString('hex');
    const consumerIntentsA = {
      read: await escalatedConsumerIntent(stack, tokens.consumerA!, `read-${suffix}.test`),
      approveRest: await escalatedConsumerIntent(stack, tokens.consumerA!, `rest-${suffix}.test`),
      approveGraphQL: await escalatedConsumerIntent(stack, tokens.consumerA!, `gql-${suffix}.test`),
    };
    return {
      stack,
      devnet,
      a,
      b,
      tokens,
      approved: { intentHash: approved.intentHash, receiptId: approved.receiptId, decisionId },
      pollRefA: escalatedA.escalation.pollRef,
      decidablePollRefA: decidableA.escalation.pollRef,
      pollRefB: escalatedB.escalation.pollRef,
      escalatedIntentHashA: escalatedA.intentHash,
      groupIdA: ledger.groupId,
      obligationAccountA: ledger.account,
      registrationTxA,
      bindingA: { bindingId: link.startChannelLink.binding.bindingId, address: bindingAddress },
      webhooksA: {
        endpointId: webhookEndpointA,
        disableEndpointId,
        deliveryId: webhookDeliveries.webhookDeliveries.nodes[0].id,
      },
      consumerIntentsA,
      assets: [policyAsset, paymentAsset],
      markersOfA: [
        a.policyId,
        a.policyHash,
        a.name,
        a.owner.address.toLowerCase(),
        approved.intentHash,
        escalatedA.intentHash,
        decidableA.intentHash,
        escalatedA.escalation.pollRef,
        decidableA.escalation.pollRef,
        ledger.groupId,
        registrationTxA,
        bindingAddress,
        ...Object.values(consumerIntentsA).flatMap((ref) => [ref.intentId, ref.intentHash]),
      ],
      freshIntentA,
      async stop() {
        await stack.stop();
        await merchant.stop();
        await devnet.stop();
      },
    };
  } catch (error) {
    await stack.stop();
    await merchant.stop();
    await devnet.stop();
    throw error;
  }
}
