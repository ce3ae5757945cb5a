/**
 * The GMP series as a uPlot line chart. uPlot draws on one canvas, so 20,000 points cost no
 * DOM at all; the data arrays are built once per answer (typed arrays), and the chart is built
 * again only when the answer, the width's order of magnitude or the colour scheme changes.
 * The time axis is India's (IST, whatever the browser's zone): days as "27 Nov", times as
 * "10:15". The API leaves out buckets without a snapshot, so a null is put in the bucket after
 * each point that is followed by a gap: the line breaks across nights and weekends rather than
 * drawing them as a straight line (`spanGaps: false`).
 * The time from `new uPlot` to its first drawn frame is left in `data-render-ms` (removed while a
 * new chart is built), and the box carries the API's points' count (`data-points`), the nulls put
 * in (`data-gaps`), the time axis' labels as drawn (`data-x-ticks`) and its first and last point (`data-first`, `data-last`:
 * `<ISO instant> <price|null>`), read from the columns uPlot is given, for the browser tests.
 */
import { useMemo, useRef } from 'preact/hooks';
import type { GmpSeries } from './api.js';
import { formatInstant, formatIstInstant, formatRupees, intervalName } from './format.js';
import { useTimeChart } from './time-chart.js';

const HEIGHT = 300;
/** Each interval's bucket, in seconds (the API's grid). */
const BUCKET_S: Record<string, number> = { '5m': 300, '10m': 600, '15m': 900, '30m': 1800, hourly: 3600, daily: 86_400, weekly: 604_800 };
/** What the read-out says while the pointer is off the chart. */
export const READOUT_IDLE = 'Point at the chart (or touch it) to read the GMP of one moment.';

export function GmpChart({ series }: { series: GmpSeries }) {
  const data = useMemo(() => toColumns(series), [series]);
  const readout = useRef<HTMLParagraphElement>(null);
  const boxRef = useTimeChart(HEIGHT, [data], (color) => ({
    series: [
      {
        label: `GMP ${series.field}`,
        stroke: color('--chart-line'),
        fill: color('--chart-fill'),
        width: 2,
        spanGaps: false,
        // A point between two gaps makes no line: where uPlot shows no points (too dense), it still shows those.
        points: { size: 5, fill: color('--chart-line'), filter: (_u, _i, shown) => (shown || data.lone.length === 0 ? null : data.lone) },
      },
    ],
    data: [data.x, data.y],
    yValues: (ticks) => ticks.map((t) => formatRupees(t)),
    // The pointer's point only: the page's one "latest" figure is the Latest GMP card's.
    show: (idx) => {
      if (readout.current === null) return;
      const x = idx === null || idx === undefined ? undefined : data.x[idx];
      const y = idx === null || idx === undefined ? undefined : data.y[idx];
      readout.current.textContent = x === undefined ? READOUT_IDLE : `${formatIstInstant(x * 1000)}: ${y === null || y === undefined || Number.isNaN(y) ? 'no GMP reported' : formatRupees(y)}`;
    },
  }));

  return (
    <figure class="gmp-chart">
      <div
        ref={boxRef}
        class="chart-box"
        role="img"
        aria-label={summary(series, data)}
        data-points={series.series.length}
        data-gaps={data.gaps}
        data-first={pointText(data, 0)}
        data-last={pointText(data, data.x.length - 1)}
      />
      <figcaption>
        <p ref={readout} class="readout" />
        <p class="muted small">Drag across the chart to zoom in on a span; double-click to see all of it again.</p>
      </figcaption>
    </figure>
  );
}

interface Columns {
  x: Float64Array;
  /** A typed array when every point has a price and no bucket is missing; else an array holding null (uPlot breaks the line there). */
  y: Float64Array | Array<number | null>;
  /** How many nulls were put in for missing buckets. */
  gaps: number;
  /** The indices of points with no neighbour to draw a line to. */
  lone: number[];
  min: number | null;
  max: number | null;
}

/** The API's points as uPlot's columns, with a null in the bucket after each point followed by a missing bucket. */
function toColumns(s: GmpSeries): Columns {
  const n = s.series.length;
  const bucket = BUCKET_S[s.interval] ?? Infinity;
  const xs: number[] = [];
  const ys: number[] = [];
  let nulls = false;
  let gaps = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const point = s.series[i]!;
    const t = Date.parse(point.timestamp) / 1000;
    const prev = xs[xs.length - 1];
    if (prev !== undefined && t - prev > bucket) {
      xs.push(prev + bucket);
      ys.push(NaN);
      gaps++;
    }
    xs.push(t);
    if (point.price === null) {
      nulls = true;
      ys.push(NaN);
    } else {
      ys.push(point.price);
      if (point.price < min) min = point.price;
      if (point.price > max) max = point.price;
    }
  }
  const values = Float64Array.from(ys);
  const y = nulls || gaps > 0 ? Array.from(values, (v) => (Number.isNaN(v) ? null : v)) : values;
  const lone: number[] = [];
  const at = (i: number) => i >= 0 && i < ys.length && !Number.isNaN(ys[i]!);
  if (y !== values) for (let i = 0; i < ys.length; i++) if (at(i) && !at(i - 1) && !at(i + 1)) lone.push(i);
  return { x: Float64Array.from(xs), y, gaps, lone, min: min === Infinity ? null : min, max: max === -Infinity ? null : max };
}

/** Point `i` of the columns as `<ISO instant> <price|null>` (empty when there is none). */
function pointText(c: Columns, i: number): string {
  const x = c.x[i];
  if (x === undefined) return '';
  const y = c.y[i];
  return `${new Date(Math.round(x * 1000)).toISOString()} ${y === null || y === undefined || Number.isNaN(y) ? 'null' : y}`;
}

/** The chart in words, for those who cannot see it. */
function summary(s: GmpSeries, c: Columns): string {
  const first = s.series[0];
  const last = s.series[s.series.length - 1];
  if (first === undefined || last === undefined) return 'No points';
  const range = c.min === null || c.max === null ? 'no prices' : `lowest ${formatRupees(c.min)}, highest ${formatRupees(c.max)}`;
  const end = last.price === null ? 'no value' : formatRupees(last.price);
  const gaps = c.gaps === 0 ? '' : `, broken where ${c.gaps === 1 ? 'a span has' : `${c.gaps} spans have`} no GMP`;
  return `Line chart of the GMP ${s.field}, one point per ${intervalName(s.interval)}: ${s.series.length} points from ${formatInstant(first.timestamp)} to ${formatInstant(last.timestamp)}, ${range}, last point ${end}${gaps}.`;
}
