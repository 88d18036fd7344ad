// The analyst's view: the reconciliation report of a policy for a chosen range, its differences
// highlighted, and the ledger CSV export (GET /reports/ledger.csv with the session's bearer).
import { useState } from 'preact/hooks';
import type { Api } from './api';
import type { Policy } from './policies';
import { Problem } from './ui';

const RECONCILE = `query ($p: ID!, $from: String!, $to: String!) { reconciliation(policyId: $p, from: $from, to: $to) }`;

function isDifference(key: string, value: unknown): boolean {
  return (
    /diff|mismatch|missing|unmatched|drift/i.test(key) &&
    value !== null &&
    value !== '0' &&
    value !== 0 &&
    !(Array.isArray(value) && value.length === 0)
  );
}

function ReportRows({ value, path = '' }: { value: unknown; path?: string }) {
  if (value === null || typeof value !== 'object')
    return (
      <tr>
        <th scope="row">{path}</th>
        <td class="mono">{String(value)}</td>
      </tr>
    );
  return (
    <>
      {Object.entries(value as Record<string, unknown>).map(([k, v]) => {
        const name = path ? `${path}.${k}` : k;
        if (v !== null && typeof v === 'object' && !Array.isArray(v))
          return <ReportRows key={name} value={v} path={name} />;
        return (
          <tr key={name} class={isDifference(k, v) ? 'difference' : ''}>
            <th scope="row">{name}</th>
            <td class="mono">
              {Array.isArray(v)
                ? `${v.length} item(s) ${JSON.stringify(v).slice(0, 200)}`
                : String(v)}
            </td>
          </tr>
        );
      })}
    </>
  );
}

/** The instant after a UTC day (the report's `to` is exclusive, whole seconds). */
function nextDay(day: string): string {
  return `${new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 19)}Z`;
}

export function Analyst({ api, policy }: { api: Api; policy: Policy }) {
  const today = new Date().toISOString().slice(0, 10);
  const [from, setFrom] = useState(
    new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10),
  );
  const [to, setTo] = useState(today);
  const [report, setReport] = useState<unknown>(null);
  const [error, setError] = useState<unknown>(null);
  const run = (event: Event) => {
    event.preventDefault();
    setError(null);
    api
      .query<{ reconciliation: unknown }>(RECONCILE, {
        p: policy.id,
        from: `${from}T00:00:00Z`,
        to: nextDay(to),
      })
      .then((d) => setReport(d.reconciliation), setError);
  };
  const exportCsv = async () => {
    setError(null);
    try {
      const response = await fetch(`/reports/ledger.csv?policyId=${policy.id}&first=200`, {
        headers: { authorization: `Bearer ${api.session?.token ?? ''}` },
      });
      if (!response.ok) throw new Error(`The export answered ${response.status}.`);
      const link = document.createElement('a');
      link.href = URL.createObjectURL(await response.blob());
      link.download = `ledger-${policy.id.slice(0, 10)}.csv`;
      link.click();
      URL.revokeObjectURL(link.href);
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <section aria-labelledby="analyst-title">
      <h2 id="analyst-title">Reconciliation of {policy.name}</h2>
      <form onSubmit={run} aria-label="Reconciliation range">
        <label for="from">From (UTC day)</label>
        <input
          id="from"
          type="date"
          value={from}
          onInput={(e) => setFrom((e.target as HTMLInputElement).value)}
        />
        <label for="to">To (UTC day)</label>
        <input
          id="to"
          type="date"
          value={to}
          onInput={(e) => setTo((e.target as HTMLInputElement).value)}
        />
        <button type="submit">Reconcile</button>
        <button type="button" onClick={exportCsv}>
          Export ledger CSV
        </button>
      </form>
      <Problem error={error} />
      {report !== null && (
        <table>
          <caption>Report (differences highlighted)</caption>
          <tbody>
            <ReportRows value={report} />
          </tbody>
        </table>
      )}
    </section>
  );
}
