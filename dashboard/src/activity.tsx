// Activity of one policy: decisions with their fourteen-rule trace, consumer intents (each with its
// receipt), the ledger (groups by kind, balances) and daily spend against the budget.
import { useEffect, useState } from 'preact/hooks';
import type { Api } from './api';
import { formatAmount, shortHex, toAtomic } from './format';
import type { Policy } from './policies';
import { Empty, Problem, Time } from './ui';

const DECISIONS = `query ($p: ID!) { spendDecisions(policyId: $p, first: 50) { nodes {
  id decision outcome decidingRule evaluatedAt ruleTrace { rule result observed limit note } } } }`;
const INTENTS = `query ($p: ID) { consumerIntents(policyId: $p, first: 50) { nodes { intentId capability state stateReason createdAt updatedAt } } }`;
const LEDGER = `query ($f: LedgerFilter) { ledgerBalances(filter: $f) { kind debitsAtomic creditsAtomic netAtomic entryCount asset { symbol decimals } }
  ledgerGroups(first: 100, filter: $f) { nodes { id kind createdAt entries { accountKind amountAtomic } } } }`;

interface Decision {
  id: string;
  decision: string;
  outcome: string;
  decidingRule: string | null;
  evaluatedAt: string;
  ruleTrace: {
    rule: string;
    result: string;
    observed: string | null;
    limit: string | null;
    note: string | null;
  }[];
}

function useQuery<T>(
  api: Api,
  query: string,
  variables: Record<string, unknown>,
): [T | null, unknown] {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const key = JSON.stringify(variables);
  useEffect(() => {
    setData(null);
    api.query<T>(query, variables).then(setData, setError);
  }, [api, query, key]);
  return [data, error];
}

export function Activity({ api, policy }: { api: Api; policy: Policy }) {
  return (
    <section aria-labelledby="activity-title">
      <h2 id="activity-title">Activity of {policy.name}</h2>
      <Decisions api={api} policy={policy} />
      <Intents api={api} policy={policy} />
      <Ledger api={api} policy={policy} />
    </section>
  );
}

function Decisions({ api, policy }: { api: Api; policy: Policy }) {
  const [data, error] = useQuery<{ spendDecisions: { nodes: Decision[] } }>(api, DECISIONS, {
    p: policy.id,
  });
  const [open, setOpen] = useState<string | null>(null);
  const nodes = data?.spendDecisions.nodes ?? [];
  return (
    <>
      <h3>Decisions</h3>
      <Problem error={error} />
      {data && nodes.length === 0 && (
        <Empty>No payment has been checked against this policy yet.</Empty>
      )}
      <ul class="plain">
        {nodes.map((d) => (
          <li key={d.id}>
            <button
              type="button"
              aria-expanded={open === d.id}
              onClick={() => setOpen(open === d.id ? null : d.id)}
            >
              {d.decision} · {d.outcome} · <Time iso={d.evaluatedAt} />
            </button>
            {open === d.id && (
              <table>
                <caption>Rule trace: deciding rule {d.decidingRule ?? 'none'}</caption>
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">Rule</th>
                    <th scope="col">Result</th>
                    <th scope="col">Observed</th>
                    <th scope="col">Limit</th>
                    <th scope="col">Note</th>
                  </tr>
                </thead>
                <tbody>
                  {d.ruleTrace.map((r, i) => (
                    <tr key={r.rule} class={r.rule === d.decidingRule ? 'deciding' : ''}>
                      <td>{i + 1}</td>
                      <td>{r.rule}</td>
                      <td>{r.result}</td>
                      <td>{r.observed ?? '—'}</td>
                      <td>{r.limit ?? '—'}</td>
                      <td>{r.note ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

function Intents({ api, policy }: { api: Api; policy: Policy }) {
  const [data, error] = useQuery<{
    consumerIntents: {
      nodes: {
        intentId: string;
        capability: string;
        state: string;
        stateReason: string | null;
        createdAt: string;
        updatedAt: string;
      }[];
    };
  }>(api, INTENTS, { p: policy.id });
  const nodes = data?.consumerIntents.nodes ?? [];
  return (
    <>
      <h3>Purchases</h3>
      <Problem error={error} />
      {data && nodes.length === 0 && <Empty>No purchases under this policy yet.</Empty>}
      <ol class="timeline">
        {nodes.map((i) => (
          <li key={i.intentId}>
            <Time iso={i.createdAt} /> {i.capability}: <strong>{i.state}</strong>
            {i.stateReason ? ` (${i.stateReason})` : ''} · last change <Time iso={i.updatedAt} /> ·{' '}
            <a href={`#/receipt/${i.intentId}`}>Receipt of {shortHex(i.intentId)}</a>
          </li>
        ))}
      </ol>
    </>
  );
}

interface Balance {
  kind: string;
  debitsAtomic: string;
  creditsAtomic: string;
  netAtomic: string;
  entryCount: number;
  asset: { symbol: string; decimals: number };
}
interface Group {
  id: string;
  kind: string;
  createdAt: string;
  entries: { accountKind: string; amountAtomic: string }[];
}

function Ledger({ api, policy }: { api: Api; policy: Policy }) {
  const [data, error] = useQuery<{ ledgerBalances: Balance[]; ledgerGroups: { nodes: Group[] } }>(
    api,
    LEDGER,
    { f: { policyId: policy.id } },
  );
  const groups = data?.ledgerGroups.nodes ?? [];
  const byKind = new Map<string, number>();
  for (const g of groups) byKind.set(g.kind, (byKind.get(g.kind) ?? 0) + 1);
  return (
    <>
      <h3>Ledger</h3>
      <Problem error={error} />
      {data && groups.length === 0 && <Empty>No money has moved under this policy yet.</Empty>}
      {data && data.ledgerBalances.length > 0 && (
        <table>
          <caption>Balances by account kind</caption>
          <thead>
            <tr>
              <th scope="col">Account</th>
              <th scope="col">Debits</th>
              <th scope="col">Credits</th>
              <th scope="col">Net</th>
              <th scope="col">Entries</th>
            </tr>
          </thead>
          <tbody>
            {data.ledgerBalances.map((b) => (
              <tr key={`${b.kind}-${b.asset.symbol}`}>
                <td>{b.kind}</td>
                <td>{formatAmount(b.debitsAtomic, b.asset)}</td>
                <td>{formatAmount(b.creditsAtomic, b.asset)}</td>
                <td>{formatAmount(b.netAtomic, b.asset)}</td>
                <td>{b.entryCount}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {byKind.size > 0 && (
        <p>Groups by kind: {[...byKind].map(([k, n]) => `${k} ${n}`).join(' · ')}</p>
      )}
      <SpendChart groups={groups} policy={policy} />
    </>
  );
}

/** Daily spend (SPEND group debits) of the last 7 UTC days against the daily budget, as SVG. */
function SpendChart({ groups, policy }: { groups: Group[]; policy: Policy }) {
  const asset = policy.limits.asset;
  const budget = BigInt(toAtomic(policy.limits.dailyBudget, asset.decimals) ?? '0');
  const days: { day: string; spent: bigint }[] = [];
  for (let i = 6; i >= 0; i -= 1)
    days.push({ day: new Date(Date.now() - i * 86_400_000).toISOString().slice(0, 10), spent: 0n });
  for (const g of groups) {
    const day = days.find((d) => d.day === g.createdAt.slice(0, 10));
    if (!day || !/SPEND|SETTLE|FUND/.test(g.kind)) continue;
    for (const e of g.entries)
      if (e.accountKind === 'EXPENSE' || e.accountKind === 'SPEND')
        day.spent += BigInt(e.amountAtomic) > 0n ? BigInt(e.amountAtomic) : 0n;
  }
  const max = days.reduce((m, d) => (d.spent > m ? d.spent : m), budget) || 1n;
  const h = (v: bigint) => Number((v * 100n) / max);
  return (
    <figure>
      <svg
        viewBox="0 0 280 120"
        role="img"
        aria-label={`Daily spend of the last 7 days against the budget of ${`${policy.limits.dailyBudget} ${asset.symbol}`}`}
      >
        {days.map((d, i) => (
          <rect
            key={d.day}
            x={10 + i * 38}
            y={110 - h(d.spent)}
            width="28"
            height={h(d.spent)}
            class="spend-bar"
          >
            <title>{`${d.day}: ${formatAmount(d.spent.toString(), asset)}`}</title>
          </rect>
        ))}
        <line x1="0" x2="280" y1={110 - h(budget)} y2={110 - h(budget)} class="budget-line" />
      </svg>
      <figcaption>Daily spend (bars) against the daily budget (line), last 7 UTC days.</figcaption>
    </figure>
  );
}
