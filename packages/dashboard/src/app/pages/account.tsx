import { useEffect, useRef } from 'preact/hooks';
import type { Overview, RateWindow, WindowName } from '../api.js';
import { formatCount, formatSeconds, planName } from '../format.js';
import { useNow, type Loaded } from '../hooks.js';
import { ErrorNote, Loading, PageTitle } from '../ui.js';

const WINDOW_NAMES: Record<WindowName, string> = {
  minute: 'per minute',
  hour: 'per hour',
  day: 'per IST day',
  'gmp-minute': 'GMP per minute',
  'gmp-day': 'GMP per IST day',
};

export function AccountPage({ overview }: { overview: Loaded<Overview> }) {
  const { data, error, loading, reload, at } = overview;
  // The app read the overview a moment ago on the first load; later visits want fresh windows.
  useEffect(() => {
    if (performance.now() - at > 2000) reload();
  }, []);
  return (
    <>
      <PageTitle>Account</PageTitle>
      {error !== undefined && <ErrorNote error={error} onRetry={reload} />}
      {data === undefined ? (
        error === undefined && <Loading />
      ) : (
        <>
          <section aria-labelledby="account-heading" class="card">
            <h2 id="account-heading">{data.account.name}</h2>
            <dl class="facts">
              <dt>Account id</dt>
              <dd>
                <code>{data.account.id}</code>
              </dd>
              <dt>Plan</dt>
              <dd>{planName(data.account.plan, false)}</dd>
              <dt>GMP add-on</dt>
              <dd>{data.account.gmpAddon ? (data.account.plan === 'pro' ? 'Yes' : 'Yes (it takes effect on the pro plan only)') : 'No'}</dd>
              <dt>Keys</dt>
              <dd>
                <a href="#/keys">{activeKeys(data)} active</a>
              </dd>
            </dl>
          </section>
          <Windows windows={data.windows} at={at} loading={loading} reload={reload} />
        </>
      )}
    </>
  );
}

function activeKeys(data: Overview): number {
  const now = Date.now();
  return data.keys.filter((k) => k.revokedAt === null && (k.expiresAt === null || Date.parse(k.expiresAt) > now)).length;
}

function Windows({ windows, at, loading, reload }: { windows: RateWindow[]; at: number; loading: boolean; reload: () => void }) {
  const now = useNow();
  const elapsed = Math.floor((now - at) / 1000);
  // When a used window's wait runs out, read the windows again (once per wait) to show the room it got back.
  const reloadedFor = useRef(0);
  const due = windows.some((w) => w.reset > 0 && w.reset <= elapsed);
  useEffect(() => {
    if (due && !loading && reloadedFor.current !== at) {
      reloadedFor.current = at;
      reload();
    }
  }, [due, loading, at]);
  return (
    <section aria-labelledby="windows-heading">
      <div class="section-head">
        <h2 id="windows-heading">Rate limits</h2>
        <button type="button" class="button" onClick={() => loading || reload()} aria-disabled={loading}>
          {loading ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
      {windows.length === 0 ? (
        <p>This plan has no rate limits.</p>
      ) : (
        <ul class="windows">
          {windows.map((w) => (
            <WindowRow key={w.name} window={w} wait={Math.max(0, w.reset - elapsed)} />
          ))}
        </ul>
      )}
      <p class="muted small">
        Requests of every key of the account, and of this dashboard's IPO explorer, draw on the same windows. Minute and hour windows slide; IST days start again at 00:00 in India.
      </p>
    </section>
  );
}

function WindowRow({ window: w, wait }: { window: RateWindow; wait: number }) {
  const used = w.quota - w.remaining;
  const share = w.quota > 0 ? Math.min(1, w.remaining / w.quota) : 0;
  return (
    <li class="window">
      <div class="window-head">
        <span class="window-name">{WINDOW_NAMES[w.name]}</span>
        <span>
          <strong>{formatCount(w.remaining)}</strong> of {formatCount(w.quota)} left
        </span>
      </div>
      <div class={`meter${w.remaining === 0 ? ' empty' : ''}`} aria-hidden="true">
        <div style={{ width: `${share * 100}%` }} />
      </div>
      <p class="muted small">
        {used === 0 && wait === 0 ? 'Nothing used' : wait === 0 ? 'Room again now' : `Resets in ${formatCount(wait)} s${wait >= 60 ? ` (${formatSeconds(wait)})` : ''}`}
      </p>
    </li>
  );
}
