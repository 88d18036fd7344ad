// The owner and analyst dashboard: sign in with the wallet (SIWE), then escalations, policies,
// activity and reconciliation over the public GraphQL API. The bearer lives in memory only; when
// the session ends everything shown is dropped and the page asks to sign in again.
import { type ComponentChildren, render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Activity } from './activity';
import { Analyst } from './analyst';
import { Api, type Session } from './api';
import { Escalations } from './escalations';
import { Policies, usePolicies } from './policies';
import { ReceiptPage } from './receipt';
import { Problem } from './ui';
import { hasWallet, signIn } from './wallet';
import './styles.css';

const VIEWS = [
  ['escalations', 'Escalations'],
  ['policies', 'Policies'],
  ['activity', 'Activity'],
  ['analyst', 'Reconciliation'],
] as const;

function useRoute(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const listener = () => setHash(location.hash);
    addEventListener('hashchange', listener);
    return () => removeEventListener('hashchange', listener);
  }, []);
  return hash.replace(/^#\/?/, '') || 'escalations';
}

function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [expired, setExpired] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const route = useRoute();
  const api = useMemo(
    () =>
      new Api(session, () => {
        setSession(null);
        setExpired(true);
      }),
    [session],
  );
  useEffect(() => () => api.close(), [api]);
  useEffect(() => {
    if (!session) return;
    const timer = setTimeout(
      () => {
        setSession(null);
        setExpired(true);
      },
      Math.max(0, session.expiresAtMs - Date.now()),
    );
    return () => clearTimeout(timer);
  }, [session]);

  const connect = async () => {
    setError(null);
    setBusy(true);
    try {
      setSession(await signIn());
      setExpired(false);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  if (route.startsWith('receipt/'))
    return (
      <Shell session={session} onSignOut={() => setSession(null)}>
        <ReceiptPage api={api} intentId={decodeURIComponent(route.slice(8))} />
      </Shell>
    );

  return (
    <Shell
      session={session}
      onSignOut={() => {
        setSession(null);
        setExpired(false);
      }}
    >
      {!session ? (
        <section aria-labelledby="signin-title" class="signin">
          <h2 id="signin-title">Sign in</h2>
          {expired && (
            <p role="alert">Your session has ended. Sign in again to see current data.</p>
          )}
          <p>
            Sign in with the wallet that owns your policies. The wallet asks you to sign a message;
            nothing is paid.
          </p>
          {!hasWallet() && <p role="alert">No wallet found in this browser.</p>}
          <button type="button" class="primary" onClick={connect} disabled={busy}>
            Sign in with wallet
          </button>
          <Problem error={error} />
        </section>
      ) : (
        <SignedIn api={api} route={route} />
      )}
    </Shell>
  );
}

function Shell({
  session,
  onSignOut,
  children,
}: {
  session: Session | null;
  onSignOut: () => void;
  children: ComponentChildren;
}) {
  return (
    <>
      <header>
        <h1>Spend-Control</h1>
        {session && (
          <nav aria-label="Views">
            {VIEWS.map(([id, label]) => (
              <a key={id} href={`#/${id}`}>
                {label}
              </a>
            ))}
          </nav>
        )}
        {session && (
          <p class="who">
            Signed in as{' '}
            <span class="mono" title={session.address}>
              {session.address.slice(0, 8)}…
            </span>{' '}
            <button type="button" onClick={onSignOut}>
              Sign out
            </button>
          </p>
        )}
      </header>
      <main>{children}</main>
    </>
  );
}

function SignedIn({ api, route }: { api: Api; route: string }) {
  const [policies, error] = usePolicies(api);
  const [chosen, setChosen] = useState<string>('');
  if (route === 'escalations') return <Escalations api={api} />;
  if (route === 'policies') return <Policies api={api} />;
  const policy = policies?.find((p) => p.id === chosen) ?? policies?.[0];
  return (
    <>
      <Problem error={error} />
      {policies && policies.length > 1 && (
        <p>
          <label for="policy-choice">Policy</label>{' '}
          <select
            id="policy-choice"
            value={policy?.id}
            onChange={(e) => setChosen((e.target as HTMLSelectElement).value)}
          >
            {policies.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </p>
      )}
      {policies?.length === 0 && <p class="empty">You own no policies yet.</p>}
      {policy && route === 'activity' && <Activity api={api} policy={policy} />}
      {policy && route === 'analyst' && <Analyst api={api} policy={policy} />}
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
