// The reviewer console: sign in with a token, then the pages. Each page reads through the typed
// documents of console/gql; see docs/ARCHITECTURE.md, "Console".
import { type FormEvent, StrictMode, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { graphql } from '../gql/index.ts';
import { readToken, requestAs, storeToken } from './client.ts';
import { ActionPage } from './pages/action.tsx';
import { CountsPage } from './pages/counts.tsx';
import { IntegrityPage } from './pages/integrity.tsx';
import { LivePage } from './pages/live.tsx';
import { SearchPage } from './pages/search.tsx';
import { TaskPage } from './pages/task.tsx';
import { TokensPage } from './pages/tokens.tsx';
import { ToolPage } from './pages/tool.tsx';
import { hrefOf, type Place, usePlace } from './router.ts';
import { ErrorBox, Link } from './ui.tsx';

const SignInCheck = graphql(`
  query ConsoleSignIn {
    directoryStats {
      rows
    }
  }
`);

function SignIn({ onSignedIn }: { onSignedIn(): void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const candidate = token.trim().replace(/^Bearer\s+/i, '');
    setBusy(true);
    setError(undefined);
    try {
      await requestAs(candidate, SignInCheck);
      storeToken(candidate);
      setToken('');
      onSignedIn();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="signin">
      <h1>dirledger console</h1>
      <form onSubmit={submit}>
        <label htmlFor="token">Token</label>
        <input id="token" type="password" autoComplete="off" value={token} onChange={(e) => setToken(e.target.value)} placeholder="dl_…" />
        <button type="submit" disabled={busy || !token.trim()}>
          Sign in
        </button>
      </form>
      <p className="hint">The token stays in this tab's session storage and is sent only as the Authorization header.</p>
      <ErrorBox error={error} />
    </main>
  );
}

const pages: [Place['page'], string, string][] = [
  ['search', 'Search', hrefOf.search()],
  ['live', 'Live', hrefOf.live()],
  ['counts', 'Counts', hrefOf.counts()],
  ['tokens', 'Tokens', hrefOf.tokens()],
  ['integrity', 'Integrity', hrefOf.integrity()],
];

function Page({ place }: { place: Place }) {
  switch (place.page) {
    case 'search':
      return <SearchPage />;
    case 'tool':
      return <ToolPage key={place.name} name={place.name} />;
    case 'live':
      return <LivePage />;
    case 'action':
      return <ActionPage key={place.id} id={place.id} />;
    case 'task':
      return <TaskPage key={place.id} id={place.id} />;
    case 'counts':
      return <CountsPage />;
    case 'tokens':
      return <TokensPage />;
    case 'integrity':
      return <IntegrityPage />;
    default:
      return (
        <section>
          <h1>Not a page</h1>
          <p>Nothing lives at {place.path}.</p>
        </section>
      );
  }
}

function App() {
  const [signedIn, setSignedIn] = useState(() => readToken() !== null);
  const place = usePlace();
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  const signOut = () => {
    storeToken(null);
    setSignedIn(false);
  };
  return (
    <>
      <header>
        <nav aria-label="Pages">
          <span className="brand">dirledger</span>
          {pages.map(([page, label, href]) => (
            <Link key={page} href={href} className={place.page === page ? 'current' : undefined}>
              {label}
            </Link>
          ))}
          <button type="button" className="signout" onClick={signOut}>
            Sign out
          </button>
        </nav>
      </header>
      <main>
        <Page place={place} />
      </main>
    </>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
