/**
 * The subscription of an issue by investor category over its bidding days, as a uPlot line
 * chart: one line per category that has a figure (the issue type decides which: SME issues
 * have no bNII/sNII, debt issues little but retail and total), `total` drawn thickest. The
 * exchanges publish a few readings a day, so every reading is drawn as a point; readings on
 * different days in India are not joined (a null is put between them), so that a night does
 * not read as a climb. The time axis is India's, as on the GMP chart.
 * For the browser tests the box carries the API's points' count (`data-points`), the drawn
 * categories (`data-series`), the nulls put in (`data-gaps`), the time axis' labels as drawn
 * (`data-x-ticks`), the last reading as given to uPlot (`data-last`: `<ISO instant> qib=1.5 ...`)
 * and, once drawn, `data-render-ms`.
 */
import { useMemo, useRef } from 'preact/hooks';
import { SUBSCRIPTION_CATEGORIES, type SubscriptionCategory, type SubscriptionSeries } from './api.js';
import { formatIstInstant, formatTimes, istParts } from './format.js';
import { useTimeChart } from './time-chart.js';

const HEIGHT = 280;

/** The categories as Indian IPO pages name them. */
export const CATEGORY_LABELS: Record<SubscriptionCategory, string> = {
  qib: 'QIB',
  nii: 'NII',
  bnii: 'bNII (above ₹10 lakh)',
  snii: 'sNII (₹2–10 lakh)',
  retail: 'Retail',
  employee: 'Employee',
  shareholder: 'Shareholder',
  total: 'Total',
};

/** Short names for the read-out, which must fit a phone's line. */
const SHORT_LABELS: Record<SubscriptionCategory, string> = { ...CATEGORY_LABELS, bnii: 'bNII', snii: 'sNII' };

/** What the read-out says while the pointer is off the chart. */
export const SUBSCRIPTION_READOUT_IDLE = 'Point at the chart (or touch it) to read one reading.';

export function SubscriptionChart({ series }: { series: SubscriptionSeries }) {
  const data = useMemo(() => toColumns(series), [series]);
  const readout = useRef<HTMLParagraphElement>(null);
  const boxRef = useTimeChart(HEIGHT, [data], (color) => ({
    series: data.categories.map((c) => ({
      label: CATEGORY_LABELS[c],
      stroke: color(`--sub-${c}`),
      width: c === 'total' ? 3 : 2,
      // bNII and sNII are parts of NII: dashed, so that they are told apart without colour.
      ...(c === 'bnii' || c === 'snii' ? { dash: [6, 4] } : {}),
      spanGaps: false,
      points: { show: true, size: 6, fill: color(`--sub-${c}`) },
    })),
    data: [data.x, ...data.ys],
    yRange: (_u, _min, max) => [0, max > 0 ? max * 1.05 : 1],
    yValues: (ticks) => ticks.map((t) => `${Number.isInteger(t) ? t.toLocaleString('en-IN') : t.toFixed(2)}x`),
    show: (idx) => {
      if (readout.current === null) return;
      const x = idx === null || idx === undefined ? undefined : data.x[idx];
      if (x === undefined || idx === null || idx === undefined || data.gapRows.has(idx)) {
        readout.current.textContent = SUBSCRIPTION_READOUT_IDLE;
        return;
      }
      const parts = data.categories.map((c, k) => {
        const v = data.ys[k]?.[idx];
        return `${SHORT_LABELS[c]} ${v === null || v === undefined ? '—' : formatTimes(v)}`;
      });
      readout.current.textContent = `${formatIstInstant(x * 1000)}: ${parts.join(' · ')}`;
    },
  }));

  return (
    <figure class="sub-chart">
      <div
        ref={boxRef}
        class="chart-box"
        role="img"
        aria-label={summary(series, data)}
        data-points={series.series.length}
        data-series={data.categories.join(',')}
        data-gaps={data.gapRows.size}
        data-last={lastText(data)}
      />
      <figcaption>
        <ul class="legend" aria-label="Categories">
          {data.categories.map((c) => (
            <li key={c}>
              <span class={`line-swatch sub-${c}`} aria-hidden="true" />
              {CATEGORY_LABELS[c]}
            </li>
          ))}
        </ul>
        <p ref={readout} class="readout" />
      </figcaption>
    </figure>
  );
}

interface Columns {
  /** Seconds. */
  x: number[];
  /** The categories drawn: those with at least one figure, in the contract's order. */
  categories: SubscriptionCategory[];
  /** One column per drawn category (null where there is no figure, and in the rows put in between days). */
  ys: Array<Array<number | null>>;
  /** The rows put in between two readings on different IST days. */
  gapRows: Set<number>;
}

/** The API's readings as uPlot's columns, with a null row between readings on different days in India. */
function toColumns(s: SubscriptionSeries): Columns {
  const categories = SUBSCRIPTION_CATEGORIES.filter((c) => s.series.some((p) => p[c] !== null));
  const x: number[] = [];
  const ys: Array<Array<number | null>> = categories.map(() => []);
  const gapRows = new Set<number>();
  let lastDay = '';
  for (const point of s.series) {
    const ms = Date.parse(point.timestamp);
    const p = istParts(ms);
    const day = `${p.year}-${p.month}-${p.day}`;
    const prev = x[x.length - 1];
    if (prev !== undefined && day !== lastDay) {
      gapRows.add(x.length);
      x.push((prev + ms / 1000) / 2);
      for (const column of ys) column.push(null);
    }
    lastDay = day;
    x.push(ms / 1000);
    categories.forEach((c, k) => ys[k]!.push(point[c]));
  }
  return { x, categories, ys, gapRows };
}

function lastText(c: Columns): string {
  const i = c.x.length - 1;
  const x = c.x[i];
  if (x === undefined) return '';
  return `${new Date(Math.round(x * 1000)).toISOString()} ${c.categories.map((cat, k) => `${cat}=${c.ys[k]?.[i] ?? 'null'}`).join(' ')}`;
}

/** The chart in words, for those who cannot see it. */
function summary(s: SubscriptionSeries, c: Columns): string {
  const first = s.series[0];
  const last = s.series[s.series.length - 1];
  if (first === undefined || last === undefined) return 'No readings';
  const latest = c.categories.map((cat) => `${CATEGORY_LABELS[cat]} ${last[cat] === null ? 'not given' : formatTimes(last[cat])}`).join(', ');
  return `Line chart of the subscription by category: ${s.series.length} ${s.series.length === 1 ? 'reading' : 'readings'} from ${formatIstInstant(Date.parse(first.timestamp))} to ${formatIstInstant(Date.parse(last.timestamp))}; the last: ${latest}.`;
}
