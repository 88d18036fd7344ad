// The gates before anything is signed (DECISIONS "Consumer intents", execution order): the quote
// is still fresh, the approval's hash still matches the stored SpendIntent and the quote to be paid
// is the one decided on (its payee, its amounts, its URL: what is paid is bound to the approval),
// the capability's
// effective maturity is verified and its provider not gated (catalog.capability_terms), and the
// settlement treasury's float on chain covers the cost. The first that fails names the reason.
import { isQuoteFresh, quoteCrossRailFunding } from '../../../../core/consumer/quote';
import { validateSpendIntent } from '../../../../core/validation/intent';
import type { Db } from '../../../../platform/db';
import type { ConsumerRails } from '../../../kit';
import type { ConsumerIntentRow } from '../store';
import { readTreasuryFloat } from './chainTruth';
import type { ExecutionQuote } from './quoteFields';

export type GateReason =
  | 'QUOTE_EXPIRED'
  | 'APPROVAL_HASH_MISMATCH'
  | 'CAPABILITY_NOT_VERIFIED'
  | 'PROVIDER_GATED'
  | 'TREASURY_FLOAT_INSUFFICIENT';

export type GateResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: GateReason; readonly message: string };

const fail = (reason: GateReason, message: string): GateResult => ({ ok: false, reason, message });

/** The stored SpendIntent recomputed with core/canon, against the stored hash and the decision's. */
export function approvalHashProblem(row: ConsumerIntentRow): string | null {
  if (row.spendIntent === null || row.intentHash === null)
    return 'no decided SpendIntent is stored';
  // The deadline is not what is checked here (the quote's freshness is): validate at time 0.
  const validated = validateSpendIntent(row.spendIntent, 0);
  if (!validated.ok) return 'the stored SpendIntent no longer validates';
  const recomputed = validated.intent.intentHash.toLowerCase();
  if (recomputed !== row.intentHash.toLowerCase())
    return `the stored SpendIntent hashes to ${recomputed}, not the approved ${row.intentHash}`;
  const decided = row.decision?.intentHash;
  if (typeof decided !== 'string' || decided.toLowerCase() !== recomputed)
    return 'the decision was made on another intent hash';
  return null;
}

const sameText = (a: unknown, b: string) =>
  typeof a === 'string' && a.toLowerCase() === b.toLowerCase();

/**
 * The quote execution would pay, against the SpendIntent the policy decided: the same payee
 * (recipient), the same URL (endpoint), the same funding amount, and a provider cost that, with
 * the quote's fee and spread, comes to exactly that amount. Null when they agree.
 */
export function quoteBindingProblem(
  row: ConsumerIntentRow,
  quote: ExecutionQuote,
  rails: ConsumerRails,
): string | null {
  const decided = row.spendIntent;
  if (decided === null) return 'no decided SpendIntent is stored';
  if (!sameText(decided.recipient, quote.payTo))
    return `the quote pays ${quote.payTo}, the decision was for ${String(decided.recipient)}`;
  if (decided.endpoint !== quote.url)
    return `the quote pays for ${quote.url}, the decision was for ${String(decided.endpoint)}`;
  if (decided.amount !== quote.funding.amount.toString())
    return `the quote is funded with ${quote.funding.amount}, the decision was for ${String(decided.amount)}`;
  const feeBps = row.quote?.feeBps;
  const spreadBps = row.quote?.spreadBps;
  if (feeBps === undefined || spreadBps === undefined)
    return 'the quote names no fee or spread rate';
  const recomputed = quoteCrossRailFunding({
    settlementCostAtomic: quote.providerCost,
    settlementDecimals: rails.settlement.decimals,
    fundingDecimals: rails.funding.decimals,
    feeBps: BigInt(feeBps),
    spreadBps: BigInt(spreadBps),
  });
  if (
    recomputed.fundingAtomic !== quote.funding.amount ||
    recomputed.feeAtomic !== quote.fee ||
    recomputed.spreadAtomic !== quote.spread
  )
    return `a provider cost of ${quote.providerCost} is not what the decided ${quote.funding.amount} funds`;
  return null;
}

interface Terms {
  effective_maturity: string;
  gate_code: string | null;
  provider_id: string;
}

async function catalogGate(db: Db, row: ConsumerIntentRow): Promise<GateResult | null> {
  const terms = await db.query<Terms>(
    'SELECT effective_maturity, gate_code, provider_id FROM catalog.capability_terms($1)',
    [row.capability],
  );
  const found = terms.rows[0];
  if (found === undefined)
    return fail('CAPABILITY_NOT_VERIFIED', `the catalog no longer lists ${row.capability}`);
  if (found.gate_code !== null)
    return fail('PROVIDER_GATED', `${row.capability} is gated (${found.gate_code})`);
  if (found.effective_maturity !== 'verified')
    return fail(
      'CAPABILITY_NOT_VERIFIED',
      `${row.capability}'s effective maturity is ${found.effective_maturity}`,
    );
  if (found.provider_id !== row.provider)
    return fail('PROVIDER_GATED', `${row.capability} is no longer sold by ${row.provider}`);
  return null;
}

export async function runGates(
  db: Db,
  row: ConsumerIntentRow,
  quote: ExecutionQuote,
  rails: ConsumerRails,
  now: Date,
): Promise<GateResult> {
  if (!isQuoteFresh(quote.expiresAt, now))
    return fail(
      'QUOTE_EXPIRED',
      `quote ${quote.quoteId} expired at ${quote.expiresAt.toISOString()}`,
    );
  const hashProblem = approvalHashProblem(row);
  if (hashProblem !== null) return fail('APPROVAL_HASH_MISMATCH', hashProblem);
  const bindingProblem = quoteBindingProblem(row, quote, rails);
  if (bindingProblem !== null) return fail('APPROVAL_HASH_MISMATCH', bindingProblem);
  const catalog = await catalogGate(db, row);
  if (catalog !== null) return catalog;
  const float = await readTreasuryFloat(rails.settlement);
  if (float < quote.providerCost)
    return fail(
      'TREASURY_FLOAT_INSUFFICIENT',
      `the settlement treasury holds ${float}, the payment needs ${quote.providerCost}`,
    );
  return { ok: true };
}
