// A consumer intent's outcome notice, as the delivery job builds it from the delivery row that
// `policy.enqueue_outcome_notice` (migration 0012) queued: the intent subgraph's summary plus what
// the policy knows (its name and asset, so the amount reads in display units). A payload that
// does not have the expected shape is a defect upstream: the delivery fails, never guesses.
import { OUTCOME_KINDS, type OutcomeKind, type OutcomeNotice } from '../../../channels/types';
import { formatAmount } from '../../../core/money/amount';

/** The delivery row's outcome columns, as the claim reads them. */
export interface OutcomeDeliveryRow {
  readonly policy_id: string | null;
  readonly intent_id: string | null;
  readonly outcome: string | null;
  readonly payload: Record<string, unknown> | null;
}

interface PolicyAsset {
  readonly network: string;
  readonly token: string;
  readonly symbol: string;
  readonly decimals: number;
}

const ATOMIC = /^[0-9]{1,78}$/;

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function object(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function policyAssetOf(payload: Record<string, unknown>): PolicyAsset | null {
  const asset = object(payload.policyAsset);
  if (asset === null) return null;
  const { network, token, symbol, decimals } = asset;
  if (typeof network !== 'string' || typeof token !== 'string' || typeof symbol !== 'string')
    return null;
  if (typeof decimals !== 'number' || !Number.isInteger(decimals)) return null;
  return { network, token, symbol, decimals };
}

/**
 * The amount in the policy's asset (display units) when the intent's funding asset is the
 * policy's; otherwise the atomic amount named with its token, never a guessed scale.
 */
function amountOf(
  atomic: string,
  funding: Record<string, unknown> | null,
  asset: PolicyAsset | null,
): { display: string; symbol: string; network: string } {
  const network = text(funding?.network);
  const token = text(funding?.token);
  if (
    asset !== null &&
    (network === null || network === asset.network) &&
    (token === null || token.toLowerCase() === asset.token.toLowerCase())
  )
    return {
      display: formatAmount(BigInt(atomic), asset.decimals),
      symbol: asset.symbol,
      network: asset.network,
    };
  return {
    display: atomic,
    symbol: `atomic units of ${token ?? 'the funding asset'}`,
    network: network ?? 'unknown network',
  };
}

function verificationOf(value: unknown): OutcomeNotice['verification'] {
  const found = object(value);
  if (found === null || typeof found.verified !== 'boolean') return null;
  const method = text(found.method);
  const source = text(found.source);
  return method === null || source === null ? null : { verified: found.verified, method, source };
}

/** The notice the adapters render; throws when the queued row is not an outcome notice. */
export function outcomeNoticeOf(row: OutcomeDeliveryRow, dashboardBaseUrl: string): OutcomeNotice {
  const payload = row.payload;
  if (payload === null || row.intent_id === null || row.policy_id === null)
    throw new Error('the delivery carries no outcome');
  if (!(OUTCOME_KINDS as readonly (string | null)[]).includes(row.outcome))
    throw new Error(`the delivery's outcome ${String(row.outcome)} is not one owners are told`);
  const atomic = text(payload.amount);
  if (atomic === null || !ATOMIC.test(atomic))
    throw new Error("the outcome's amount is not an atomic decimal string");
  const asset = policyAssetOf(payload);
  const amount = amountOf(atomic, object(payload.asset), asset);
  const refund = text(payload.refundAmount);
  const occurredAt = new Date(text(payload.occurredAt) ?? Number.NaN);
  return {
    intentId: row.intent_id,
    outcome: row.outcome as OutcomeKind,
    policyId: row.policy_id,
    policyName: text(payload.policyName),
    capability: text(payload.capability) ?? 'unknown capability',
    params: text(payload.params) ?? '',
    amountDisplay: amount.display,
    assetSymbol: amount.symbol,
    network: amount.network,
    reasonCode: text(payload.reasonCode),
    detail: text(payload.detail),
    verification: verificationOf(payload.verification),
    refundDisplay:
      refund !== null && ATOMIC.test(refund) && asset !== null && amount.symbol === asset.symbol
        ? formatAmount(BigInt(refund), asset.decimals)
        : refund,
    occurredAt,
    dashboardUrl: `${dashboardBaseUrl.replace(/\/+$/, '')}/consumer/intents/${row.intent_id}`,
  };
}
