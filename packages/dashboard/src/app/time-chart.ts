/**
 * What the dashboard's time charts (the GMP series, the subscription by category) share: a
 * uPlot chart on India's time axis (IST ticks, whatever the browser's zone), built again only
 * when its data or the colour scheme changes and resized in place, a read-out of the point
 * under the pointer, and the marks the browser tests read from the box: `data-render-ms`
 * (from `new uPlot` to its first drawn frame; removed while a new chart is built) and
 * `data-x-ticks` (the time axis' labels as drawn).
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { istAxisLabels } from './format.js';
import { useDark, useWidth } from './hooks.js';

/** What a chart gives for its data: its series (after the time one), its columns, its y axis. */
export interface TimeChartSpec {
  series: uPlot.Series[];
  data: uPlot.AlignedData;
  /** The y axis' labels. */
  yValues: (ticks: number[]) => string[];
  /** The y scale's range; default uPlot's. */
  yRange?: uPlot.Scale.Range;
  /** Says what is under the pointer (`idx` undefined or null: nothing). */
  show: (idx: number | null | undefined) => void;
}

/**
 * A uPlot chart of `height` px in the returned box, made by `build` (given a reader of the
 * page's CSS colours) whenever `deps` or the colour scheme change.
 *
 * @example
 * ```ts
 * const boxRef = useTimeChart(300, [data], (color) => ({ series: [{ stroke: color('--chart-line') }], data: [data.x, data.y], yValues: (t) => t.map(String), show }));
 * ```
 */
export function useTimeChart(height: number, deps: readonly unknown[], build: (color: (name: string) => string) => TimeChartSpec): { current: HTMLDivElement | null } {
  const dark = useDark();
  const [boxRef, width] = useWidth<HTMLDivElement>();
  const chart = useRef<uPlot | null>(null);
  const hasWidth = width > 0;

  useEffect(() => {
    const box = boxRef.current;
    if (box === null || !hasWidth) return;
    delete box.dataset['renderMs'];
    const css = getComputedStyle(box);
    const spec = build((name) => css.getPropertyValue(name).trim());
    const axis = { stroke: css.getPropertyValue('--muted').trim(), grid: { stroke: css.getPropertyValue('--grid').trim(), width: 1 }, ticks: { stroke: css.getPropertyValue('--grid').trim(), width: 1 } };
    const started = performance.now();
    let drawn = false;
    const u = new uPlot(
      {
        width: box.clientWidth,
        height,
        legend: { show: false },
        cursor: { drag: { x: true, y: false } },
        scales: { x: { time: true }, y: spec.yRange === undefined ? {} : { range: spec.yRange } },
        // Ticks on IST's midnights and hours, whatever the browser's zone.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Asia/Kolkata'),
        series: [{}, ...spec.series],
        axes: [
          {
            ...axis,
            size: 56,
            values: (_u, splits, _axis, _space, incr) => {
              const labels = istAxisLabels(splits, incr);
              box.dataset['xTicks'] = labels.join(' | ').replace(/\n/g, ' ');
              return labels;
            },
          },
          { ...axis, size: 64, values: (_u, ticks) => spec.yValues(ticks) },
        ],
        hooks: {
          draw: [
            () => {
              if (drawn) return;
              drawn = true;
              box.dataset['renderMs'] = (performance.now() - started).toFixed(1);
            },
          ],
          setCursor: [(self) => spec.show(self.cursor.idx)],
        },
      },
      spec.data,
      box,
    );
    chart.current = u;
    spec.show(null);
    return () => {
      u.destroy();
      chart.current = null;
    };
    // `build` is a new function on every render; `deps` say when it means something new.
  }, [...deps, dark, hasWidth]);

  // Resizing keeps the chart (and its zoom); only its size changes.
  useEffect(() => {
    if (width > 0) chart.current?.setSize({ width, height });
  }, [width]);

  return boxRef;
}
