// Consumer intents waiting for funding, for the fund route's end-to-end tests, made the way the
// create route leaves them (shapes.md) without its merchant quote: a policy in the funding rail's
// USD₮0 that allows the `domains` category, its consumer session (SIWE sign-in), a preflight of
// the SpendIntent whose amount is the funding amount (APPROVED, with a reservation), and the
// intent inserted and walked CREATED → QUOTED → POLICY_CHECKING → APPROVED → AWAITING_FUNDING
// through the store's compare-and-set with the quote, decision and reservation columns.
import { randomBytes } from 'node:crypto';
import type { LocalAccount } from 'viem';
import { newConsumerIntentId } from '../../core/canon/ids';
import { policyDocument, wireIntent } from '../../core/test-support/spend-fixtures';
import { formatIsoSeconds } from '../../core/validation/timestamp';
import type { ConsumerRails } from '../../subgraphs/kit';
import {
  type ConsumerIntentRow,
  insertConsumerIntent,
} from '../../subgraphs/intent/consumer/store';
import { transitionConsumerIntent } from '../../subgraphs/intent/consumer/transition';
import { preflightPaymentHere } from '../../subgraphs/intent/preflight/dispatch';
import { deriveSealingKey } from '../../platform/sealing';
import { signIn } from './siwe';
import type { TestStack } from './stack';

/** The devnet merchant's price of domains.check, and the funding amount with the 50 bp spread (CEIL). */
export const PROVIDER_COST = 50_000n;
export const FUNDING_AMOUNT = 50_250n;
const MERCHANT_PAY_TO = '0x2a2b2c2d2e2f2a2b2c2d2e2f2a2b2c2d2e2f2a2b';

export interface SeededPolicy {
  readonly policyId: string;
  readonly policyHash: string;
  /** A consumer session bearer of this policy, for `owner`. */
  readonly session: string;
}

/** A policy in the funding rail's token allowing `domains`, and its consumer session. */
export async function seedConsumerPolicy(
  stack: TestStack,
  rails: ConsumerRails,
  owner: LocalAccount,
): Promise<SeededPolicy> {
  const token = rails.funding.token.toLowerCase();
  const response = await fetch(`${stack.url}/create_spend_policy`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.adminToken}` },
    body: JSON.stringify({
      policy: policyDocument({
        owner: owner.address,
        asset: { network: rails.funding.network, token, symbol: 'USDT0', decimals: 6 },
        categories: { allow: ['domains'], deny: [] },
      }),
    }),
  });
  const body = (await response.json()) as { policyId: string; policyHash: string };
  if (response.status !== 201) throw new Error(`policy refused: ${JSON.stringify(body)}`);
  const session = await signIn(stack.url, owner, body.policyId);
  return { policyId: body.policyId, policyHash: body.policyHash, session };
}

export interface SeedOptions {
  /** When the quote expires; default five minutes from now. */
  readonly quoteExpiresAt?: Date;
  readonly fundingAmount?: bigint;
}

function quoteOf(rails: ConsumerRails, amount: bigint, quotedAt: Date, expiresAt: Date) {
  return {
    quoteId: `cq_${randomBytes(12).toString('hex')}`,
    quotedAt: quotedAt.toISOString(),
    expiresAt: expiresAt.toISOString(),
    capability: 'domains.check',
    provider: 'spendctl-domains',
    providerCost: {
      network: rails.settlement.network,
      asset: rails.settlement.token.toLowerCase(),
      amount: PROVIDER_COST.toString(),
    },
    feeBps: 0,
    fee: '0',
    spreadBps: 50,
    spread: (amount - PROVIDER_COST).toString(),
    funding: {
      network: rails.funding.network,
      asset: rails.funding.token.toLowerCase(),
      amount: amount.toString(),
      payTo: rails.funding.treasury.toLowerCase(),
    },
  };
}

/** An intent AWAITING_FUNDING on `policy`, with an APPROVED decision holding a reservation for its funding amount. */
export async function seedAwaitingFunding(
  stack: TestStack,
  rails: ConsumerRails,
  policy: SeededPolicy & { wallet: string },
  options: SeedOptions = {},
): Promise<ConsumerIntentRow> {
  const db = stack.db.pool;
  const now = new Date();
  const amount = options.fundingAmount ?? FUNDING_AMOUNT;
  const expiresAt = options.quoteExpiresAt ?? new Date(now.getTime() + 5 * 60_000);
  const domain = `${randomBytes(6).toString('hex')}.test`;
  const spendIntent = wireIntent(policy, {
    agentId: `consumer:${policy.wallet.toLowerCase()}`,
    category: 'domains',
    provider: 'spendctl-domains',
    capability: 'domains.check',
    item: { description: 'domains.check', params: { domain } },
    recipient: MERCHANT_PAY_TO,
    network: rails.funding.network,
    token: rails.funding.token.toLowerCase(),
    amount: amount.toString(),
    deadline: formatIsoSeconds(Math.floor(now.getTime() / 1000) + 3600),
    nonce: BigInt(`0x${randomBytes(8).toString('hex')}`).toString(),
    endpoint: `https://domains.example/check?domain=${domain}`,
  });
  const ctx = { db, now: () => new Date(), sealingKey: deriveSealingKey(randomBytes(32)) };
  const decided = await preflightPaymentHere(ctx, policy.policyId, spendIntent, null).catch(
    (error: { details?: unknown }) => {
      throw new Error(`seed preflight refused: ${JSON.stringify(error.details ?? error)}`);
    },
  );
  const decision = decided as {
    decision: string;
    intentHash: string;
    reservation: { reservationId: string } | null;
  };
  if (decision.decision !== 'APPROVED' || decision.reservation === null)
    throw new Error(`seed preflight not approved: ${JSON.stringify(decision)}`);

  const { row } = await insertConsumerIntent(db, {
    intentId: newConsumerIntentId(),
    policyId: policy.policyId,
    wallet: policy.wallet,
    capability: 'domains.check',
    provider: 'spendctl-domains',
    category: 'domains',
    params: { domain },
    idempotencyKey: null,
    now,
  });
  const walk = async (
    from: ConsumerIntentRow['state'],
    to: ConsumerIntentRow['state'],
    changes = {},
  ) => {
    const moved = await transitionConsumerIntent(db, row.intentId, from, to, { now, changes });
    if (!moved) throw new Error(`seed could not move ${row.intentId} ${from} → ${to}`);
    return moved;
  };
  await walk('CREATED', 'QUOTED', {
    quote: quoteOf(rails, amount, now, expiresAt),
    quoteExpiresAt: expiresAt,
    fundingAmount: amount,
  });
  await walk('QUOTED', 'POLICY_CHECKING');
  await walk('POLICY_CHECKING', 'APPROVED', {
    spendIntent,
    intentHash: decision.intentHash,
    decision,
    reservationId: decision.reservation.reservationId,
  });
  return walk('APPROVED', 'AWAITING_FUNDING');
}
