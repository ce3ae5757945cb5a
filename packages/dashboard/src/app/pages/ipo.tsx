import { useState } from 'preact/hooks';
import { ApiError, call, GMP_FIELDS, GMP_INTERVALS, SUBSCRIPTION_CATEGORIES, type GmpSeries, type GmpSnapshot, type Ipo, type SubscriptionSeries, type SubscriptionSnapshot } from '../api.js';
import { formatCount, formatDay, formatGain, formatInstant, formatIssueSize, formatPercent, formatPriceBand, formatRupees, formatTimes, intervalName, isDay, safeUrl } from '../format.js';
import { GmpChart } from '../gmp-chart.js';
import { CATEGORY_LABELS, SubscriptionChart } from '../subscription-chart.js';
import { useLoad } from '../hooks.js';
import { navigate, type Route } from '../route.js';
import { ErrorNote, Loading, PageTitle, TableBox, Time } from '../ui.js';
import { lastListHash } from './ipos.js';

/** What the page knows of the latest GMP snapshot: shown, or left out because of the plan. */
type SnapshotAccess = 'shown' | 'plan';

const NOT_IN_PLAN = 'The plan of this account does not include GMP: it needs the pro plan with the GMP add-on.';

export function IpoPage({ route, gmpAllowed }: { route: Route; gmpAllowed: boolean | undefined }) {
  const id = route.id;
  const path = `ipos/${encodeURIComponent(id)}`;
  const one = useLoad(
    async (signal): Promise<{ ipo: Ipo; snapshot: SnapshotAccess }> => {
      // Wait for the plan: asking for GMP without it would only earn a 403 and a second request.
      if (gmpAllowed === undefined) return new Promise(() => undefined);
      if (gmpAllowed) {
        try {
          return { ipo: (await call<{ ipo: Ipo }>(`${path}?includeGmp=true`, { signal })).ipo, snapshot: 'shown' };
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 'ERR:PLAN')) throw err;
        }
      }
      return { ipo: (await call<{ ipo: Ipo }>(path, { signal })).ipo, snapshot: 'plan' };
    },
    [path, gmpAllowed],
  );
  const ipo = one.data?.ipo;
  return (
    <>
      <p class="crumb">
        <a href={lastListHash}>← All IPOs</a>
      </p>
      <PageTitle>{ipo?.name ?? id}</PageTitle>
      {one.error !== undefined && <ErrorNote error={one.error} onRetry={one.reload} />}
      {ipo === undefined ? (
        one.error === undefined && <Loading />
      ) : (
        <>
          <p class="tags">
            <span class={`badge status-${ipo.status}`}>{ipo.status}</span> <span class="badge">{ipo.type}</span>
            {ipo.symbol !== null && <span class="badge mono">{ipo.symbol}</span>}
          </p>
          <div class="columns">
            <Details ipo={ipo} />
            <Snapshot access={one.data?.snapshot ?? 'plan'} snapshot={ipo.gmp} />
          </div>
          {ipo.subscription === null ? <NoSubscription ipo={ipo} /> : <SubscriptionSection id={ipo.id} latest={ipo.subscription} />}
          <ListingDay ipo={ipo} />
          {/* Asked for once the IPO is known to exist: a 404 would waste a GMP request. */}
          <SeriesSection id={ipo.id} route={route} />
          <Schedule ipo={ipo} />
          <About ipo={ipo} />
        </>
      )}
    </>
  );
}

function Details({ ipo }: { ipo: Ipo }) {
  const day = (d: string | null) => (d === null ? '—' : <time dateTime={d}>{formatDay(d)}</time>);
  const text = (v: string | null) => v ?? '—';
  return (
    <section aria-labelledby="details-heading" class="card">
      <h2 id="details-heading">Details</h2>
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{ipo.id}</code>
        </dd>
        <dt>Symbol</dt>
        <dd>{text(ipo.symbol)}</dd>
        <dt>Slug</dt>
        <dd>
          <code>{ipo.slug}</code>
        </dd>
        <dt>Type</dt>
        <dd>{ipo.type === 'EQ' ? 'Mainboard (EQ)' : ipo.type}</dd>
        <dt>Exchanges</dt>
        <dd>{ipo.exchanges.map((e) => e.toUpperCase()).join(', ') || '—'}</dd>
        <dt>Status</dt>
        <dd>{ipo.status}</dd>
        <dt>Opens</dt>
        <dd>{day(ipo.startDate)}</dd>
        <dt>Closes</dt>
        <dd>{day(ipo.endDate)}</dd>
        <dt>Listing</dt>
        <dd>{day(ipo.listingDate)}</dd>
        <dt>Price band</dt>
        <dd class="num">{ipo.priceRange === null ? '—' : formatPriceBand(ipo.priceRange)}</dd>
        <dt>Lot</dt>
        <dd class="num">{ipo.minQty === null ? '—' : `${formatCount(ipo.minQty)} shares`}</dd>
        <dt>Minimum amount</dt>
        <dd class="num">{ipo.minAmount === null ? '—' : formatRupees(ipo.minAmount)}</dd>
        <dt>Issue size</dt>
        <dd class="num">{ipo.issueSize === null ? '—' : formatIssueSize(ipo.issueSize)}</dd>
        <dt>Listing gain</dt>
        <dd class="num">{ipo.listingGain === null ? '—' : formatGain(ipo.listingGain)}</dd>
        <dt>Sector</dt>
        <dd>{text(ipo.sector)}</dd>
        <dt>Registrar</dt>
        <dd>{text(ipo.registrar)}</dd>
        <dt>Lead {ipo.leadManagers.length === 1 ? 'manager' : 'managers'}</dt>
        <dd>
          {ipo.leadManagers.length === 0 ? (
            '—'
          ) : (
            <ul class="plain">
              {ipo.leadManagers.map((m, i) => (
                <li key={i}>{m}</li>
              ))}
            </ul>
          )}
        </dd>
        {(ipo.type === 'SME' || ipo.marketMaker !== null) && (
          <>
            <dt>Market maker</dt>
            <dd>{text(ipo.marketMaker)}</dd>
          </>
        )}
      </dl>
    </section>
  );
}

/** The other figures of the snapshot, under the one the page leads with (the mean, as the IPO list shows it). */
const OTHER_FIGURES = [
  { field: 'median', label: 'Median' },
  { field: 'min', label: 'Lowest' },
  { field: 'max', label: 'Highest' },
  { field: 'mode', label: 'Mode' },
] as const;

/**
 * The latest GMP: one figure (the mean of the sources' prices at the latest snapshot, the list's
 * GMP column), what it means for the issue (its share of the issue price and the listing price
 * it points to, both worked out by the API from that mean), its time in IST, then how the
 * sources spread.
 */
function Snapshot({ access, snapshot }: { access: SnapshotAccess; snapshot: GmpSnapshot | null | undefined }) {
  const mean = snapshot?.aggregations.mean ?? null;
  return (
    <section aria-labelledby="snapshot-heading" class="card">
      <h2 id="snapshot-heading">Latest GMP</h2>
      {access === 'plan' ? (
        <p>{NOT_IN_PLAN}</p>
      ) : snapshot === null || snapshot === undefined ? (
        <p>No GMP has been reported for this IPO yet.</p>
      ) : (
        <>
          <p class="headline">
            <strong class={mean === null ? 'figure' : mean > 0 ? 'figure up' : mean < 0 ? 'figure down' : 'figure'}>{mean === null ? '—' : formatRupees(mean)}</strong>{' '}
            <span class="muted">
              mean of {snapshot.sources.length} {snapshot.sources.length === 1 ? 'source' : 'sources'}
            </span>
          </p>
          {(snapshot.gmpPercent !== null || snapshot.estimatedListingPrice !== null) && (
            <p class="gmp-derived">
              {snapshot.gmpPercent !== null && (
                <span>
                  <strong class={snapshot.gmpPercent > 0 ? 'up' : snapshot.gmpPercent < 0 ? 'down' : undefined}>{formatPercent(snapshot.gmpPercent)}</strong> of the issue price
                </span>
              )}
              {snapshot.estimatedListingPrice !== null && (
                <span>
                  Est. listing <strong>{formatRupees(snapshot.estimatedListingPrice)}</strong>
                </span>
              )}
            </p>
          )}
          <p class="muted small">
            As of <Time iso={snapshot.lastUpdatedAt} />
          </p>
          <dl class="facts compact">
            {OTHER_FIGURES.map(({ field, label }) => {
              const value = snapshot.aggregations[field];
              return (
                <div key={field} class="fact">
                  <dt>{label}</dt>
                  <dd class="num">{value === null ? '—' : formatRupees(value)}</dd>
                </div>
              );
            })}
          </dl>
          {snapshot.sources.length > 0 && (
            <TableBox label="GMP sources">
              <table class="numbers">
                <caption>The sources of the latest snapshot</caption>
                <thead>
                  <tr>
                    <th scope="col">Source</th>
                    <th scope="col">GMP</th>
                  </tr>
                </thead>
                <tbody>
                  {snapshot.sources.map((s) => (
                    <tr key={s.name}>
                      <th scope="row">{s.name}</th>
                      <td>{formatRupees(s.gmpPrice)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
          )}
        </>
      )}
    </section>
  );
}

/** Before the first reading: what the reader can expect. */
function NoSubscription({ ipo }: { ipo: Ipo }) {
  return (
    <section aria-labelledby="subscription-heading" class="card">
      <h2 id="subscription-heading">Subscription</h2>
      <p>
        {ipo.status === 'upcoming' && ipo.startDate !== null ? (
          <>
            Bidding opens on <time dateTime={ipo.startDate}>{formatDay(ipo.startDate)}</time>: the exchanges' figures show here from the first day.
          </>
        ) : (
          'No subscription figures have been reported for this IPO.'
        )}
      </p>
    </section>
  );
}

/**
 * The book as the exchanges report it: the latest times subscribed (all categories together,
 * then each), and every reading so far as a chart by category.
 */
function SubscriptionSection({ id, latest }: { id: string; latest: SubscriptionSnapshot }) {
  const series = useLoad((signal) => call<SubscriptionSeries>(`ipos/${encodeURIComponent(id)}/subscription`, { signal }), [id]);
  const categories = SUBSCRIPTION_CATEGORIES.filter((c) => c !== 'total' && latest.times[c] !== null);
  const total = latest.times.total;
  return (
    <section aria-labelledby="subscription-heading" class="card">
      <h2 id="subscription-heading">Subscription</h2>
      <p class="headline">
        <strong class="figure">{total === null ? '—' : formatTimes(total)}</strong> <span class="muted">subscribed in all</span>
      </p>
      <p class="muted small">
        As of <Time iso={latest.asOf} />
      </p>
      {categories.length > 0 && (
        <TableBox label="Subscription by category">
          <table class="numbers subscription">
            <caption>Times subscribed, by investor category</caption>
            <thead>
              <tr>
                <th scope="col">Category</th>
                <th scope="col">Times</th>
              </tr>
            </thead>
            <tbody>
              {categories.map((c) => {
                const v = latest.times[c];
                return (
                  <tr key={c}>
                    <th scope="row">{CATEGORY_LABELS[c]}</th>
                    <td>{v === null ? '—' : formatTimes(v)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableBox>
      )}
      <h3>Day by day</h3>
      {series.error !== undefined && <ErrorNote error={series.error} onRetry={series.reload} />}
      {series.loading && <Loading label="Loading the readings…" />}
      {series.data !== undefined && series.error === undefined && (series.data.series.length === 0 ? <p>No readings yet.</p> : <SubscriptionChart series={series.data} />)}
    </section>
  );
}

/** The listing day's prices on each exchange, once the IPO has listed. */
function ListingDay({ ipo }: { ipo: Ipo }) {
  if (ipo.listingPrices.length === 0) return null;
  return (
    <section aria-labelledby="listing-heading" class="card">
      <h2 id="listing-heading">Listing day</h2>
      <p class="muted small">
        {ipo.listingDate !== null && (
          <>
            <time dateTime={ipo.listingDate}>{formatDay(ipo.listingDate)}</time>
            {ipo.listingGain !== null && ' · '}
          </>
        )}
        {ipo.listingGain !== null && <>Listing gain {formatGain(ipo.listingGain)} on the issue price</>}
      </p>
      <TableBox label="Listing-day prices">
        <table class="numbers listing-prices">
          <caption>Prices on the listing day, by exchange</caption>
          <thead>
            <tr>
              <th scope="col">Exchange</th>
              <th scope="col">Open</th>
              <th scope="col">High</th>
              <th scope="col">Low</th>
              <th scope="col">Close</th>
            </tr>
          </thead>
          <tbody>
            {ipo.listingPrices.map((p) => (
              <tr key={p.exchange}>
                <th scope="row">{p.exchange.toUpperCase()}</th>
                <td>{formatRupees(p.open)}</td>
                <td>{formatRupees(p.high)}</td>
                <td>{formatRupees(p.low)}</td>
                <td>{formatRupees(p.close)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
    </section>
  );
}

function Schedule({ ipo }: { ipo: Ipo }) {
  if (ipo.schedule.length === 0) return null;
  return (
    <section aria-labelledby="schedule-heading">
      <h2 id="schedule-heading">Schedule</h2>
      <ol class="schedule">
        {ipo.schedule.map((e, i) => (
          <li key={i}>
            <time dateTime={e.date}>{formatDay(e.date)}</time> <span>{e.event}</span>
          </li>
        ))}
      </ol>
    </section>
  );
}

function About({ ipo }: { ipo: Ipo }) {
  const links = [
    { label: 'IPO information', url: safeUrl(ipo.infoUrl) },
    { label: 'NSE issue information', url: safeUrl(ipo.nseInfoUrl) },
    { label: 'Prospectus', url: safeUrl(ipo.prospectusUrl) },
    ...ipo.mediaCoverageLinks.map((url, i) => ({ label: `Media coverage ${i + 1}`, url: safeUrl(url) })),
  ].filter((l): l is { label: string; url: string } => l.url !== null);
  if (ipo.about === null && ipo.strengths.length === 0 && ipo.risks.length === 0 && links.length === 0) return null;
  return (
    <section aria-labelledby="about-heading">
      <h2 id="about-heading">About</h2>
      {ipo.about !== null && <p class="prose">{ipo.about}</p>}
      <div class="columns">
        <List title="Strengths" items={ipo.strengths} />
        <List title="Risks" items={ipo.risks} />
      </div>
      {links.length > 0 && (
        <>
          <h3>Links</h3>
          <ul>
            {links.map((l) => (
              <li key={l.url}>
                <a href={l.url} rel="noopener noreferrer" target="_blank">
                  {l.label}
                  <span class="sr-only"> (opens in a new tab)</span>
                </a>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function List({ title, items }: { title: string; items: string[] }) {
  if (items.length === 0) return null;
  return (
    <div>
      <h3>{title}</h3>
      <ul>
        {items.map((item, i) => (
          <li key={i}>{item}</li>
        ))}
      </ul>
    </div>
  );
}

/** The series' parameters, from the hash query (so that a link shows the same chart). */
interface SeriesQuery {
  interval: string;
  field: string;
  from: string;
  to: string;
}

function SeriesSection({ id, route }: { id: string; route: Route }) {
  const q: SeriesQuery = {
    interval: route.query.get('interval') ?? 'daily',
    field: route.query.get('field') ?? 'mean',
    from: route.query.get('from') ?? '',
    to: route.query.get('to') ?? '',
  };
  const params = new URLSearchParams(Object.entries(q).filter(([, v]) => v !== '')).toString();
  const series = useLoad((signal) => call<GmpSeries>(`ipos/${encodeURIComponent(id)}/gmp?${params}`, { signal }), [id, params]);
  const data = series.data;
  return (
    <section aria-labelledby="series-heading" class="card">
      <h2 id="series-heading">GMP over time</h2>
      <SeriesForm key={params} routeId={route.id} query={q} />
      {series.error !== undefined &&
        (series.error.code === 'ERR:PLAN' ? <p class="note">{NOT_IN_PLAN}</p> : <ErrorNote error={series.error} onRetry={series.reload} />)}
      {series.loading && <Loading label="Loading the series…" />}
      {data !== undefined && series.error === undefined && (
        <>
          <p class="muted small" aria-live="polite">
            {formatCount(data.meta.count)} {data.meta.count === 1 ? 'point' : 'points'} of the {data.field}, one per {intervalName(data.interval)}, from {formatInstant(data.meta.from)} to{' '}
            {formatInstant(data.meta.to)}.
          </p>
          {data.series.length === 0 ? <p>No GMP was reported in this range: pick an earlier or longer range.</p> : <GmpChart series={data} />}
        </>
      )}
    </section>
  );
}

function SeriesForm({ routeId, query }: { routeId: string; query: SeriesQuery }) {
  const [q, setQ] = useState(query);
  const [problem, setProblem] = useState('');
  const set = (name: keyof SeriesQuery) => (event: Event) => {
    const value = (event.currentTarget as HTMLInputElement | HTMLSelectElement).value;
    setQ((old) => ({ ...old, [name]: value }));
  };
  const submit = (event: Event) => {
    event.preventDefault();
    if ((q.from !== '' && !isDay(q.from)) || (q.to !== '' && !isDay(q.to))) return setProblem('Give the days as dates, or leave them empty.');
    if (q.from !== '' && q.to !== '' && q.from > q.to) return setProblem('The first day must not be after the last day.');
    setProblem('');
    navigate(`/ipos/${encodeURIComponent(routeId)}`, { ...q });
  };
  return (
    <form class="form inline" onSubmit={submit} noValidate aria-label="Series">
      <div class="field">
        <label for="gmp-interval">Interval</label>
        <select id="gmp-interval" value={q.interval} onChange={set('interval')}>
          {GMP_INTERVALS.map((i) => (
            <option key={i} value={i}>
              {i}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="gmp-field">Value</label>
        <select id="gmp-field" value={q.field} onChange={set('field')}>
          {GMP_FIELDS.map((f) => (
            <option key={f} value={f}>
              {f}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="gmp-from">From</label>
        <input id="gmp-from" type="date" value={q.from} onInput={set('from')} aria-describedby="gmp-range-hint" />
      </div>
      <div class="field">
        <label for="gmp-to">To</label>
        <input id="gmp-to" type="date" value={q.to} onInput={set('to')} aria-describedby="gmp-range-hint" />
      </div>
      <div class="form-actions">
        <button type="submit" class="button primary">
          Show
        </button>
      </div>
      <p id="gmp-range-hint" class="hint wide">
        Days in UTC, as the API counts them, both included; empty: the last 30 days. The chart's times are IST.
      </p>
      {problem !== '' && (
        <p class="note error" role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}
