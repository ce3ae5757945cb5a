import { useEffect, useRef, useState } from 'preact/hooks';
import { call, onSignedOut, type Overview } from './api.js';
import { planName } from './format.js';
import { useLoad, type Loaded } from './hooks.js';
import { AccountPage } from './pages/account.js';
import { IpoPage } from './pages/ipo.js';
import { IposPage } from './pages/ipos.js';
import { KeysPage } from './pages/keys.js';
import { UsagePage } from './pages/usage.js';
import { DeliveriesPage } from './pages/deliveries.js';
import { WebhooksPage } from './pages/webhooks.js';
import { useRoute, type Page, type Route } from './route.js';
import { PageTitle } from './ui.js';

const NAV: ReadonlyArray<{ page: Page; href: string; label: string }> = [
  { page: 'account', href: '#/', label: 'Account' },
  { page: 'keys', href: '#/keys', label: 'Keys' },
  { page: 'usage', href: '#/usage', label: 'Usage' },
  { page: 'ipos', href: '#/ipos', label: 'IPOs' },
  { page: 'webhooks', href: '#/webhooks', label: 'Webhooks' },
];

const TITLES: Record<Page, string> = { account: 'Account', keys: 'API keys', usage: 'Usage', ipos: 'IPOs', ipo: 'IPO', webhooks: 'Webhooks', webhook: 'Webhook deliveries', missing: 'Page not found' };

export function App() {
  const route = useRoute();
  const [signedOut, setSignedOut] = useState(false);
  useEffect(() => onSignedOut(() => setSignedOut(true)), []);
  // Read once for the header and the plan (the IPO page asks for GMP only when the plan has it);
  // the account page reloads it for fresh windows. It draws on no rate-limit window.
  const overview = useLoad((signal) => call<Overview>('', { signal }), []);
  usePageChange(route);

  if (signedOut) return <SignedOut />;
  const account = overview.data?.account;
  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(event) => {
          // The fragment holds the route: move focus without touching it.
          event.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <div class="wrap bar">
          <a class="brand" href="#/">
            ipokit <span class="muted">dashboard</span>
          </a>
          {account !== undefined && (
            <p class="who">
              {account.name} <span class="badge">{planName(account.plan, account.gmpAddon)}</span>
            </p>
          )}
          <nav aria-label="Dashboard">
            <ul class="nav">
              {NAV.map((item) => (
                <li key={item.page}>
                  <a href={item.href} aria-current={isCurrent(item.page, route.page) ? 'page' : undefined}>
                    {item.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        </div>
      </header>
      <main id="main" class="wrap" tabIndex={-1}>
        <CurrentPage route={route} overview={overview} />
      </main>
    </>
  );
}

function CurrentPage({ route, overview }: { route: Route; overview: Loaded<Overview> }) {
  const account = overview.data?.account;
  switch (route.page) {
    case 'account':
      return <AccountPage overview={overview} />;
    case 'keys':
      return <KeysPage plan={account?.plan} />;
    case 'usage':
      return <UsagePage route={route} keys={overview.data?.keys ?? []} />;
    case 'ipos':
      return <IposPage route={route} gmpAllowed={gmpAllowed(overview)} />;
    case 'ipo':
      return <IpoPage key={route.id} route={route} gmpAllowed={gmpAllowed(overview)} />;
    case 'webhooks':
      return <WebhooksPage plan={account?.plan} />;
    case 'webhook':
      return <DeliveriesPage key={route.id} id={route.id} deliveryId={route.query.get('delivery')} />;
    case 'missing':
      return (
        <>
          <PageTitle>Page not found</PageTitle>
          <p>
            This dashboard has no such page. <a href="#/">Go to the account page</a>.
          </p>
        </>
      );
  }
}

/** Focus and the document title follow the page, as a full page load would move them. */
function usePageChange(route: Route): void {
  const first = useRef(true);
  useEffect(() => {
    document.title = `${TITLES[route.page]} · ipokit dashboard`;
    if (first.current) {
      first.current = false;
      return;
    }
    document.getElementById('page-title')?.focus();
  }, [route.page, route.id]);
}

/** Whether the plan includes GMP; undefined until the overview has answered (false if it failed). */
function gmpAllowed(overview: Loaded<Overview>): boolean | undefined {
  const account = overview.data?.account;
  if (account !== undefined) return account.plan === 'pro' && account.gmpAddon;
  return overview.error === undefined ? undefined : false;
}

function isCurrent(item: Page, page: Page): boolean {
  return item === page || (item === 'ipos' && page === 'ipo') || (item === 'webhooks' && page === 'webhook');
}

function SignedOut() {
  useEffect(() => {
    document.title = 'Not signed in · ipokit dashboard';
  }, []);
  return (
    <>
      <header class="top">
        <div class="wrap bar">
          <span class="brand">
            ipokit <span class="muted">dashboard</span>
          </span>
        </div>
      </header>
      <main id="main" class="wrap signed-out" tabIndex={-1}>
        <h1>You are not signed in</h1>
        <p>This dashboard shows your ipokit account, its API keys and its usage once you are signed in to the site that serves it.</p>
        <p>Sign in there, then reload this page.</p>
        <button type="button" class="button primary" onClick={() => location.reload()}>
          Reload
        </button>
      </main>
    </>
  );
}
