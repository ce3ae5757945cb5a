import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rateLimitHit, rateLimitPeek, WINDOW_MS } from './sliding-window.js';

/** Runs a sequence of request times through one window, as a store would. */
function run(times: number[], quota: number) {
  let hits: number[] = [];
  return times.map((now) => {
    const r = rateLimitHit({ now, windows: [{ quota, ms: WINDOW_MS, hits }] });
    hits = r.hits[0] as number[];
    return { now, admitted: r.admitted, state: r.windows[0], kept: hits.length };
  });
}

const times = fc.array(fc.integer({ min: 0, max: 300_000 }), { maxLength: 200 }).map((t) => t.sort((a, b) => a - b));

describe('rateLimitHit', () => {
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
    const r = rateLimitHit({ now: 3, windows: [{ quota: 5, ms: WINDOW_MS, hits: [] }, { quota: 2, ms: WINDOW_MS, hits: [1, 2] }] });
    expect(r.admitted).toBe(false);
    expect(r.hits).toEqual([[], [1, 2]]);
    const ok = rateLimitHit({ now: 3, windows: [{ quota: 5, ms: WINDOW_MS, hits: [] }, { quota: 2, ms: WINDOW_MS, hits: [1] }] });
    expect(ok.hits).toEqual([[3], [1, 3]]);
  });

  it('counts each sliding window over its own length', () => {
    const windows = [
      { quota: 2, ms: 1_000, hits: [0, 500] },
      { quota: 2, ms: 60_000, hits: [0, 500] },
    ];
    const r = rateLimitHit({ now: 1_000, windows });
    expect(r.admitted).toBe(false);
    expect(r.windows).toEqual([{ count: 1, oldest: 500, blocking: null }, { count: 2, oldest: 0, blocking: 0 }]);
    expect(rateLimitHit({ now: 60_000, windows }).hits).toEqual([[60_000], [500, 60_000]]);
  });

  it('counts every hit of a calendar window, whatever the time, and describes it by its start', () => {
    const day = { quota: 3, ms: 86_400_000, start: 1_000, hits: [2_000, 3_000] };
    const r = rateLimitHit({ now: 90_000_000, windows: [day] });
    expect(r.admitted).toBe(true);
    expect(r.hits).toEqual([[2_000, 3_000, 90_000_000]]);
    expect(r.windows).toEqual([{ count: 3, oldest: 1_000, blocking: 1_000 }]);
    expect(rateLimitPeek({ now: 0, windows: [{ ...day, hits: [] }] })).toEqual([{ count: 0, oldest: null, blocking: null }]);
  });

  it('never keeps more than quota hits of a sliding window; all of a calendar one (property)', () => {
    fc.assert(
      fc.property(times, fc.integer({ min: 1, max: 5 }), (ts, quota) => {
        let sliding: number[] = [];
        let calendar: number[] = [];
        let admittedCalendar = 0;
        for (const now of ts) {
          const r = rateLimitHit({ now, windows: [{ quota, ms: WINDOW_MS, hits: sliding }] });
          sliding = r.hits[0]!;
          expect(sliding.length).toBeLessThanOrEqual(quota);
          const c = rateLimitHit({ now, windows: [{ quota, ms: 86_400_000, start: 0, hits: calendar }] });
          calendar = c.hits[0]!;
          if (c.admitted) admittedCalendar++;
        }
        expect(calendar).toHaveLength(admittedCalendar);
        expect(admittedCalendar).toBe(Math.min(quota, ts.length));
      }),
    );
  });
});
