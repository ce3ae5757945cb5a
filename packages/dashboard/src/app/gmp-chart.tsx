/**
 * The GMP series as a uPlot line chart. uPlot draws on one canvas, so 20,000 points cost no
 * DOM at all; the data arrays are built once per answer (typed arrays), and the chart is built
 * again only when the answer, the width's order of magnitude or the colour scheme changes.
 * The time from `new uPlot` to its first drawn frame is left in `data-render-ms` (removed while a
 * new chart is built), and the box carries the plotted points' count (`data-points`) and its
 * first and last point (`data-first`, `data-last`: `<ISO instant> <price|null>`), read from the
 * columns uPlot is given, for the browser tests.
 */
import { useEffect, useMemo, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { GmpSeries } from './api.js';
import { formatRupees, intervalName } from './format.js';
import { useDark, useWidth } from './hooks.js';

const HEIGHT = 300;
const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function GmpChart({ series }: { series: GmpSeries }) {
  const data = useMemo(() => toColumns(series), [series]);
  const dark = useDark();
  const [boxRef, width] = useWidth<HTMLDivElement>();
  const readout = useRef<HTMLParagraphElement>(null);
  const chart = useRef<uPlot | null>(null);
  const hasWidth = width > 0;

  useEffect(() => {
    const box = boxRef.current;
    if (box === null || !hasWidth) return;
    delete box.dataset['renderMs'];
    const css = getComputedStyle(box);
    const color = (name: string) => css.getPropertyValue(name).trim();
    const started = performance.now();
    let drawn = false;
    const show = (idx: number | null | undefined) => {
      const i = idx ?? data.x.length - 1;
      const x = data.x[i];
      const y = data.y[i];
      if (readout.current === null || x === undefined) return;
      readout.current.textContent = `${idx === null || idx === undefined ? 'Latest: ' : ''}${when.format(new Date(x * 1000))}: ${y === null || y === undefined || Number.isNaN(y) ? 'no value' : formatRupees(y)}`;
    };
    const axis = { stroke: color('--muted'), grid: { stroke: color('--grid'), width: 1 }, ticks: { stroke: color('--grid'), width: 1 } };
    const u = new uPlot(
      {
        width: box.clientWidth,
        height: HEIGHT,
        legend: { show: false },
        cursor: { drag: { x: true, y: false } },
        scales: { x: { time: true } },
        series: [{}, { label: `GMP ${series.field}`, stroke: color('--chart-line'), fill: color('--chart-fill'), width: 2, spanGaps: false }],
        axes: [axis, { ...axis, size: 64, values: (_u, ticks) => ticks.map((t) => formatRupees(t)) }],
        hooks: {
          draw: [
            () => {
              if (drawn) return;
              drawn = true;
              box.dataset['renderMs'] = (performance.now() - started).toFixed(1);
            },
          ],
          setCursor: [(self) => show(self.cursor.idx)],
        },
      },
      [data.x, data.y],
      box,
    );
    chart.current = u;
    show(null);
    return () => {
      u.destroy();
      chart.current = null;
    };
  }, [data, dark, hasWidth]);

  // Resizing keeps the chart (and its zoom); only its size changes.
  useEffect(() => {
    if (width > 0) chart.current?.setSize({ width, height: HEIGHT });
  }, [width]);

  return (
    <figure class="gmp-chart">
      <div ref={boxRef} class="chart-box" role="img" aria-label={summary(series, data)} data-points={data.x.length} data-first={pointText(data, 0)} data-last={pointText(data, data.x.length - 1)} />
      <figcaption>
        <p ref={readout} class="readout" />
        <p class="muted small">Drag across the chart to zoom in on a span; double-click to see all of it again.</p>
      </figcaption>
    </figure>
  );
}

interface Columns {
  x: Float64Array;
  /** A typed array when every point has a price; with gaps, an array holding null (uPlot breaks the line there). */
  y: Float64Array | Array<number | null>;
  min: number | null;
  max: number | null;
}

function toColumns(s: GmpSeries): Columns {
  const n = s.series.length;
  const x = new Float64Array(n);
  const values = new Float64Array(n);
  let gaps = false;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const point = s.series[i]!;
    x[i] = Date.parse(point.timestamp) / 1000;
    if (point.price === null) {
      gaps = true;
      values[i] = NaN;
    } else {
      values[i] = point.price;
      if (point.price < min) min = point.price;
      if (point.price > max) max = point.price;
    }
  }
  const y = gaps ? Array.from(values, (v) => (Number.isNaN(v) ? null : v)) : values;
  return { x, y, min: min === Infinity ? null : min, max: max === -Infinity ? null : max };
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
  const latest = last.price === null ? 'no value' : formatRupees(last.price);
  return `Line chart of the GMP ${s.field}, one point per ${intervalName(s.interval)}: ${s.series.length} points from ${when.format(new Date(first.timestamp))} to ${when.format(new Date(last.timestamp))}, ${range}, latest ${latest}.`;
}
