/**
 * The usage chart: stacked bars per day (list, one IPO, GMP, subscription admitted, refused on top, hatched).
 * Plain SVG rather than uPlot: at most 366 bars, colours from the CSS variables (so dark mode
 * needs no redraw), a hatch pattern that tells refused apart without colour, and it costs a
 * few hundred bytes. The table below it is its text alternative.
 */
import { useId } from 'preact/hooks';
import { formatCount, formatShortDay } from './format.js';
import { useWidth } from './hooks.js';

export interface DayUsage {
  day: string;
  list: number;
  ipo: number;
  gmp: number;
  subscription: number;
  refused: number;
}

/** Every request of a day, admitted or refused. */
export function dayTotal(d: DayUsage): number {
  return d.list + d.ipo + d.gmp + d.subscription + d.refused;
}

const SERIES = [
  { name: 'list', label: 'IPO list' },
  { name: 'ipo', label: 'One IPO' },
  { name: 'gmp', label: 'GMP series' },
  { name: 'subscription', label: 'Subscription' },
  { name: 'refused', label: 'Refused (429)' },
] as const;

const HEIGHT = 240;
const M = { top: 12, right: 8, bottom: 28, left: 44 };

export function UsageChart({ days, describedBy }: { days: DayUsage[]; describedBy: string }) {
  const [ref, width] = useWidth<HTMLDivElement>();
  const hatch = useId();
  const plotW = Math.max(0, width - M.left - M.right);
  const plotH = HEIGHT - M.top - M.bottom;
  const max = Math.max(0, ...days.map(dayTotal));
  const step = niceStep(max / 4);
  const top = Math.max(step, Math.ceil(max / step) * step);
  const y = (v: number) => M.top + plotH - (v / top) * plotH;
  const band = days.length > 0 ? plotW / days.length : 0;
  const bar = Math.max(1, Math.min(band * 0.72, 40));
  const labelEvery = Math.max(1, Math.ceil(days.length / Math.max(1, Math.floor(plotW / 64))));
  const ticks: number[] = [];
  for (let v = 0; v <= top; v += step) ticks.push(v);
  return (
    <div class="usage-chart">
      <div ref={ref} class="svg-box">
        {width > 0 && (
          <svg width={width} height={HEIGHT} viewBox={`0 0 ${width} ${HEIGHT}`} role="img" aria-label="Stacked bars: requests per day by route, refused on top" aria-describedby={describedBy}>
            <defs>
              <pattern id={hatch} patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)">
                <rect class="hatch-bg" width="6" height="6" />
                <rect class="hatch-line" width="3" height="6" />
              </pattern>
            </defs>
            {ticks.map((v) => (
              <g key={v}>
                <line class="grid" x1={M.left} x2={M.left + plotW} y1={y(v)} y2={y(v)} />
                <text class="tick" x={M.left - 6} y={y(v)} dy="0.32em" text-anchor="end">
                  {formatCount(v)}
                </text>
              </g>
            ))}
            {days.map((d, i) => {
              const x = M.left + i * band + (band - bar) / 2;
              let base = 0;
              return (
                <g key={d.day}>
                  <title>
                    {d.day}: list {d.list}, one IPO {d.ipo}, GMP {d.gmp}, subscription {d.subscription}, refused {d.refused}
                  </title>
                  {SERIES.map((s) => {
                    const v = d[s.name];
                    if (v === 0) return null;
                    const rect = <rect class={`s-${s.name}`} x={x} width={bar} y={y(base + v)} height={y(base) - y(base + v)} fill={s.name === 'refused' ? `url(#${hatch})` : undefined} />;
                    base += v;
                    return rect;
                  })}
                  {i % labelEvery === 0 && (
                    <text class="tick" x={x + bar / 2} y={HEIGHT - 8} text-anchor="middle">
                      {formatShortDay(d.day)}
                    </text>
                  )}
                </g>
              );
            })}
            <line class="axis" x1={M.left} x2={M.left + plotW} y1={y(0)} y2={y(0)} />
          </svg>
        )}
      </div>
      <ul class="legend" aria-label="Legend">
        {SERIES.map((s) => (
          <li key={s.name}>
            <span class={`swatch sw-${s.name}`} aria-hidden="true" />
            {s.label}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A round step (1, 2 or 5 times a power of ten) near `raw`. */
function niceStep(raw: number): number {
  if (!(raw > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  const f = raw / power;
  return Math.max(1, (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * power);
}
