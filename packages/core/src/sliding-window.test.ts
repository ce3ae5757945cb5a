import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { slidingWindowHit, WINDOW_MS } from './sliding-window.js';

/** Runs a sequence of request times through one window, as a store would. */
function run(times: number[], quota: number) {
  let hits: number[] = [];
  return times.map((now) => {
    const r = slidingWindowHit({ hits: [hits], quotas: [quota], now, windowMs: WINDOW_MS });
    hits = r.hits[0] as number[];
    return { now, admitted: r.admitted, state: r.windows[0], kept: hits.length };
  });
}

const times = fc.array(fc.integer({ min: 0, max: 300_000 }), { maxLength: 200 }).map((t) => t.sort((a, b) => a - b));

describe('slidingWindowHit', () => {
  it('admits at most quota requests in any 60 s window (property)', () => {
    fc.assert(
      fc.property(times, fc.integer({ min: 1, max: 10 }), (ts, quota) => {
        const admitted = run(ts, quota).filter((r) => r.admitted).map((r) => r.now);
        for (const t of admitted) {
          expect(admitted.filter((u) => u >= t && u - t < WINDOW_MS).length).toBeLessThanOrEqual(quota);
        }
      }),
    );
  });

  it('admits exactly when fewer than quota admitted hits are inside the window: refusals consume nothing (property)', () => {
    fc.assert(
      fc.property(times, fc.integer({ min: 1, max: 10 }), (ts, quota) => {
        const results = run(ts, quota);
        const admittedTimes: number[] = [];
        for (const r of results) {
          const inside = admittedTimes.filter((t) => r.now - t < WINDOW_MS).length;
          expect(r.admitted).toBe(inside < quota);
          if (r.admitted) admittedTimes.push(r.now);
          expect(r.kept).toBeLessThanOrEqual(quota);
        }
      }),
    );
  });

  it('reports count, oldest and the blocking hit', () => {
    const r = run([0, 10, 20, 30], 3);
    expect(r.map((x) => x.admitted)).toEqual([true, true, true, false]);
    expect(r[3]?.state).toEqual({ count: 3, oldest: 0, blocking: 0 });
    expect(r[2]?.state).toEqual({ count: 3, oldest: 0, blocking: 0 });
    expect(r[0]?.state).toEqual({ count: 1, oldest: 0, blocking: null });
  });

  it('lets a hit leave exactly 60,000 ms later', () => {
    const r = run([0, 59_999, 60_000], 1);
    expect(r.map((x) => x.admitted)).toEqual([true, false, true]);
  });

  it('charges every window or none', () => {
    const r = slidingWindowHit({ hits: [[], [1, 2]], quotas: [5, 2], now: 3, windowMs: WINDOW_MS });
    expect(r.admitted).toBe(false);
    expect(r.hits).toEqual([[], [1, 2]]);
    const ok = slidingWindowHit({ hits: [[], [1]], quotas: [5, 2], now: 3, windowMs: WINDOW_MS });
    expect(ok.hits).toEqual([[3], [1, 3]]);
  });
});
