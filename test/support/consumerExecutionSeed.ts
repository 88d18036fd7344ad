// Seeds FUNDED consumer intents for the execution tests, the way the create and fund parts leave
// them, with real pieces only: a policy on the test stack, the merchant's own 402 as the quote, a
// SpendIntent decided APPROVED by the real preflight (with its reservation), the intent moved
// through the lifecycle with the store's compare-and-set, and the funding leg a real USDT0
// transfer from a fresh consumer wallet to the funding treasury on eip155:196, booked as the
// FUNDING group that consumes the reservation.
import { randomBytes } from 'node:crypto';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { Address } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { newConsumerIntentId } from '../../core/canon/ids';
import { policyDocument, wireIntent } from '../../core/test-support/spend-fixtures';
import { validateSpendIntent } from '../../core/validation/intent';
import { formatIsoSeconds } from '../../core/validation/timestamp';
import type { DevnetChains } from '../../devnet/chains';
import type { DomainsMerchant } from '../../devnet/merchants/domains/server';
import { createChainPublicClient, createChainWalletClient } from '../../platform/chain/clients';
import {
  mintToken,
  signTransferWithAuthorization,
  submitTransferWithAuthorization,
} from '../../platform/chain/tokens';
import { consumeReservation } from '../../subgraphs/intent';
import {
  insertConsumerIntent,
  type ConsumerIntentRow,
} from '../../subgraphs/intent/consumer/store';
import {
  transitionConsumerIntent,
  type ConsumerIntentChanges,
} from '../../subgraphs/intent/consumer/transition';
import type { ConsumerRails } from '../../subgraphs/kit';
import { accountId, assetId } from '../../subgraphs/ledger';
import { signIn } from './siwe';
import { postJson, type TestStack } from './stack';

export const PROVIDER = 'spendctl-domains';
export const CAPABILITY = 'domains.check';
export const COST = 50_000n;
export const SPREAD = 250n;
export const FUNDING_AMOUNT = COST + SPREAD;

export interface SeedContext {
  readonly stack: TestStack;
  readonly devnet: DevnetChains;
  readonly rails: ConsumerRails;
}

export interface SeededPolicy {
  readonly policyId: string;
  readonly policyHash: string;
  readonly owner: PrivateKeyAccount;
  /** The policy's consumer session bearer. */
  readonly bearer: string;
}

export async function seedPolicy(seed: SeedContext): Promise<SeededPolicy> {
  const owner = privateKeyToAccount(generatePrivateKey());
  const created = await postJson(
    seed.stack.url,
    '/create_spend_policy',
    {
      policy: policyDocument({
        owner: owner.address.toLowerCase(),
        asset: {
          network: seed.rails.funding.network,
          token: seed.rails.funding.token.toLowerCase(),
          symbol: 'USDT0',
          decimals: 6,
        },
        dailyBudget: '100.00',
        perCallCap: '10.00',
        hardCap: '50.00',
        escalateAbove: '10.00',
        categories: { allow: ['domains'], deny: [] },
        duplicates: { windowMinutes: 0, keys: ['itemHash'] },
        rateLimit: { callsPerHour: 1000 },
      }),
    },
    seed.stack.adminToken,
  );
  if (created.status !== 201 && created.status !== 200)
    throw new Error(`policy: ${JSON.stringify(created.body)}`);
  const { policyId, policyHash } = created.body;
  const bearer = await signIn(seed.stack.url, owner, policyId);
  return { policyId, policyHash, owner, bearer };
}

/** The merchant's own 402 for `url`: its accepts[0] and resource, verbatim. */
async function merchantChallenge(url: string) {
  const response = await fetch(url);
  const header = response.headers.get('payment-required');
  await response.text();
  if (response.status !== 402 || header === null)
    throw new Error(`the merchant answered ${response.status} without a 402 challenge`);
  const required = decodePaymentRequiredHeader(header);
  return { requirements: required.accepts[0]!, resource: required.resource };
}

export interface SeedOptions {
  readonly merchant: DomainsMerchant;
  readonly domain?: string;
  /** When the quote expires; default 5 minutes from now. */
  readonly quoteExpiresAt?: Date;
}

async function quoteFor(seed: SeedContext, options: SeedOptions, now: Date) {
  const url = options.merchant.checkUrl(options.domain ?? `free-${Date.now()}.test`);
  const { requirements, resource } = await merchantChallenge(url);
  const expiresAt = options.quoteExpiresAt ?? new Date(now.getTime() + 300_000);
  return {
    quoteId: `cq_${randomBytes(9).toString('hex')}`,
    quotedAt: now.toISOString(),
    expiresAt: expiresAt.toISOString(),
    capability: CAPABILITY,
    provider: PROVIDER,
    providerCost: {
      network: seed.rails.settlement.network,
      asset: seed.rails.settlement.token.toLowerCase(),
      amount: COST.toString(),
    },
    feeBps: 0,
    fee: '0',
    spreadBps: 50,
    spread: SPREAD.toString(),
    funding: {
      network: seed.rails.funding.network,
      asset: seed.rails.funding.token.toLowerCase(),
      amount: FUNDING_AMOUNT.toString(),
      payTo: seed.rails.funding.treasury.toLowerCase(),
    },
    merchant: {
      url,
      method: 'GET',
      payTo: requirements.payTo.toLowerCase(),
      maxTimeoutSeconds: requirements.maxTimeoutSeconds,
      requirements,
      resource,
    },
  };
}

async function move(
  seed: SeedContext,
  row: ConsumerIntentRow,
  to: ConsumerIntentRow['state'],
  changes: ConsumerIntentChanges = {},
): Promise<ConsumerIntentRow> {
  const moved = await transitionConsumerIntent(seed.stack.db.pool, row.intentId, row.state, to, {
    now: new Date(),
    changes,
  });
  if (moved === null) throw new Error(`could not move ${row.intentId} to ${to}`);
  return moved;
}

/** A real funding transfer: a fresh consumer wallet gets USDT0 and pays the funding treasury. */
export async function fundOnChain(
  seed: SeedContext,
  amount: bigint,
): Promise<{ payer: Address; txHash: string }> {
  const rail = seed.devnet.info.chains.funding;
  const endpoint = { chainId: rail.chainId, rpcUrl: rail.rpcUrl };
  const publicClient = createChainPublicClient(endpoint, { pollingIntervalMs: 20 });
  const consumer = privateKeyToAccount(generatePrivateKey());
  await mintToken({
    publicClient,
    minter: createChainWalletClient(endpoint, seed.devnet.keys.deployer.account),
    token: rail.token.address,
    to: consumer.address,
    amountAtomic: amount,
  });
  const authorization = await signTransferWithAuthorization({
    publicClient,
    token: rail.token.address,
    signer: consumer,
    to: seed.rails.funding.treasury,
    valueAtomic: amount,
    validBeforeUnixS: BigInt(Math.floor(Date.now() / 1000) + 600),
  });
  // Submitted by the deployer, not the relayer: the service's relayer key sends from the service
  // alone, which counts its nonces in the process (platform/chain/relayerNonces.ts).
  const mined = await submitTransferWithAuthorization({
    publicClient,
    relayer: createChainWalletClient(endpoint, seed.devnet.keys.deployer.account),
    authorization,
  });
  return { payer: consumer.address.toLowerCase() as Address, txHash: mined.txHash };
}

/** A FUNDED intent of `policy` whose quote is `options.merchant`'s own 402. */
/** The quote and the SpendIntent of a seeded purchase of a fresh name. */
async function quotedPurchase(
  seed: SeedContext,
  policy: SeededPolicy,
  options: SeedOptions,
  now: Date,
) {
  const quote = await quoteFor(seed, options, now);
  const domain = new URL(quote.merchant.url).searchParams.get('domain')!;
  const spendIntent = wireIntent(policy, {
    agentId: `consumer-${policy.owner.address.toLowerCase()}`,
    category: 'domains',
    provider: PROVIDER,
    capability: CAPABILITY,
    item: { capability: CAPABILITY, params: { domain }, quoteId: quote.quoteId },
    recipient: quote.merchant.payTo,
    network: seed.rails.funding.network,
    token: seed.rails.funding.token.toLowerCase(),
    amount: FUNDING_AMOUNT.toString(),
    deadline: formatIsoSeconds(Math.floor(now.getTime() / 1000) + 3600),
    nonce: String(now.getTime() * 1000 + Math.floor(Math.random() * 1000)),
    endpoint: quote.merchant.url,
  });
  return { quote, domain, spendIntent };
}

/** CREATED → QUOTED with the quote stored. */
async function insertQuoted(
  seed: SeedContext,
  policy: SeededPolicy,
  quoted: Awaited<ReturnType<typeof quotedPurchase>>,
  now: Date,
): Promise<ConsumerIntentRow> {
  const { row: created } = await insertConsumerIntent(seed.stack.db.pool, {
    intentId: newConsumerIntentId(),
    policyId: policy.policyId,
    wallet: policy.owner.address,
    capability: CAPABILITY,
    provider: PROVIDER,
    category: 'domains',
    params: { domain: quoted.domain },
    idempotencyKey: null,
    now,
  });
  return move(seed, created, 'QUOTED', {
    quote: quoted.quote,
    quoteExpiresAt: new Date(quoted.quote.expiresAt),
    fundingAmount: FUNDING_AMOUNT,
  });
}

/**
 * An intent left in POLICY_CHECKING with its SpendIntent stored and not decided, as a crash
 * between storing and deciding leaves it (create.ts's storeQuoted, then nothing).
 */
export async function seedPolicyCheckingIntent(
  seed: SeedContext,
  policy: SeededPolicy,
  options: SeedOptions,
): Promise<ConsumerIntentRow> {
  const now = new Date();
  const quoted = await quotedPurchase(seed, policy, options, now);
  const validated = validateSpendIntent(quoted.spendIntent, now.getTime());
  if (!validated.ok) throw new Error('the seeded SpendIntent does not validate');
  const row = await insertQuoted(seed, policy, quoted, now);
  return move(seed, row, 'POLICY_CHECKING', {
    spendIntent: quoted.spendIntent,
    intentHash: validated.intent.intentHash,
  });
}

export async function seedFundedIntent(
  seed: SeedContext,
  policy: SeededPolicy,
  options: SeedOptions,
): Promise<ConsumerIntentRow> {
  const now = new Date();
  const quoted = await quotedPurchase(seed, policy, options, now);
  const decided = await postJson(seed.stack.url, '/preflight_payment', {
    policyId: policy.policyId,
    intent: quoted.spendIntent,
  });
  if (decided.body.decision !== 'APPROVED')
    throw new Error(`preflight: ${JSON.stringify(decided.body)}`);
  let row = await insertQuoted(seed, policy, quoted, now);
  row = await move(seed, row, 'POLICY_CHECKING');
  row = await move(seed, row, 'APPROVED', {
    spendIntent: quoted.spendIntent,
    intentHash: decided.body.intentHash,
    decision: decided.body,
    reservationId: decided.body.reservation.reservationId,
  });
  row = await move(seed, row, 'AWAITING_FUNDING');
  return fundIntent(seed, row);
}

/** The funding leg: a real transfer, the FUNDING group consuming the reservation, → FUNDED. */
async function fundIntent(seed: SeedContext, row: ConsumerIntentRow): Promise<ConsumerIntentRow> {
  const { payer, txHash } = await fundOnChain(seed, FUNDING_AMOUNT);
  const asset = assetId(seed.rails.funding.network, seed.rails.funding.token);
  const consumed = await consumeReservation(
    seed.stack.db.pool,
    row.reservationId!,
    [
      {
        kind: 'FUNDING',
        asset,
        entries: [
          { account: accountId('TREASURY', asset, 'float'), amountAtomic: FUNDING_AMOUNT },
          {
            account: accountId('USER_OBLIGATION', asset, row.policyId),
            amountAtomic: -FUNDING_AMOUNT,
          },
        ],
        idempotencyKey: `funding:${row.intentId}`,
      },
    ],
    () => new Date(),
  );
  return move(seed, row, 'FUNDED', {
    funding: {
      paymentId: null,
      payer,
      payTo: seed.rails.funding.treasury.toLowerCase(),
      network: seed.rails.funding.network,
      asset: seed.rails.funding.token.toLowerCase(),
      amount: FUNDING_AMOUNT.toString(),
      txHash,
      groupId: consumed.groupIds[0],
      fundedAt: new Date().toISOString(),
    },
  });
}
