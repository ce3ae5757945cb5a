// The dashboard restates two of the core's day rules in a few lines rather than bundle the
// core (which would add about 5 kB gzipped to the first load): each is pinned to the core's.
import fc from 'fast-check';
import { todayInIst } from '@ipokit/core';
import { addDays } from '@ipokit/core/backend';
import { describe, expect, it } from 'vitest';
import { addDays as dashboardAddDays, formatCount, formatDay, formatGain, formatInstant, formatIssueSize, formatIstShortDay, formatIstTime, formatPercent, formatPriceBand, formatRupees, formatTimes, formatShortDay, istAxisLabels, todayInIst as dashboardTodayInIst } from './app/format.js';

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

describe("Indian formatting, whatever the browser's locale and zone", () => {
  it('groups amounts en-IN: lakhs and crores', () => {
    expect(formatRupees(123456)).toBe('₹1,23,456');
    expect(formatRupees(12345678.5)).toBe('₹1,23,45,678.50');
    expect(formatRupees(30.456)).toBe('₹30.46');
    expect(formatRupees(-12)).toBe('-₹12');
    expect(formatCount(1234567)).toBe('12,34,567');
  });

  it('writes times subscribed with two decimals and an x, grouped en-IN; percentages signed', () => {
    expect(formatTimes(12.34)).toBe('12.34x');
    expect(formatTimes(0.8)).toBe('0.80x');
    expect(formatTimes(0)).toBe('0.00x');
    expect(formatTimes(123456.5)).toBe('1,23,456.50x');
    expect(formatPercent(12.5)).toBe('+12.5%');
    expect(formatPercent(-3.25)).toBe('-3.25%');
    expect(formatPercent(0)).toBe('0%');
  });

  it('writes a price band in rupees, one price when both ends agree, else as given', () => {
    expect(formatPriceBand('1610-1675')).toBe('₹1,610 – ₹1,675');
    expect(formatPriceBand('95.5-100')).toBe('₹95.50 – ₹100');
    expect(formatPriceBand('100-100')).toBe('₹100');
    expect(formatPriceBand('120')).toBe('₹120');
    expect(formatPriceBand('to be announced')).toBe('to be announced');
  });

  it('writes an issue size in ₹ crore when it reads "<decimal> cr|crore", else as given', () => {
    expect(formatIssueSize('4480cr')).toBe('₹4,480 Cr');
    expect(formatIssueSize('1,200.5cr')).toBe('₹1,200.50 Cr');
    expect(formatIssueSize('12345 Crore')).toBe('₹12,345 Cr');
    expect(formatIssueSize('50 lakh')).toBe('50 lakh');
    expect(formatIssueSize('cr')).toBe('cr');
  });

  it('writes days as "27 Nov 2026" (never "Sept") and instants in IST', () => {
    expect(formatDay('2026-11-27')).toBe('27 Nov 2026');
    expect(formatDay('2026-09-03')).toBe('3 Sep 2026');
    expect(formatShortDay('2026-09-03')).toBe('3 Sep');
    // 18:50 UTC is 00:20 the next day in India
    expect(formatInstant('2026-11-26T18:50:00.000Z')).toBe('27 Nov 2026, 00:20 IST');
    expect(formatIstTime(Date.parse('2026-11-27T04:45:00Z'))).toBe('10:15');
    expect(formatIstShortDay(Date.parse('2026-11-26T18:30:00Z'))).toBe('27 Nov');
    expect(formatInstant('soon')).toBe('soon');
  });

  it("labels a chart's time axis in IST: days, or times with the day under each day's first", () => {
    const at = (iso: string) => Date.parse(iso) / 1000;
    expect(istAxisLabels([at('2026-11-26T18:30:00Z'), at('2026-11-27T18:30:00Z')], 86_400)).toEqual(['27 Nov', '28 Nov']);
    expect(istAxisLabels([at('2026-11-27T16:30:00Z'), at('2026-11-27T17:30:00Z'), at('2026-11-27T18:30:00Z'), at('2026-11-27T19:30:00Z')], 3600)).toEqual([
      '22:00\n27 Nov',
      '23:00',
      '00:00\n28 Nov',
      '01:00',
    ]);
  });

  it('writes a listing gain with its sign', () => {
    expect(formatGain('15.5')).toBe('+15.5%');
    expect(formatGain('-2.75')).toBe('-2.75%');
    expect(formatGain('0')).toBe('0%');
    expect(formatGain('n/a')).toBe('n/a');
  });
});

describe('webhook texts', () => {
  it('prettyJson: JSON indented by two spaces, the same value; other text as it is', async () => {
    const { prettyJson } = await import('./app/format.js');
    expect(prettyJson('{"type":"webhook.test","data":{"n":1}}')).toBe('{\n  "type": "webhook.test",\n  "data": {\n    "n": 1\n  }\n}');
    expect(prettyJson('Service Unavailable')).toBe('Service Unavailable');
    expect(prettyJson('')).toBe('');
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        expect(JSON.parse(prettyJson(text))).toEqual(JSON.parse(text));
      }),
    );
  });

  it('orList: plans for a sentence', async () => {
    const { orList } = await import('./app/format.js');
    expect(orList(['pro'])).toBe('pro');
    expect(orList(['paid', 'pro'])).toBe('paid or pro');
    expect(orList(['free', 'paid', 'pro'])).toBe('free, paid or pro');
    expect(orList([])).toBe('');
  });
});
