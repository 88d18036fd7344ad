// Escalations, live: the owner's pending escalations over the escalationUpdated subscription, with
// the time left, amount, recipient, item and the deciding rule in words; Approve (optionally with
// the wallet's EIP-712 signature) and Deny; decided ones move to the history.
import { useEffect, useState } from 'preact/hooks';
import type { Api } from './api';
import { countdown, formatAmount, shortHex } from './format';
import { Empty, Problem, Time } from './ui';
import { signTypedData } from './wallet';

const FIELDS = `pollRef state outcome reason policyId decision decidingRule ruleReason amountAtomic
  recipient intent typedData createdAt expiresAt resolvedAt resolvedVia ownerSigned
  policy { name limits { asset { symbol decimals } } }`;
const LIST = `query { escalations(first: 50) { nodes { ${FIELDS} } } }`;
const ONE = `query ($pollRef: ID!) { escalation(pollRef: $pollRef) { ${FIELDS} } }`;
const LIVE = `subscription { escalationUpdated { pollRef state } }`;
const DECIDE = `mutation ($pollRef: ID!, $decision: EscalationDecision!, $signature: String) {
  decideEscalation(pollRef: $pollRef, decision: $decision, signature: $signature) { ${FIELDS} } }`;

export interface Escalation {
  pollRef: string;
  state: 'PENDING' | 'APPROVED' | 'DENIED' | 'EXPIRED';
  outcome: string | null;
  reason: string | null;
  policyId: string;
  decidingRule: string;
  ruleReason: string;
  amountAtomic: string;
  recipient: string;
  intent: { agentId?: string; provider?: string; item?: { description?: string } };
  typedData: unknown;
  createdAt: string;
  expiresAt: string;
  resolvedAt: string | null;
  resolvedVia: string | null;
  ownerSigned: boolean;
  policy: { name: string; limits: { asset: { symbol: string; decimals: number } } } | null;
}

const STATE_WORDS: Record<Escalation['state'], string> = {
  PENDING: 'Waiting for you',
  APPROVED: 'Approved',
  DENIED: 'Denied',
  EXPIRED: 'Denied (expired: nobody decided in time)',
};

function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

export function Escalations({ api }: { api: Api }) {
  const [items, setItems] = useState<Record<string, Escalation>>({});
  const [error, setError] = useState<unknown>(null);
  const [live, setLive] = useState(false);
  const now = useNow();
  const upsert = (e: Escalation) => setItems((all) => ({ ...all, [e.pollRef]: e }));

  useEffect(() => {
    api
      .query<{ escalations: { nodes: Escalation[] } }>(LIST)
      .then((d) =>
        setItems((all) => ({
          ...Object.fromEntries(d.escalations.nodes.map((e) => [e.pollRef, e])),
          ...all,
        })),
      )
      .catch(setError);
    const stopConnected = api.onConnected(() => setLive(true));
    const stop = api.subscribe<{ escalationUpdated: { pollRef: string } }>(
      LIVE,
      {},
      (d) => {
        setLive(true);
        api
          .query<{ escalation: Escalation | null }>(ONE, { pollRef: d.escalationUpdated.pollRef })
          .then((r) => r.escalation && upsert(r.escalation))
          .catch(setError);
      },
      (e) => {
        setLive(false);
        setError(e);
      },
    );
    return () => {
      stopConnected();
      stop();
    };
  }, [api]);

  const all = Object.values(items).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  const pending = all.filter((e) => e.state === 'PENDING' && Date.parse(e.expiresAt) > now);
  const history = all.filter((e) => !pending.includes(e));
  const decide = async (e: Escalation, decision: 'APPROVE' | 'DENY', sign: boolean) => {
    setError(null);
    try {
      const signature =
        sign && api.session ? await signTypedData(api.session.address, e.typedData) : null;
      const r = await api.query<{ decideEscalation: Escalation }>(DECIDE, {
        pollRef: e.pollRef,
        decision,
        signature,
      });
      upsert(r.decideEscalation);
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <section aria-labelledby="escalations-title">
      <h2 id="escalations-title">Escalations</h2>
      <p class="muted">
        {live
          ? 'Live: new escalations appear here as they happen.'
          : 'Connecting to the live feed…'}
      </p>
      <Problem error={error} />
      <h3>Waiting for you</h3>
      {pending.length === 0 && <Empty>Nothing is waiting for your decision.</Empty>}
      <ul class="cards">
        {pending.map((e) => (
          <EscalationCard key={e.pollRef} e={e} now={now} onDecide={decide} />
        ))}
      </ul>
      <h3>History</h3>
      {history.length === 0 && <Empty>No decided escalations yet.</Empty>}
      <ul class="cards">
        {history.map((e) => (
          <EscalationCard key={e.pollRef} e={e} now={now} />
        ))}
      </ul>
    </section>
  );
}

function EscalationCard({
  e,
  now,
  onDecide,
}: {
  e: Escalation;
  now: number;
  onDecide?: (e: Escalation, d: 'APPROVE' | 'DENY', sign: boolean) => void;
}) {
  const asset = e.policy?.limits.asset ?? { symbol: '', decimals: 0 };
  const expired = e.state === 'PENDING' && Date.parse(e.expiresAt) <= now;
  const state = expired ? 'EXPIRED' : e.state;
  const title = `${formatAmount(e.amountAtomic, asset)} to ${shortHex(e.recipient)}`;
  return (
    <li class={`card state-${state.toLowerCase()}`}>
      <article aria-label={`Escalation ${title}`}>
        <h4>{title}</h4>
        <p class="status">
          <strong>{STATE_WORDS[state]}</strong>
          {state === 'PENDING' && <span> · {countdown(Date.parse(e.expiresAt) - now)}</span>}
          {e.resolvedVia && (
            <span>
              {' '}
              · via {e.resolvedVia}
              {e.ownerSigned ? ' (signed)' : ''}
            </span>
          )}
        </p>
        <dl>
          <dt>Item</dt>
          <dd>{e.intent.item?.description ?? '—'}</dd>
          <dt>Agent</dt>
          <dd>
            {e.intent.agentId ?? '—'} via {e.intent.provider ?? '—'}
          </dd>
          <dt>Recipient</dt>
          <dd class="mono">{e.recipient}</dd>
          <dt>Why it asks you</dt>
          <dd>{e.ruleReason}</dd>
          <dt>Policy</dt>
          <dd>{e.policy?.name ?? e.policyId}</dd>
          <dt>Asked</dt>
          <dd>
            <Time iso={e.createdAt} />
          </dd>
        </dl>
        {onDecide && state === 'PENDING' && (
          <div class="actions">
            <button type="button" class="primary" onClick={() => onDecide(e, 'APPROVE', false)}>
              Approve
            </button>
            <button type="button" onClick={() => onDecide(e, 'APPROVE', true)}>
              Approve with wallet signature
            </button>
            <button type="button" class="danger" onClick={() => onDecide(e, 'DENY', false)}>
              Deny
            </button>
          </div>
        )}
      </article>
    </li>
  );
}
