// Policies: state and today's usage against the budget, versions and hashes, pause / resume, bound
// channels (bind with a link code) and a form proposing an update with its errors by field.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, type Api } from './api';
import { formatAmount, shortHex, toAtomic } from './format';
import { Empty, Problem, Time } from './ui';

const POLICY = `id name status state version policyHash rules createdAt
  limits { asset { symbol decimals } dailyBudget perCallCap escalateAbove budgetWindow }
  versions(first: 10) { version policyHash createdAt }`;
const LIST = `query { policies(first: 50) { nodes { ${POLICY} } } }`;
const WINDOW = `query ($p: ID) { policyLedgerWindow(policyId: $p) }`;
const PAUSE = `mutation ($p: ID!) { pausePolicy(policyId: $p) { ${POLICY} } }`;
const RESUME = `mutation ($p: ID!) { resumePolicy(policyId: $p) { ${POLICY} } }`;
const UPDATE = `mutation ($p: ID!, $policy: JSONObject!) { updatePolicy(policyId: $p, policy: $policy) { ${POLICY} } }`;

export interface Policy {
  id: string;
  name: string;
  status: string;
  state: string;
  version: number;
  policyHash: string;
  rules: Record<string, unknown>;
  createdAt: string;
  limits: {
    asset: { symbol: string; decimals: number };
    dailyBudget: string;
    perCallCap: string;
    escalateAbove: string;
    budgetWindow: string;
  };
  versions: { version: number; policyHash: string; createdAt: string }[];
}

interface Window {
  dailyBudgetAtomic: string;
  settledTodayAtomic: string;
  reservedTodayAtomic: string;
  remainingBudgetAtomic: string;
}

export function usePolicies(api: Api): [Policy[] | null, unknown, (p: Policy) => void] {
  const [policies, setPolicies] = useState<Policy[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    api
      .query<{ policies: { nodes: Policy[] } }>(LIST)
      .then((d) => setPolicies(d.policies.nodes), setError);
  }, [api]);
  const replace = (p: Policy) =>
    setPolicies((all) => (all ?? []).map((q) => (q.id === p.id ? p : q)));
  return [policies, error, replace];
}

export function Policies({ api }: { api: Api }) {
  const [policies, error, replace] = usePolicies(api);
  return (
    <section aria-labelledby="policies-title">
      <h2 id="policies-title">Policies</h2>
      <Problem error={error} />
      {policies === null && !error && <p>Loading your policies…</p>}
      {policies?.length === 0 && <Empty>You own no policies yet.</Empty>}
      {policies?.map((p) => (
        <PolicyCard key={p.id} api={api} policy={p} onChange={replace} />
      ))}
      <Channels api={api} />
    </section>
  );
}

function UsageBar({ api, policy }: { api: Api; policy: Policy }) {
  const [usage, setUsage] = useState<Window | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    api
      .query<{ policyLedgerWindow: Window }>(WINDOW, { p: policy.id })
      .then((d) => setUsage(d.policyLedgerWindow), setError);
  }, [api, policy.id, policy.version]);
  if (error) return <Problem error={error} />;
  if (!usage) return <p>Reading today’s usage…</p>;
  const asset = policy.limits.asset;
  const budget = BigInt(usage.dailyBudgetAtomic || '0');
  const pct = (v: string) => (budget > 0n ? Number((BigInt(v) * 1000n) / budget) / 10 : 0);
  return (
    <div class="usage">
      <div
        class="bar"
        role="img"
        aria-label={`Today: ${formatAmount(usage.settledTodayAtomic, asset)} spent, ${formatAmount(usage.reservedTodayAtomic, asset)} reserved, ${formatAmount(usage.remainingBudgetAtomic, asset)} remaining of ${formatAmount(usage.dailyBudgetAtomic, asset)}`}
      >
        <span class="spent" style={{ width: `${Math.min(100, pct(usage.settledTodayAtomic))}%` }} />
        <span
          class="reserved"
          style={{ width: `${Math.min(100, pct(usage.reservedTodayAtomic))}%` }}
        />
      </div>
      <p class="legend">
        Spent {formatAmount(usage.settledTodayAtomic, asset)} · reserved{' '}
        {formatAmount(usage.reservedTodayAtomic, asset)} · remaining{' '}
        {formatAmount(usage.remainingBudgetAtomic, asset)} of{' '}
        {formatAmount(usage.dailyBudgetAtomic, asset)}
      </p>
    </div>
  );
}

function PolicyCard({
  api,
  policy,
  onChange,
}: {
  api: Api;
  policy: Policy;
  onChange: (p: Policy) => void;
}) {
  const [error, setError] = useState<unknown>(null);
  const act = (query: string, field: 'pausePolicy' | 'resumePolicy') => {
    setError(null);
    api
      .query<Record<string, Policy>>(query, { p: policy.id })
      .then((d) => onChange(d[field]), setError);
  };
  return (
    <article class="card" aria-label={`Policy ${policy.name}`}>
      <h3>{policy.name}</h3>
      <p class="status">
        <strong>
          {policy.state === 'ACTIVE' ? 'Active' : policy.state === 'PAUSED' ? 'Paused' : 'Expired'}
        </strong>{' '}
        · version {policy.version} ·{' '}
        <span class="mono" title={policy.policyHash}>
          {shortHex(policy.policyHash)}
        </span>
      </p>
      <UsageBar api={api} policy={policy} />
      <Problem error={error} />
      <div class="actions">
        {policy.state === 'PAUSED' ? (
          <button type="button" onClick={() => act(RESUME, 'resumePolicy')}>
            Resume {policy.name}
          </button>
        ) : (
          <button type="button" onClick={() => act(PAUSE, 'pausePolicy')}>
            Pause {policy.name}
          </button>
        )}
      </div>
      <details>
        <summary>Versions</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Hash</th>
              <th scope="col">Written</th>
            </tr>
          </thead>
          <tbody>
            {policy.versions.map((v) => (
              <tr key={v.version}>
                <td>{v.version}</td>
                <td class="mono" title={v.policyHash}>
                  {shortHex(v.policyHash)}
                </td>
                <td>
                  <Time iso={v.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      <UpdateForm api={api} policy={policy} onChange={onChange} />
    </article>
  );
}

const LIMIT_FIELDS = [
  ['dailyBudget', 'Daily budget'],
  ['perCallCap', 'Per-call cap'],
  ['escalateAbove', 'Ask me above'],
] as const;

function UpdateForm({
  api,
  policy,
  onChange,
}: {
  api: Api;
  policy: Policy;
  onChange: (p: Policy) => void;
}) {
  const { decimals, symbol } = policy.limits.asset;
  const initial = Object.fromEntries(LIMIT_FIELDS.map(([k]) => [k, policy.limits[k]]));
  const [values, setValues] = useState<Record<string, string>>(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState('');
  const submit = async (event: Event) => {
    event.preventDefault();
    const local: Record<string, string> = {};
    for (const [k, label] of LIMIT_FIELDS)
      if (toAtomic(values[k] ?? '', decimals) === null)
        local[k] = `${label} must be an amount like 12.50 (${symbol}).`;
    setErrors(local);
    setMessage('');
    if (Object.keys(local).length > 0) return;
    try {
      const d = await api.query<{ updatePolicy: Policy }>(UPDATE, {
        p: policy.id,
        policy: { ...policy.rules, ...values },
      });
      onChange(d.updatePolicy);
      setMessage(`Saved as version ${d.updatePolicy.version}.`);
    } catch (failure) {
      const byField: Record<string, string> = {};
      if (failure instanceof ApiError && Array.isArray(failure.details))
        for (const d of failure.details as { field?: string; reason?: string }[])
          byField[
            String(d.field ?? 'policy')
              .split('.')
              .pop() ?? 'policy'
          ] = d.reason ?? 'invalid';
      else byField.policy = failure instanceof Error ? failure.message : String(failure);
      setErrors(byField);
    }
  };
  return (
    <details>
      <summary>Propose an update</summary>
      <form onSubmit={submit} noValidate aria-label={`Update ${policy.name}`}>
        {LIMIT_FIELDS.map(([k, label]) => (
          <p key={k}>
            <label for={`${policy.id}-${k}`}>
              {label} ({symbol})
            </label>
            <input
              id={`${policy.id}-${k}`}
              inputMode="decimal"
              value={values[k]}
              aria-invalid={errors[k] ? 'true' : 'false'}
              aria-describedby={errors[k] ? `${policy.id}-${k}-error` : undefined}
              onInput={(e) => setValues({ ...values, [k]: (e.target as HTMLInputElement).value })}
            />
            {errors[k] && (
              <span id={`${policy.id}-${k}-error`} class="field-error" role="alert">
                {errors[k]}
              </span>
            )}
          </p>
        ))}
        {Object.entries(errors)
          .filter(([k]) => !LIMIT_FIELDS.some(([f]) => f === k))
          .map(([k, v]) => (
            <p key={k} class="field-error" role="alert">
              {k}: {v}
            </p>
          ))}
        <button type="submit">Save new version</button>
        {message && <p role="status">{message}</p>}
      </form>
    </details>
  );
}

const CHANNELS = `query { channelBindings { bindingId kind state address createdAt } }`;
const LINK = `mutation ($kind: ChannelKind!, $address: String) { startChannelLink(kind: $kind, address: $address) { linkCode instructions binding { bindingId kind state address createdAt } } }`;

function Channels({ api }: { api: Api }) {
  const [bindings, setBindings] = useState<
    { bindingId: string; kind: string; state: string; address: string | null }[]
  >([]);
  const [kind, setKind] = useState('TELEGRAM');
  const [address, setAddress] = useState('');
  const [started, setStarted] = useState<{ linkCode: string | null; instructions: string } | null>(
    null,
  );
  const [error, setError] = useState<unknown>(null);
  const load = () =>
    api
      .query<{ channelBindings: typeof bindings }>(CHANNELS)
      .then((d) => setBindings(d.channelBindings), setError);
  useEffect(() => void load(), [api]);
  const bind = (event: Event) => {
    event.preventDefault();
    setError(null);
    api
      .query<{ startChannelLink: { linkCode: string | null; instructions: string } }>(LINK, {
        kind,
        address: address || null,
      })
      .then((d) => {
        setStarted(d.startChannelLink);
        void load();
      }, setError);
  };
  return (
    <section aria-labelledby="channels-title">
      <h3 id="channels-title">Channels</h3>
      {bindings.length === 0 && <Empty>No channels bound: escalations reach you only here.</Empty>}
      <ul>
        {bindings.map((b) => (
          <li key={b.bindingId}>
            {b.kind.toLowerCase()} · {b.state.toLowerCase()} · {b.address ?? 'waiting for the link'}
          </li>
        ))}
      </ul>
      <form onSubmit={bind} aria-label="Bind a channel">
        <label for="channel-kind">Channel</label>
        <select
          id="channel-kind"
          value={kind}
          onChange={(e) => setKind((e.target as HTMLSelectElement).value)}
        >
          <option value="TELEGRAM">Telegram</option>
          <option value="SLACK">Slack</option>
          <option value="WEBHOOK">Webhook</option>
          <option value="EMAIL">Email</option>
        </select>
        <label for="channel-address">Address (webhook URL or email)</label>
        <input
          id="channel-address"
          value={address}
          onInput={(e) => setAddress((e.target as HTMLInputElement).value)}
        />
        <button type="submit">Bind channel</button>
      </form>
      <Problem error={error} />
      {started && (
        <p role="status">
          Link code <strong class="mono">{started.linkCode ?? '—'}</strong>: {started.instructions}
        </p>
      )}
    </section>
  );
}
