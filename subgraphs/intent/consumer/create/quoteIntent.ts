// From the merchant's challenge to what the engine decides (docs/consumer.md "Creating, listing and
// approving"): the quote (provider cost in the settlement asset, fee and spread rounded up, the
// funding amount in the funding asset, the merchant's terms verbatim) and the SpendIntent the
// service builds for the consumer's policy. Pure: ids and the clock come in as arguments.
import { quoteCrossRailFunding, quoteExpiresAt } from '../../../../core/consumer/quote';
import type { JsonObject, SpendIntentWire } from '../../../../core/validation/intent';
import { formatIsoSeconds } from '../../../../core/validation/timestamp';
import type { ConsumerRails } from '../../../kit';
import type { MerchantChallenge } from './merchantQuote';

export interface QuoteInput {
  readonly quoteId: string;
  /** Whole seconds, so the SpendIntent's deadline (ISO seconds) is the quote's expiry exactly. */
  readonly quotedAt: Date;
  readonly capability: string;
  readonly provider: string;
  readonly feeBps: number;
  readonly rails: ConsumerRails;
  /** The full paid URL the challenge came from. */
  readonly url: string;
  readonly method: 'GET';
  readonly challenge: MerchantChallenge;
}

export interface ConsumerQuote {
  readonly json: Record<string, unknown>;
  readonly expiresAt: Date;
  readonly fundingAtomic: bigint;
}

export function buildQuote(input: QuoteInput): ConsumerQuote {
  const { rails, challenge } = input;
  const amounts = quoteCrossRailFunding({
    settlementCostAtomic: challenge.amountAtomic,
    settlementDecimals: rails.settlement.decimals,
    fundingDecimals: rails.funding.decimals,
    feeBps: BigInt(input.feeBps),
    spreadBps: rails.spreadBps,
  });
  const expiresAt = quoteExpiresAt(input.quotedAt);
  const json = {
    quoteId: input.quoteId,
    quotedAt: input.quotedAt.toISOString(),
    expiresAt: expiresAt.toISOString(),
    capability: input.capability,
    provider: input.provider,
    providerCost: {
      network: rails.settlement.network,
      asset: rails.settlement.token.toLowerCase(),
      amount: amounts.settlementCostAtomic.toString(),
    },
    feeBps: input.feeBps,
    fee: amounts.feeAtomic.toString(),
    spreadBps: Number(rails.spreadBps),
    spread: amounts.spreadAtomic.toString(),
    funding: {
      network: rails.funding.network,
      asset: rails.funding.token.toLowerCase(),
      amount: amounts.fundingAtomic.toString(),
      payTo: rails.funding.treasury.toLowerCase(),
    },
    merchant: {
      url: input.url,
      method: input.method,
      payTo: challenge.payTo,
      maxTimeoutSeconds: challenge.maxTimeoutSeconds,
      requirements: challenge.requirements,
      resource: challenge.resource,
    },
  };
  return { json, expiresAt, fundingAtomic: amounts.fundingAtomic };
}

/** The policy as the SpendIntent names it: its id, current hash and asset. */
export interface IntentPolicy {
  readonly policyId: string;
  readonly policyHash: string;
  readonly asset: { readonly network: string; readonly token: string };
}

export interface SpendIntentInput {
  readonly intentId: string;
  readonly policy: IntentPolicy;
  /** The consumer session's wallet. */
  readonly wallet: string;
  readonly category: string;
  readonly provider: string;
  readonly capability: string;
  readonly params: Record<string, unknown>;
  /** A few words naming what is bought (merchantRoutes.ts summary). */
  readonly summary: string;
  /** The merchant's payTo (the quote's merchant.payTo). */
  readonly recipient: string;
  readonly fundingAtomic: bigint;
  /** The asset the consumer pays in: the funding rail's token (rails.funding). */
  readonly fundingAsset: { readonly network: string; readonly token: string };
  readonly quoteExpiresAt: Date;
  /** The merchant URL (the quote's merchant.url). */
  readonly endpoint: string;
}

/** A nonce of the intent's own: its 24 hex digits read as a number (unique per intent). */
export function nonceOfIntentId(intentId: string): bigint {
  const match = /^ci_([0-9a-f]{24})$/.exec(intentId);
  if (match === null) throw new RangeError(`not a consumer intent id: ${intentId}`);
  return BigInt(`0x${match[1]}`);
}

/**
 * The SpendIntent of a consumer purchase: the amount the engine weighs is what the consumer pays
 * (the funding amount), in the asset it is paid in (the funding rail's token), towards the
 * merchant's payTo, until the quote's expiry. Naming the funding asset rather than copying the
 * policy's makes the engine's rule 3 (asset.allowed) refuse a policy kept in any other asset
 * (BLOCKED_ASSET), so an amount is never weighed against limits in another unit.
 */
export function buildSpendIntent(input: SpendIntentInput): SpendIntentWire {
  return {
    policyId: input.policy.policyId,
    policyHash: input.policy.policyHash,
    agentId: `consumer:${input.wallet.toLowerCase()}`,
    category: input.category,
    provider: input.provider,
    capability: input.capability,
    item: {
      description: `${input.capability} ${input.summary}`,
      params: input.params as JsonObject,
    },
    recipient: input.recipient.toLowerCase(),
    network: input.fundingAsset.network,
    token: input.fundingAsset.token.toLowerCase(),
    amount: input.fundingAtomic.toString(),
    deadline: formatIsoSeconds(Math.floor(input.quoteExpiresAt.getTime() / 1000)),
    nonce: nonceOfIntentId(input.intentId).toString(),
    endpoint: input.endpoint,
  };
}
