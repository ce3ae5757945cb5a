import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../model/options.js';
import { drawnWindows, reportRateLimit, type DrawnWindow } from './rate-limit.js';

const limits = resolveOptions().limits;
const now = 100_000;
/** 2026-11-24 12:00 UTC = 17:30 IST; that IST day began 2026-11-23 18:30 UTC. */
const NOON = Date.UTC(2026, 10, 24, 12);
const DAY_START = Date.UTC(2026, 10, 23, 18, 30);

describe('drawnWindows', () => {
  it('draws the account minute window, plus the GMP minute window on the GMP route (the defaults)', () => {
    expect(drawnWindows({ limits, account: { id: 'a', plan: 'pro' }, address: '1.2.3.4', gmpRoute: true, now })).toEqual([
      { name: 'minute', key: 'acct:a', quota: 6, ms: 60_000, gmp: false, familyPerMinute: 6 },
      { name: 'gmp-minute', key: 'gmp:a', quota: 3, ms: 60_000, gmp: true, familyPerMinute: 3 },
    ]);
    expect(drawnWindows({ limits, account: null, address: '1.2.3.4', gmpRoute: false, now })).toEqual([
      { name: 'minute', key: 'addr:1.2.3.4', quota: 6, ms: 60_000, gmp: false, familyPerMinute: 6 },
    ]);
  });

  it('draws every window that is on, in table order, the day windows on the IST day', () => {
    const all = resolveOptions({ limits: { pro: { perHour: 360, perDay: 8_640, gmpPerDay: 100 }, keyless: { perHour: 60, perDay: 100 } } }).limits;
    expect(drawnWindows({ limits: all, account: { id: 'a', plan: 'pro' }, address: 'x', gmpRoute: true, now: NOON }).map((w) => [w.name, w.key, w.quota, w.ms, w.start])).toEqual([
      ['minute', 'acct:a', 6, 60_000, undefined],
      ['hour', 'acct:a', 360, 3_600_000, undefined],
      ['day', 'acct:a', 8_640, 86_400_000, DAY_START],
      ['gmp-minute', 'gmp:a', 3, 60_000, undefined],
      ['gmp-day', 'gmp:a', 100, 86_400_000, DAY_START],
    ]);
    // keyless: no GMP windows, even on the GMP route
    expect(drawnWindows({ limits: all, account: null, address: 'x', gmpRoute: true, now: NOON }).map((w) => w.name)).toEqual(['minute', 'hour', 'day']);
  });

  it('leaves out windows turned off with Infinity; quotaPerMinute is null where the minute window is off', () => {
    const off = resolveOptions({ limits: { pro: { perMinute: Infinity, perDay: 10, gmpPerMinute: Infinity } } }).limits;
    const drawn = drawnWindows({ limits: off, account: { id: 'a', plan: 'pro' }, address: 'x', gmpRoute: true, now });
    expect(drawn.map((w) => [w.name, w.familyPerMinute])).toEqual([['day', null]]);
  });
});

describe('reportRateLimit', () => {
  const minute: DrawnWindow = { name: 'minute', key: 'acct:a', quota: 6, ms: 60_000, gmp: false, familyPerMinute: 6 };
  const gmp: DrawnWindow = { name: 'gmp-minute', key: 'gmp:a', quota: 3, ms: 60_000, gmp: true, familyPerMinute: 3 };
  const windows = [minute, gmp];

  it('reports the window with the fewest remaining, the GMP window on ties', () => {
    const r = reportRateLimit(windows, { admitted: true, windows: [{ count: 3, oldest: 50_000, blocking: null }, { count: 3, oldest: 60_000, blocking: 60_000 }] }, now);
    expect(r.headers).toEqual({ 'RateLimit-Limit': '3', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '20' });
    const tie = reportRateLimit(windows, { admitted: true, windows: [{ count: 4, oldest: 50_000, blocking: null }, { count: 1, oldest: 99_000, blocking: null }] }, now);
    expect(tie.headers['RateLimit-Limit']).toBe('3');
  });

  it('on refusal reports the longer wait, rounded up to whole seconds, with the window and its quota', () => {
    const r = reportRateLimit(windows, { admitted: false, windows: [{ count: 6, oldest: 41_000, blocking: 41_000 }, { count: 3, oldest: 40_500, blocking: 40_500 }] }, now);
    expect(r.refusal).toEqual({ quotaPerMinute: 6, expiresIn: 1, window: 'minute', quota: 6 });
    expect(r.headers['Retry-After']).toBe('1');
    const g = reportRateLimit(windows, { admitted: false, windows: [{ count: 2, oldest: 41_000, blocking: null }, { count: 3, oldest: 70_000, blocking: 70_000 }] }, now);
    expect(g.refusal).toEqual({ quotaPerMinute: 3, expiresIn: 30, window: 'gmp-minute', quota: 3 });
  });

  it('ties go to a GMP window, then to the longer window', () => {
    const hour: DrawnWindow = { name: 'hour', key: 'acct:a', quota: 6, ms: 3_600_000, gmp: false, familyPerMinute: 6 };
    // both full, equal waits: the hour window (longer) wins over the minute window
    const r = reportRateLimit([minute, hour], { admitted: false, windows: [{ count: 6, oldest: 50_000, blocking: 50_000 }, { count: 6, oldest: 0, blocking: -3_490_000 }] }, now);
    expect(r.refusal?.window).toBe('hour');
    // admitted, equal remaining: the longer window
    const a = reportRateLimit([minute, hour], { admitted: true, windows: [{ count: 2, oldest: 50_000, blocking: null }, { count: 2, oldest: 0, blocking: null }] }, now);
    expect(a.headers['RateLimit-Reset']).toBe(String(Math.ceil((3_600_000 - now) / 1000)));
  });

  it('a day window waits until 00:00 IST: its start plus a day', () => {
    const day: DrawnWindow = { name: 'day', key: 'acct:a', quota: 100, ms: 86_400_000, start: DAY_START, gmp: false, familyPerMinute: 6 };
    const r = reportRateLimit([minute, day], { admitted: false, windows: [{ count: 1, oldest: NOON - 1_000, blocking: null }, { count: 100, oldest: DAY_START, blocking: DAY_START }] }, NOON);
    expect(r.refusal).toEqual({ quotaPerMinute: 6, expiresIn: 6.5 * 3600, window: 'day', quota: 100 });
    expect(r.headers).toEqual({ 'RateLimit-Limit': '100', 'RateLimit-Remaining': '0', 'RateLimit-Reset': String(6.5 * 3600), 'Retry-After': String(6.5 * 3600) });
  });

  it('writes the draft-11 fields, both drafts, or none; Retry-After on every 429', () => {
    const state = { admitted: true, windows: [{ count: 1, oldest: 58_000, blocking: null }, { count: 1, oldest: 58_000, blocking: null }] };
    expect(reportRateLimit(windows, state, now, 'draft-11').headers).toEqual({
      'RateLimit-Policy': '"minute";q=6;w=60, "gmp-minute";q=3;w=60',
      RateLimit: '"gmp-minute";r=2;t=18',
    });
    expect(Object.keys(reportRateLimit(windows, state, now, 'both').headers)).toEqual(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy', 'RateLimit']);
    expect(reportRateLimit(windows, state, now, 'none').headers).toEqual({});
    const refused = { admitted: false, windows: [{ count: 6, oldest: 41_000, blocking: 41_000 }, { count: 1, oldest: 58_000, blocking: null }] };
    expect(reportRateLimit(windows, refused, now, 'none').headers).toEqual({ 'Retry-After': '1' });
    expect(reportRateLimit(windows, refused, now, 'draft-11').headers).toEqual({
      'RateLimit-Policy': '"minute";q=6;w=60, "gmp-minute";q=3;w=60',
      RateLimit: '"minute";r=0;t=1',
      'Retry-After': '1',
    });
  });
});
