// The analyst routes: POST /reconcile_agent_spend ($0.25, x402), a policy's spend and waste report
// with the ledger checked against the chains, and GET /reports/ledger.csv, one page of ledger
// entries as CSV (the same entries, filters and cursor as the GraphQL ledgerEntries). The body
// and the query are judged before any 402 (a malformed request is a 400, never a charge); who may
// reconcile the policy is asked of the intent subgraph, also before any 402, so a caller who may
// not see it is refused (403) and never charged.
import { AppError } from '../../../core/errors';
import { csvDocument } from '../../../core/reconciliation/csv';
import { parseReconcileRequest } from '../../../core/reconciliation/request';
import { parseIsoTimestamp } from '../../../core/validation/timestamp';
import { GROUP_KINDS } from '../../../subgraphs/ledger';
import type { LedgerEntriesCsvQuery } from '../generated/operations';
import { refusalFromData } from '../refusal';
import { queryValue } from '../requestBodies';
import { FREE, type RestInput, type RouteDefinition, usdt0 } from '../types';

function reconcileVariables(input: RestInput): Record<string, unknown> {
  const request = parseReconcileRequest(input.body ?? {});
  return {
    policyId: request.policyId,
    from: (input.body as Record<string, unknown>).from,
    to: (input.body as Record<string, unknown>).to,
    agentId: request.agentId,
  };
}

export const reconcileAgentSpendRoute: RouteDefinition = {
  method: 'POST',
  path: '/reconcile_agent_spend',
  purpose:
    'a policy’s spend and waste report for {policyId, from, to, agentId?} (at most 92 days): spend by category, provider and agent, fees and spread, duplicates blocked, failed deliveries, refunds, open ambiguous outcomes, and every difference between the ledger and the Transfer events on chain (owner, the policy’s consumer session or admin)',
  group: 'control-plane',
  auth: 'consumer',
  price: usdt0('0.25', {
    document: 'reconcileAgentSpendTerms',
    operationName: 'ReconcileAgentSpendTerms',
    variables: reconcileVariables,
    read: (data) =>
      refusalFromData(
        (data.reconcileAgentSpendTerms as Record<string, unknown>).refusal,
        'REQUEST_INVALID',
      ),
  }),
  validate: (input) => void parseReconcileRequest(input.body ?? {}),
  operation: {
    document: 'reconcileAgentSpend',
    operationName: 'ReconcileAgentSpend',
    variables: reconcileVariables,
    respond: (data) => ({ status: 200, body: data.reconcileAgentSpend }),
  },
};

const CSV_COLUMNS = [
  'entryId',
  'groupId',
  'entryNo',
  'postedAt',
  'groupKind',
  'accountKey',
  'accountKind',
  'chain',
  'token',
  'symbol',
  'decimals',
  'amountAtomic',
] as const;

/** One ledger entry as the LedgerEntriesCsv document selects it. */
type EntryNode = LedgerEntriesCsvQuery['ledgerEntries']['nodes'][number];

function timeFilter(input: RestInput, field: 'from' | 'to'): string | null {
  const value = queryValue(input, field);
  if (value === null) return null;
  const parsed = parseIsoTimestamp(value);
  if (!parsed.ok)
    throw new AppError('REQUEST_INVALID', undefined, [{ field, reason: parsed.reason }]);
  return new Date(parsed.unixSeconds * 1000).toISOString();
}

function ledgerCsvVariables(input: RestInput): Record<string, unknown> {
  const kind = queryValue(input, 'kind');
  if (kind !== null && !(GROUP_KINDS as readonly string[]).includes(kind))
    throw new AppError('REQUEST_INVALID', undefined, [
      { field: 'kind', reason: `must be one of ${GROUP_KINDS.join(', ')}` },
    ]);
  const first = queryValue(input, 'first');
  if (first !== null && !/^[1-9][0-9]{0,2}$/.test(first))
    throw new AppError('REQUEST_INVALID', undefined, [
      { field: 'first', reason: 'must be 1 to 200' },
    ]);
  const filter = {
    account: queryValue(input, 'account'),
    kind,
    asset: queryValue(input, 'asset'),
    policyId: queryValue(input, 'policyId'),
    from: timeFilter(input, 'from'),
    to: timeFilter(input, 'to'),
  };
  return {
    filter: Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== null)),
    first: first === null ? null : Number(first),
    after: queryValue(input, 'after'),
  };
}

function csvRow(entry: EntryNode): string[] {
  return [
    entry.id,
    entry.groupId,
    String(entry.entryNo),
    entry.createdAt,
    entry.groupKind,
    entry.accountKey,
    entry.accountKind,
    entry.asset.chain,
    entry.asset.token,
    entry.asset.symbol,
    String(entry.asset.decimals),
    entry.amountAtomic,
  ];
}

export const ledgerCsvRoute: RouteDefinition = {
  method: 'GET',
  path: '/reports/ledger.csv',
  purpose:
    'one page of ledger entries as CSV, newest first (?account= ?kind= ?asset= ?policyId= ?from= ?to= ?first= 1–200 ?after=); the next page’s cursor in x-next-cursor (admin, the policy’s owner or consumer session: the entries ledgerEntries shows them)',
  group: 'control-plane',
  auth: 'consumer',
  price: FREE,
  operation: {
    document: 'ledgerEntriesCsv',
    operationName: 'LedgerEntriesCsv',
    variables: ledgerCsvVariables,
    respond: (data) => {
      const page = data.ledgerEntries;
      const next = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
      return {
        status: 200,
        body: csvDocument(CSV_COLUMNS, page.nodes.map(csvRow)),
        headers: {
          'content-type': 'text/csv; charset=utf-8',
          'content-disposition': 'attachment; filename="ledger.csv"',
          ...(next === null ? {} : { 'x-next-cursor': next }),
        },
      };
    },
  },
};
