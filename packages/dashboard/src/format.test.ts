// The dashboard restates two of the core's day rules in a few lines rather than bundle the
// core (which would add about 5 kB gzipped to the first load): each is pinned to the core's.
import fc from 'fast-check';
import { todayInIst } from '@ipokit/core';
import { addDays } from '@ipokit/core/backend';
import { describe, expect, it } from 'vitest';
import { addDays as dashboardAddDays, todayInIst as dashboardTodayInIst } from './app/format.js';

describe("the dashboard's day arithmetic is the core's", () => {
  it('todayInIst: the same IST day for any instant from 1946 to 2100 (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1946, 0, 1), max: Date.UTC(2101, 0, 1) - 1 }), (ms) => {
        expect(dashboardTodayInIst(ms)).toBe(todayInIst(ms));
      }),
      { numRuns: 1_000 },
    );
  });

  it('addDays: the same day for any day and step (property)', () => {
    const day = fc.integer({ min: Date.UTC(1946, 0, 1) / 86_400_000, max: Date.UTC(2100, 0, 1) / 86_400_000 }).map((d) => new Date(d * 86_400_000).toISOString().slice(0, 10));
    fc.assert(
      fc.property(day, fc.integer({ min: -1_000, max: 1_000 }), (d, n) => {
        expect(dashboardAddDays(d, n)).toBe(addDays(d, n));
      }),
      { numRuns: 1_000 },
    );
  });
});
