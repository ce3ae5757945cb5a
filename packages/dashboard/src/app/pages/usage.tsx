import { useState } from 'preact/hooks';
import { call, type Key, type UsageRoute, type UsageRow } from '../api.js';
import { addDays, daysBetween, formatCount, formatDay, formatShortDay, isDay, todayInIst } from '../format.js';
import { useLoad } from '../hooks.js';
import { navigate, type Route } from '../route.js';
import { ErrorNote, Loading, PageTitle, TableBox } from '../ui.js';
import { dayTotal, UsageChart, type DayUsage } from '../usage-chart.js';

const ROUTE_NAMES: Record<UsageRoute, string> = { list: 'List', ipo: 'One IPO', gmp: 'GMP', subscription: 'Subscription' };
const ROUTES: readonly UsageRoute[] = ['list', 'ipo', 'gmp', 'subscription'];

export function UsagePage({ route, keys }: { route: Route; keys: Key[] }) {
  const today = todayInIst();
  const fromQuery = route.query.get('from') ?? '';
  const toQuery = route.query.get('to') ?? '';
  const to = isDay(toQuery) ? toQuery : today;
  const from = isDay(fromQuery) ? fromQuery : addDays(to, -29);
  const usage = useLoad((signal) => call<{ usage: UsageRow[] }>(`usage?from=${from}&to=${to}`, { signal }), [from, to]);
  const rows = usage.data?.usage ?? [];
  const days = perDay(from, to, rows);
  return (
    <>
      <PageTitle>Usage</PageTitle>
      <p class="lead">Requests per IST day and route, for every key of the account and for this dashboard's IPO explorer.</p>
      <RangeForm key={`${from}/${to}`} from={from} to={to} />
      {usage.error !== undefined && <ErrorNote error={usage.error} onRetry={usage.reload} />}
      {usage.data === undefined ? (
        usage.error === undefined && <Loading />
      ) : (
        <>
          <section aria-labelledby="chart-heading" class="card">
            <h2 id="chart-heading">
              Requests per day, {formatDay(from)} to {formatDay(to)}
            </h2>
            <UsageChart days={days} describedBy="usage-table-caption" />
          </section>
          <section aria-labelledby="usage-table-caption">
            <DayTable days={days} />
          </section>
          <KeyTotals rows={rows} keys={keys} />
        </>
      )}
    </>
  );
}

function RangeForm({ from, to }: { from: string; to: string }) {
  const [start, setStart] = useState(from);
  const [end, setEnd] = useState(to);
  const [problem, setProblem] = useState('');
  const submit = (event: Event) => {
    event.preventDefault();
    if (!isDay(start) || !isDay(end)) return setProblem('Give both days as dates.');
    if (start > end) return setProblem('The first day must not be after the last day.');
    if (daysBetween(start, end).length > 366) return setProblem('Pick at most 366 days.');
    setProblem('');
    navigate('/usage', { from: start, to: end });
  };
  return (
    <form class="form inline" onSubmit={submit} noValidate aria-label="Days to show">
      <div class="field">
        <label for="usage-from">From</label>
        <input id="usage-from" type="date" value={start} max={end} onInput={(e) => setStart(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="usage-to">To</label>
        <input id="usage-to" type="date" value={end} min={start} onInput={(e) => setEnd(e.currentTarget.value)} />
      </div>
      <div class="form-actions">
        <button type="submit" class="button primary">
          Show
        </button>
      </div>
      {problem !== '' && (
        <p class="note error" role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}

function perDay(from: string, to: string, rows: UsageRow[]): DayUsage[] {
  const byDay = new Map<string, DayUsage>(daysBetween(from, to).map((day) => [day, { day, list: 0, ipo: 0, gmp: 0, subscription: 0, refused: 0 }]));
  for (const row of rows) {
    const d = byDay.get(row.day);
    if (d === undefined) continue;
    d[row.route] += row.admitted;
    d.refused += row.refused;
  }
  return [...byDay.values()];
}

function DayTable({ days }: { days: DayUsage[] }) {
  const used = days.filter((d) => dayTotal(d) > 0);
  // Short days ("Nov 3") keep the table narrow on a phone; the year is in the chart's heading.
  const oneYear = days.length > 0 && days[0]!.day.slice(0, 4) === days[days.length - 1]!.day.slice(0, 4);
  const total = used.reduce(
    (t, d) => ({ day: 'total', list: t.list + d.list, ipo: t.ipo + d.ipo, gmp: t.gmp + d.gmp, subscription: t.subscription + d.subscription, refused: t.refused + d.refused }),
    { day: 'total', list: 0, ipo: 0, gmp: 0, subscription: 0, refused: 0 },
  );
  return (
    <TableBox label="Requests per day">
      <table class="numbers">
        <caption id="usage-table-caption">
          Admitted requests per route (the IPO list, one IPO, the GMP series, the subscription series) and refused requests (429), per IST day
          {used.length < days.length && '; days without requests are left out'}
        </caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            {ROUTES.map((r) => (
              <th scope="col" key={r}>
                {ROUTE_NAMES[r]}
              </th>
            ))}
            <th scope="col">Refused</th>
            <th scope="col">Total</th>
          </tr>
        </thead>
        <tbody>
          {used.length === 0 && (
            <tr>
              <td colSpan={7} class="none">
                No requests on these days.
              </td>
            </tr>
          )}
          {used.map((d) => (
            <DayRow key={d.day} d={d} label={oneYear ? formatShortDay(d.day) : formatDay(d.day)} />
          ))}
        </tbody>
        {used.length > 1 && (
          <tfoot>
            <DayRow d={total} label="Total" />
          </tfoot>
        )}
      </table>
    </TableBox>
  );
}

function DayRow({ d, label }: { d: DayUsage; label: string }) {
  return (
    <tr>
      <th scope="row">{d.day === 'total' ? label : <time dateTime={d.day}>{label}</time>}</th>
      <td>{formatCount(d.list)}</td>
      <td>{formatCount(d.ipo)}</td>
      <td>{formatCount(d.gmp)}</td>
      <td>{formatCount(d.subscription)}</td>
      <td>{formatCount(d.refused)}</td>
      <td>{formatCount(dayTotal(d))}</td>
    </tr>
  );
}

function KeyTotals({ rows, keys }: { rows: UsageRow[]; keys: Key[] }) {
  const totals = new Map<string, { admitted: number; refused: number }>();
  for (const row of rows) {
    const t = totals.get(row.keyId) ?? { admitted: 0, refused: 0 };
    t.admitted += row.admitted;
    t.refused += row.refused;
    totals.set(row.keyId, t);
  }
  if (totals.size === 0) return null;
  const names = new Map(keys.map((k) => [k.id, `${k.label} (${k.prefix}…)`]));
  return (
    <section aria-labelledby="by-key-heading">
      <h2 id="by-key-heading">By key</h2>
      <TableBox label="Requests by key">
        <table class="numbers">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Admitted</th>
              <th scope="col">Refused</th>
            </tr>
          </thead>
          <tbody>
            {[...totals].map(([keyId, t]) => (
              <tr key={keyId}>
                <th scope="row">{keyId === 'dashboard' ? 'This dashboard' : (names.get(keyId) ?? keyId)}</th>
                <td>{formatCount(t.admitted)}</td>
                <td>{formatCount(t.refused)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
    </section>
  );
}
