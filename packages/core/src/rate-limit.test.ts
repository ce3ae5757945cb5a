import { describe, expect, it } from 'vitest';
import { resolveOptions } from './options.js';
import { drawnWindows, reportRateLimit } from './rate-limit.js';

const limits = resolveOptions().limits;
const now = 100_000;

describe('drawnWindows', () => {
  it('draws the account window, plus the GMP window on the GMP route', () => {
    expect(drawnWindows({ limits, account: { id: 'a', plan: 'pro' }, address: '1.2.3.4', gmpRoute: true })).toEqual([
      { key: 'acct:a', quota: 6, gmp: false },
      { key: 'gmp:a', quota: 3, gmp: true },
    ]);
    expect(drawnWindows({ limits, account: null, address: '1.2.3.4', gmpRoute: false })).toEqual([{ key: 'addr:1.2.3.4', quota: 6, gmp: false }]);
  });

  it('leaves out windows turned off with Infinity', () => {
    const off = resolveOptions({ limits: { pro: { gmpPerMinute: Infinity } } }).limits;
    expect(drawnWindows({ limits: off, account: { id: 'a', plan: 'pro' }, address: 'x', gmpRoute: true })).toHaveLength(1);
  });
});

describe('reportRateLimit', () => {
  const windows = [
    { key: 'acct:a', quota: 6, gmp: false },
    { key: 'gmp:a', quota: 3, gmp: true },
  ];

  it('reports the window with the fewest remaining, the GMP window on ties', () => {
    const r = reportRateLimit(windows, { admitted: true, windows: [{ count: 3, oldest: 50_000, blocking: null }, { count: 3, oldest: 60_000, blocking: 60_000 }] }, now);
    expect(r.headers).toEqual({ 'RateLimit-Limit': '3', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '20' });
    const tie = reportRateLimit(windows, { admitted: true, windows: [{ count: 4, oldest: 50_000, blocking: null }, { count: 1, oldest: 99_000, blocking: null }] }, now);
    expect(tie.headers['RateLimit-Limit']).toBe('3');
  });

  it('on refusal reports the longer wait, rounded up to whole seconds', () => {
    const r = reportRateLimit(windows, { admitted: false, windows: [{ count: 6, oldest: 41_000, blocking: 41_000 }, { count: 3, oldest: 40_500, blocking: 40_500 }] }, now);
    expect(r.refusal).toEqual({ quotaPerMinute: 6, expiresIn: 1 });
    expect(r.headers['Retry-After']).toBe('1');
    const gmp = reportRateLimit(windows, { admitted: false, windows: [{ count: 2, oldest: 41_000, blocking: null }, { count: 3, oldest: 70_000, blocking: 70_000 }] }, now);
    expect(gmp.refusal).toEqual({ quotaPerMinute: 3, expiresIn: 30 });
  });
});
