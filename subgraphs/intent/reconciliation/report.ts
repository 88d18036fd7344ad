// A policy's spend and waste report for one period (docs/reconciliation.md): who may ask (the
// policy's owner, its consumer session, an admin; anyone else FORBIDDEN, with nothing read), the
// free check the gateway runs before any 402, and the report itself: the spend sections from the
// policy's consumer intents and preflight decisions, and the cross-check of the booked legs against
// the Transfer events of both rails (the paid route's only: the free query answers the chain
// section from the ledger and the stored chain findings, with no RPC call). The chain check covers
// the whole policy even when the report is narrowed to one agent (a transfer on chain names no agent).
import { AppError } from '../../../core/errors';
import {
  type ChainTransfer,
  compareLegsWithChain,
  type Rail,
} from '../../../core/reconciliation/chainCheck';
import { parseReconcileRequest, type ReconcileRequest } from '../../../core/reconciliation/request';
import { buildSpendReport } from '../../../core/reconciliation/spendReport';
import { requireActor, type ConsumerRails, type SubgraphContext } from '../../kit';
import { type ConsumerIntentRow, policyOwner } from '../consumer';
import {
  blockWindow,
  DEFAULT_REPORT_RPC_CALLS,
  type RailScan,
  RpcBudget,
  scanTreasuryTransfers,
  transfersOfTransaction,
} from './chainScan';
import { bookedLegs, factsOf, legGroupIds } from './legs';
import {
  blockedDuplicates,
  countIntentsInPeriod,
  intentsInPeriod,
  MAX_REPORT_INTENTS,
  policyParties,
  treasuryAmounts,
} from './reads';

/** Receipts of legs mined outside the period, read this many at a time. */
const RECEIPTS_AT_ONCE = 16;

export interface ReconcileArgs {
  readonly policyId: string;
  readonly from: string;
  readonly to: string;
  readonly agentId?: string | null;
}

/** The request as the REST body would carry it, judged by the one parser. */
export function requestOf(args: ReconcileArgs): ReconcileRequest {
  const body: Record<string, unknown> = { policyId: args.policyId, from: args.from, to: args.to };
  if (args.agentId !== null && args.agentId !== undefined) body.agentId = args.agentId;
  return parseReconcileRequest(body);
}

/** Admin; the policy's consumer session; its owner. Anyone else: FORBIDDEN, nothing read. */
export async function requireReconciler(ctx: SubgraphContext, policyId: string): Promise<void> {
  const actor = requireActor(ctx, ['admin', 'owner', 'consumer']);
  if (actor.kind === 'admin') return;
  if (actor.kind === 'consumer' && actor.policyId === policyId) return;
  if (
    actor.kind === 'owner' &&
    (await policyOwner(ctx.db, policyId)) === actor.address.toLowerCase()
  )
    return;
  throw new AppError(
    'FORBIDDEN',
    'Only the policy’s owner, its consumer session or an admin reconciles its spend.',
  );
}

/** The refusal of a period holding more purchases than one report covers, or null. */
function tooManyPurchases(purchases: number): AppError | null {
  if (purchases <= MAX_REPORT_INTENTS) return null;
  return new AppError(
    'REQUEST_INVALID',
    `The period holds more than ${MAX_REPORT_INTENTS} purchases; ask for a shorter one.`,
    [{ field: 'to', reason: `the period holds ${purchases} purchases` }],
  );
}

/** Whether the paid call can answer: access, and a period within the report's bound. Free. */
export async function reconcileAgentSpendTerms(ctx: SubgraphContext, args: ReconcileArgs) {
  const request = requestOf(args);
  await requireReconciler(ctx, request.policyId);
  const refusal = tooManyPurchases(await countIntentsInPeriod(ctx.db, request));
  return {
    policyId: request.policyId,
    refusal: refusal && { code: refusal.code, message: refusal.message, details: refusal.details },
  };
}

/** The chain findings the service stored (the reconciler's, on ambiguous purchases): no RPC call. */
function storedChainFindings(rows: ConsumerIntentRow[]) {
  return rows.flatMap((row) => {
    const finding = row.resolution?.chainFinding;
    return finding && typeof finding === 'object'
      ? [{ intentId: row.intentId, ...(finding as Record<string, unknown>) }]
      : [];
  });
}

/**
 * The free query's chain section: the booked legs per rail and the stored chain findings, read
 * from the database only. A fresh scan of the chains is what POST /reconcile_agent_spend sells.
 */
async function ledgerOnlyCheck(ctx: SubgraphContext, rows: ConsumerIntentRow[]) {
  const rails = ctx.consumer;
  if (rails === undefined)
    return { status: 'UNAVAILABLE', reason: 'no consumer rails are configured', differences: [] };
  const legs = bookedLegs(rows, rails, await treasuryAmounts(ctx.db, legGroupIds(rows)));
  const booked = (['funding', 'settlement'] as const).map((rail) => ({
    rail,
    legs: legs.filter((leg) => leg.rail === rail).length,
    bookedAtomic: legs
      .filter((leg) => leg.rail === rail)
      .reduce((sum, leg) => sum + leg.amountAtomic, 0n)
      .toString(),
  }));
  return {
    status: 'NOT_SCANNED',
    reason:
      'answered from the ledger and the stored chain findings; POST /reconcile_agent_spend scans the chains',
    booked,
    chainFindings: storedChainFindings(rows),
  };
}

async function chainCheck(
  ctx: SubgraphContext,
  request: ReconcileRequest,
  rows: ConsumerIntentRow[],
) {
  const rails = ctx.consumer;
  if (rails === undefined)
    return { status: 'UNAVAILABLE', reason: 'no consumer rails are configured', differences: [] };
  const amounts = await treasuryAmounts(ctx.db, legGroupIds(rows));
  const legs = bookedLegs(rows, rails, amounts);
  const parties = await policyParties(ctx.db, request.policyId);
  const inPeriod = new Set(legs.flatMap((leg) => (leg.txHash ? [leg.txHash.toLowerCase()] : [])));
  const budget = new RpcBudget(rails.reportRpcCalls ?? DEFAULT_REPORT_RPC_CALLS);
  const scans: RailScan[] = [];
  for (const rail of ['funding', 'settlement'] as const) {
    const window = await blockWindow(rails[rail], request.from, request.to, budget);
    scans.push(await scanTreasuryTransfers(rail, rails[rail], window, budget));
  }
  const attributed = scans.flatMap((scan) =>
    scan.transfers.filter((t) => belongsToPeriod(t, parties, inPeriod, rails)),
  );
  const own = await legTransfers(rails, legs, attributed, budget);
  // A leg whose transaction the budget left unread is not compared (it is counted instead).
  const checked = legs.filter((leg) => !own.unread.has(legKey(leg.rail, leg.txHash)));
  const check = compareLegsWithChain(checked, [...attributed, ...own.transfers]);
  const complete = scans.every((scan) => scan.complete) && own.unread.size === 0;
  return {
    status: complete ? 'COMPLETE' : 'INCOMPLETE',
    reason: complete
      ? null
      : `the report's RPC budget (${budget.limit} calls) did not cover the whole period; ask for a shorter one`,
    rpcCalls: { used: budget.spent, limit: budget.limit },
    uncheckedLegs: legs.length - checked.length,
    blocks: Object.fromEntries(
      scans.map((scan) => [
        scan.rail,
        scan.window && {
          fromBlock: scan.window.fromBlock.toString(),
          toBlock: scan.window.toBlock.toString(),
        },
      ]),
    ),
    ...check,
  };
}

/**
 * A treasury transfer the scan attributes to this period of this policy: one of this period's legs,
 * or on the funding rail a transfer with one of the policy's parties that no leg of the policy
 * (of any period) names. The settlement rail's counterparties are merchants shared by every policy,
 * so only the policy's own leg transactions are taken from there.
 */
function belongsToPeriod(
  transfer: ChainTransfer,
  parties: { addresses: Set<string>; legTransactions: Set<string> },
  inPeriod: Set<string>,
  rails: ConsumerRails,
): boolean {
  if (inPeriod.has(transfer.txHash)) return true;
  if (transfer.rail !== 'funding' || parties.legTransactions.has(transfer.txHash)) return false;
  const treasury = rails.funding.treasury.toLowerCase();
  const counterparty = transfer.from === treasury ? transfer.to : transfer.from;
  return parties.addresses.has(counterparty);
}

const legKey = (rail: Rail, txHash: string | null) => `${rail}|${(txHash ?? '').toLowerCase()}`;

/**
 * The transfers of legs whose transaction the period's scan did not see (mined outside it), one
 * receipt per call while the budget lasts; `unread` names the leg transactions it did not cover.
 */
async function legTransfers(
  rails: ConsumerRails,
  legs: ReturnType<typeof bookedLegs>,
  seen: ChainTransfer[],
  budget: RpcBudget,
) {
  const known = new Set(seen.map((t) => legKey(t.rail, t.txHash)));
  const missing = new Map<string, Rail>();
  for (const leg of legs)
    if (leg.txHash && !known.has(legKey(leg.rail, leg.txHash)))
      missing.set(legKey(leg.rail, leg.txHash), leg.rail);
  const transfers: ChainTransfer[] = [];
  const pending = [...missing.entries()];
  const readable = pending.slice(0, Math.max(0, budget.left));
  budget.take(readable.length);
  // A few receipts at a time: a long period can name thousands of legs, the RPC is shared.
  for (let start = 0; start < readable.length; start += RECEIPTS_AT_ONCE) {
    const batch = readable.slice(start, start + RECEIPTS_AT_ONCE);
    const found = await Promise.all(
      batch.map(([key, rail]) => transfersOfTransaction(rail, rails[rail], key.split('|')[1])),
    );
    transfers.push(...found.flat());
  }
  return { transfers, unread: new Set(pending.slice(readable.length).map(([key]) => key)) };
}

function assetsOf(rails: ConsumerRails | undefined) {
  if (rails === undefined) return null;
  const asset = (rail: ConsumerRails['funding']) => ({
    network: rail.network,
    token: rail.token.toLowerCase(),
    symbol: rail.symbol,
    decimals: rail.decimals,
    treasury: rail.treasury.toLowerCase(),
  });
  return { funding: asset(rails.funding), settlement: asset(rails.settlement) };
}

/**
 * The report. `scan`: the paid route's fresh scan of both chains (bounded per report); without
 * it (the free GraphQL query) the chain section comes from the ledger and stored findings only.
 */
export async function reconcileAgentSpend(
  ctx: SubgraphContext,
  args: ReconcileArgs,
  options: { readonly scan: boolean },
): Promise<Record<string, unknown>> {
  const request = requestOf(args);
  await requireReconciler(ctx, request.policyId);
  const [rows, duplicates] = await Promise.all([
    intentsInPeriod(ctx.db, request),
    blockedDuplicates(ctx.db, request),
  ]);
  // Read one past the bound: a period that grew past it since the check is refused, not cut short.
  const refusal = tooManyPurchases(rows.length);
  if (refusal !== null) throw refusal;
  const report = buildSpendReport(rows.map(factsOf), duplicates.listed);
  return {
    policyId: request.policyId,
    from: request.from.toISOString(),
    to: request.to.toISOString(),
    agentId: request.agentId,
    generatedAt: ctx.now().toISOString(),
    assets: assetsOf(ctx.consumer),
    ...report,
    duplicatesBlocked: {
      ...report.duplicatesBlocked,
      count: duplicates.count,
      amountAtomic: duplicates.amountAtomic.toString(),
    },
    chainCheck: options.scan
      ? await chainCheck(ctx, request, rows)
      : await ledgerOnlyCheck(ctx, rows),
  };
}
