import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, call, type Ipo, type IpoList, type IpoStatus } from '../api.js';
import { formatCount, formatDay, formatGain, formatIssueSize, formatPercent, formatPriceBand, formatRupees, formatTimes } from '../format.js';
import { useLoad } from '../hooks.js';
import { href, navigate, type Route } from '../route.js';
import { ErrorNote, Loading, PageTitle, TableBox } from '../ui.js';

const STATUSES: ReadonlyArray<{ value: IpoStatus; label: string }> = [
  { value: 'open', label: 'Open' },
  { value: 'upcoming', label: 'Upcoming' },
  { value: 'closed', label: 'Closed' },
  { value: 'listed', label: 'Listed' },
  { value: 'announced', label: 'Announced' },
];
const TYPES = [
  { value: 'EQ', label: 'Mainboard (EQ)' },
  { value: 'SME', label: 'SME' },
  { value: 'DEBT', label: 'Debt' },
] as const;
const LIMITS = ['10', '25', '50', '100'];

/** The list's filters, as the hash query and the API both spell them. */
interface Filters {
  status: string;
  type: string;
  source: string;
  year: string;
  startDate: string;
  endDate: string;
  limit: string;
  page: string;
}

/** The list query the "All IPOs" link of an IPO page goes back to. */
export let lastListHash = '#/ipos';

function filtersOf(query: URLSearchParams): Filters {
  const get = (name: string) => query.get(name) ?? '';
  return {
    status: get('status') || 'open',
    type: get('type'),
    source: get('source'),
    year: get('year'),
    startDate: get('startDate'),
    endDate: get('endDate'),
    limit: get('limit') || '25',
    page: get('page') || '1',
  };
}

function queryOf(f: Filters): Record<string, string> {
  return { ...f };
}

/** The list as loaded: with each IPO's latest GMP snapshot when the plan allows it. */
interface Loaded {
  list: IpoList;
  gmp: boolean;
}

export function IposPage({ route, gmpAllowed }: { route: Route; gmpAllowed: boolean | undefined }) {
  const filters = filtersOf(route.query);
  const search = new URLSearchParams(Object.entries(queryOf(filters)).filter(([, v]) => v !== '')).toString();
  lastListHash = href('/ipos', queryOf(filters));
  const list = useLoad(
    async (signal): Promise<Loaded> => {
      // Wait for the plan: asking for GMP without it would only earn a 403 and a second request.
      if (gmpAllowed === undefined) return new Promise(() => undefined);
      if (gmpAllowed) {
        try {
          return { list: await call<IpoList>(`ipos?${search}&includeGmp=true`, { signal }), gmp: true };
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 'ERR:PLAN')) throw err;
        }
      }
      return { list: await call<IpoList>(`ipos?${search}`, { signal }), gmp: false };
    },
    [search, gmpAllowed],
  );
  return (
    <>
      <PageTitle>IPOs</PageTitle>
      <FilterForm key={search} filters={filters} />
      {list.error !== undefined && <ErrorNote error={list.error} onRetry={list.reload} />}
      {list.data === undefined ? (
        list.error === undefined && <Loading />
      ) : (
        <Results list={list.data.list} gmp={list.data.gmp} filters={filters} loading={list.loading} />
      )}
    </>
  );
}

function FilterForm({ filters }: { filters: Filters }) {
  const [f, setF] = useState(filters);
  const set = (name: keyof Filters) => (event: Event) => {
    const value = (event.currentTarget as HTMLInputElement | HTMLSelectElement).value;
    setF((old) => ({ ...old, [name]: value }));
  };
  const types = f.type === '' ? [] : f.type.split(',');
  const toggleType = (value: string, on: boolean) => {
    const next = TYPES.map((t) => t.value).filter((t) => (t === value ? on : types.includes(t)));
    setF((old) => ({ ...old, type: next.join(',') }));
  };
  const submit = (event: Event) => {
    event.preventDefault();
    navigate('/ipos', queryOf({ ...f, page: '1' }));
  };
  return (
    <form class="form filters" onSubmit={submit} aria-label="Filters">
      <div class="field">
        <label for="f-status">Status</label>
        <select id="f-status" required value={f.status} onChange={set('status')}>
          {STATUSES.map((s) => (
            <option key={s.value} value={s.value}>
              {s.label}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="f-source">Exchange</label>
        <select id="f-source" value={f.source} onChange={set('source')}>
          <option value="">Any</option>
          <option value="nse">NSE</option>
          <option value="bse">BSE</option>
        </select>
      </div>
      <div class="field">
        <label for="f-year">Year opened</label>
        <input id="f-year" inputMode="numeric" pattern="[0-9]{4}" maxLength={4} placeholder="e.g. 2026" value={f.year} onInput={set('year')} aria-describedby="f-year-hint" />
        <span id="f-year-hint" class="sr-only">
          Four digits
        </span>
      </div>
      <div class="field">
        <label for="f-limit">Per page</label>
        <select id="f-limit" value={f.limit} onChange={set('limit')}>
          {(LIMITS.includes(f.limit) ? LIMITS : [f.limit, ...LIMITS]).map((l) => (
            <option key={l} value={l}>
              {l}
            </option>
          ))}
        </select>
      </div>
      <div class="field date">
        <label for="f-start">Opens on or after</label>
        <input id="f-start" type="date" value={f.startDate} onInput={set('startDate')} />
      </div>
      <div class="field date">
        <label for="f-end">Closes on or before</label>
        <input id="f-end" type="date" value={f.endDate} onInput={set('endDate')} />
      </div>
      <fieldset class="field checks">
        <legend>Type</legend>
        {TYPES.map((t) => (
          <label key={t.value} class="check">
            <input type="checkbox" checked={types.includes(t.value)} onChange={(e) => toggleType(t.value, e.currentTarget.checked)} />
            {t.label}
          </label>
        ))}
      </fieldset>
      <div class="form-actions">
        <button type="submit" class="button primary">
          Show IPOs
        </button>
        <a class="button" href="#/ipos">
          Clear filters
        </a>
      </div>
    </form>
  );
}

function Results({ list, gmp, filters, loading }: { list: IpoList; gmp: boolean; filters: Filters; loading: boolean }) {
  const { meta, ipos } = list;
  const page = meta.page;
  const go = (n: number) => navigate('/ipos', queryOf({ ...filters, page: String(n) }));
  return (
    <section aria-labelledby="results-heading" aria-busy={loading}>
      <h2 id="results-heading">
        {formatCount(meta.count)} {meta.count === 1 ? 'IPO' : 'IPOs'}
      </h2>
      {meta.limit < Number(filters.limit) && <p class="muted small">The plan shows at most {meta.limit} per page.</p>}
      {!gmp && <p class="muted small">GMP needs the pro plan with the GMP add-on: this account's list leaves it out.</p>}
      {ipos.length === 0 ? <p>{meta.count === 0 ? 'No IPO matches these filters.' : 'This page is past the last one.'}</p> : <IpoTable ipos={ipos} gmp={gmp} />}
      {meta.totalPages > 1 && (
        <nav class="pager" aria-label="Pages">
          <button type="button" class="button" disabled={page <= 1} onClick={() => go(Math.min(page - 1, meta.totalPages))}>
            Previous<span class="sr-only"> page</span>
          </button>
          <span>
            Page {formatCount(page)} of {formatCount(meta.totalPages)}
          </span>
          <button type="button" class="button" disabled={page >= meta.totalPages} onClick={() => go(page + 1)}>
            Next<span class="sr-only"> page</span>
          </button>
        </nav>
      )}
    </section>
  );
}

/** One column of the IPO table: its heading, whether it holds numbers (right-aligned), and its cell. */
interface Column {
  label: string;
  numeric?: boolean;
  cell: (ipo: Ipo) => ComponentChildren;
}

const dash = '—';
const day = (d: string | null) => (d === null ? dash : <time dateTime={d}>{formatDay(d)}</time>);
const signed = (n: number, text: string) => <span class={n > 0 ? 'up' : n < 0 ? 'down' : undefined}>{text}</span>;

/**
 * The table's columns, in the order Indian IPO pages use: what it is, its state, its price,
 * the grey market's view (GMP in ₹ and as a share of the issue price, the listing price it
 * points to: the API works them out, the page only shows them), the book (times subscribed,
 * all categories together), then the dates and the size.
 */
function columns(gmp: boolean): Column[] {
  const gmpColumns: Column[] = [
    {
      label: 'GMP',
      numeric: true,
      cell: (ipo) => {
        const mean = ipo.gmp?.aggregations.mean ?? null;
        return mean === null ? dash : signed(mean, formatRupees(mean));
      },
    },
    {
      label: 'GMP %',
      numeric: true,
      cell: (ipo) => {
        const pct = ipo.gmp?.gmpPercent ?? null;
        return pct === null ? dash : signed(pct, formatPercent(pct));
      },
    },
    {
      label: 'Est. listing',
      numeric: true,
      cell: (ipo) => {
        const price = ipo.gmp?.estimatedListingPrice ?? null;
        return price === null ? dash : formatRupees(price);
      },
    },
  ];
  return [
    { label: 'Status', cell: (ipo) => <span class={`badge status-${ipo.status}`}>{ipo.status}</span> },
    { label: 'Price band', numeric: true, cell: (ipo) => (ipo.priceRange === null ? dash : formatPriceBand(ipo.priceRange)) },
    ...(gmp ? gmpColumns : []),
    {
      label: 'Subscription',
      numeric: true,
      cell: (ipo) => {
        const total = ipo.subscription?.times.total ?? null;
        return total === null ? dash : formatTimes(total);
      },
    },
    {
      label: 'Listing gain',
      numeric: true,
      cell: (ipo) => {
        if (ipo.status !== 'listed' || ipo.listingGain === null) return dash;
        return signed(Number(ipo.listingGain), formatGain(ipo.listingGain));
      },
    },
    { label: 'Opens', cell: (ipo) => day(ipo.startDate) },
    { label: 'Closes', cell: (ipo) => day(ipo.endDate) },
    { label: 'Listing', cell: (ipo) => day(ipo.listingDate) },
    { label: 'Issue size', numeric: true, cell: (ipo) => (ipo.issueSize === null ? dash : formatIssueSize(ipo.issueSize)) },
  ];
}

/** A table on wide screens; one card per IPO on a phone (styles.css, `table.stack`). */
function IpoTable({ ipos, gmp }: { ipos: Ipo[]; gmp: boolean }) {
  const cols = columns(gmp);
  return (
    <TableBox label="IPOs" cards>
      <table class="stack ipo-table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            {cols.map((c) => (
              <th key={c.label} scope="col" class={c.numeric === true ? 'num' : undefined}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {ipos.map((ipo) => (
            <tr key={ipo.id}>
              <th scope="row">
                <a href={href(`/ipos/${encodeURIComponent(ipo.id)}`)}>{ipo.name}</a>
                <span class="ipo-meta">{[ipo.symbol, ipo.type === 'EQ' ? 'Mainboard' : ipo.type, ipo.exchanges.map((e) => e.toUpperCase()).join(', ')].filter((t) => t !== null && t !== '').join(' · ')}</span>
              </th>
              {cols.map((c) => {
                const content = c.cell(ipo);
                // An empty cell is left out of a phone's card (styles.css): "Listing gain —" on an open IPO says nothing.
                const cls = [c.numeric === true ? 'num' : '', content === dash ? 'empty' : ''].filter((x) => x !== '').join(' ');
                return (
                  <td key={c.label} data-label={c.label} class={cls === '' ? undefined : cls}>
                    {content}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}
