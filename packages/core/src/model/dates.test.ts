import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { addDays, dateToEpochMs, dayNumber, istDayStart, istMidnight, isCalendarDate, parseInstant, todayInIst, toIsoUtc } from './dates.js';

describe('calendar dates', () => {
  it('dayNumber is the day of Date for any day of years 0000-9999, and NaN for null (property)', () => {
    for (const date of ['1970-01-01', '2000-02-29', '1900-03-01', '2026-11-20', '9999-12-31', '2024-12-31', '2025-01-01']) {
      expect(dayNumber(date)).toBe(Date.parse(`${date}T00:00:00Z`) / 86_400_000);
    }
    expect(dayNumber('0000-03-01')).toBe(dayNumber('0000-02-29') + 1);
    expect(dayNumber(null)).toBeNaN();
    fc.assert(
      fc.property(fc.integer({ min: -719_528, max: 2_932_896 }), (day) => {
        const iso = new Date(day * 86_400_000).toISOString().slice(0, 10);
        return dayNumber(iso) === day && dateToEpochMs(iso) === day * 86_400_000;
      }),
    );
  });

  it('accepts only real YYYY-MM-DD dates', () => {
    expect(isCalendarDate('2024-02-29')).toBe(true);
    expect(isCalendarDate('2026-02-29')).toBe(false);
    expect(isCalendarDate('2026-02-30')).toBe(false);
    expect(isCalendarDate('2026-13-01')).toBe(false);
    expect(isCalendarDate('0000-00-00')).toBe(false);
    expect(isCalendarDate('2026-2-3')).toBe(false);
    expect(isCalendarDate('2026-02-03 ')).toBe(false);
    expect(isCalendarDate('0001-01-01')).toBe(true);
  });

  it('agree with Date for every day from 1900 to 2200 (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1900, 0, 1) / 86_400_000, max: Date.UTC(2200, 0, 1) / 86_400_000 }), (day) => {
        const iso = new Date(day * 86_400_000).toISOString().slice(0, 10);
        expect(dateToEpochMs(iso)).toBe(day * 86_400_000);
        expect(addDays(iso, 1)).toBe(new Date((day + 1) * 86_400_000).toISOString().slice(0, 10));
      }),
    );
  });

  it('today is the IST calendar day', () => {
    expect(todayInIst(new Date('2026-11-22T18:29:59.999Z'))).toBe('2026-11-22');
    expect(todayInIst(new Date('2026-11-22T18:30:00.000Z'))).toBe('2026-11-23');
    expect(todayInIst(Date.UTC(2026, 0, 1, 0, 0))).toBe('2026-01-01');
  });

  it('equals the IST day (UTC + 5:30 since 1945) for any sequence of instants, near and far, around midnights (property)', () => {
    const ist = (ms: number): string => new Date(ms + 19_800_000).toISOString().slice(0, 10);
    const midnight = fc.integer({ min: -500, max: 500 }).map((d) => Date.UTC(2026, 10, 22, 18, 30) + d * 86_400_000);
    const instant = fc.oneof(
      fc.integer({ min: Date.UTC(1950, 0, 1), max: Date.UTC(2100, 0, 1) }),
      fc.tuple(midnight, fc.integer({ min: -2, max: 1 })).map(([m, d]) => m + d),
    );
    fc.assert(
      fc.property(fc.array(instant, { minLength: 1, maxLength: 30 }), (instants) => {
        for (const ms of instants) {
          expect(todayInIst(ms)).toBe(ist(ms));
          // and the day began at 00:00 IST of that day, whichever day was asked before
          expect(istDayStart(ms)).toBe(Date.parse(`${ist(ms)}T00:00:00.000+05:30`));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('agree with the zone database (luxon, Asia/Kolkata) for every instant and day from 1946 to 2100 (property)', () => {
    // The request path uses the fixed offset; the zone database is the reference it is pinned to.
    const zone = 'Asia/Kolkata';
    const instant = fc.oneof(
      fc.integer({ min: Date.UTC(1946, 0, 1), max: Date.UTC(2101, 0, 1) - 1 }),
      // around IST midnights, to the millisecond
      fc.tuple(fc.integer({ min: 0, max: 56_000 }), fc.integer({ min: -2, max: 1 })).map(([d, e]) => Date.UTC(1945, 11, 31, 18, 30) + d * 86_400_000 + e),
    );
    fc.assert(
      fc.property(instant, (ms) => {
        const local = DateTime.fromMillis(ms, { zone });
        expect(todayInIst(ms)).toBe(local.toISODate());
        expect(istDayStart(ms)).toBe(local.startOf('day').toMillis());
        expect(istMidnight(todayInIst(ms))).toBe(local.startOf('day').toMillis());
      }),
      { numRuns: 2_000 },
    );
    // The reference is a real zone database: in 1943 India kept UTC+06:30 (war time), where the
    // fixed offset, which the contract takes from 1946 on, does not hold.
    const wartime = Date.UTC(1943, 5, 1, 17, 45);
    expect(DateTime.fromMillis(wartime, { zone }).toISODate()).toBe('1943-06-02');
    expect(todayInIst(wartime)).toBe('1943-06-01');
  });

  it('a day starts at 00:00 IST, 18:30 UTC the day before, and the next starts exactly a day later', () => {
    /** 2026-11-24 12:00 UTC = 17:30 IST; that IST day began 2026-11-23 18:30 UTC. */
    const noon = Date.UTC(2026, 10, 24, 12);
    const dayStart = Date.UTC(2026, 10, 23, 18, 30);
    expect(istDayStart(noon)).toBe(dayStart);
    expect(istDayStart(dayStart)).toBe(dayStart);
    expect(istDayStart(dayStart - 1)).toBe(dayStart - 86_400_000);
    expect(istDayStart(dayStart + 86_400_000 - 1)).toBe(dayStart);
    expect(istDayStart(dayStart + 86_400_000)).toBe(dayStart + 86_400_000);
    expect(istMidnight('2026-11-24')).toBe(dayStart);
  });
});

describe('parseInstant', () => {
  it('takes Z or an offset and at most 3 fractional digits', () => {
    expect(parseInstant('2026-11-18T09:30:00.000Z')).toBe(Date.UTC(2026, 10, 18, 9, 30));
    expect(parseInstant('2026-11-18T15:00:00+05:30')).toBe(Date.UTC(2026, 10, 18, 9, 30));
    expect(parseInstant('2026-11-18T09:30Z')).toBe(Date.UTC(2026, 10, 18, 9, 30));
    expect(parseInstant('2026-11-18T09:30:00.5Z')).toBe(Date.UTC(2026, 10, 18, 9, 30, 0, 500));
    expect(parseInstant('2026-11-18T09:30:00.0001Z')).toBeNull();
    expect(parseInstant('2026-11-18T09:30:00')).toBeNull();
    expect(parseInstant('2026-11-18T24:00:00Z')).toBeNull();
    expect(parseInstant('2026-02-30T00:00:00Z')).toBeNull();
    expect(parseInstant('2026-11-18 09:30:00Z')).toBeNull();
  });

  it('agrees with Date.parse on ISO strings (property)', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }), (d) => {
        expect(parseInstant(d.toISOString())).toBe(d.getTime());
      }),
    );
  });
});

describe('toIsoUtc', () => {
  it('writes what Date#toISOString writes, for any instant and any sequence of them (property)', () => {
    const minute = fc.integer({ min: -1_000, max: 1_000 }).map((m) => Date.UTC(2026, 10, 22) + m * 60_000);
    const instant = fc.oneof(
      minute,
      fc.integer({ min: -62_167_219_200_000 - 5, max: 253_402_300_799_999 + 5 }),
      fc.constantFrom(-62_167_219_200_000, 253_402_300_799_999, 0, -1, 1, 8.64e15, -8.64e15),
      fc.double({ min: -1e13, max: 1e13, noNaN: true }),
    );
    fc.assert(
      fc.property(fc.array(instant, { minLength: 1, maxLength: 40 }), (instants) => {
        for (const ms of instants) expect(toIsoUtc(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 500 },
    );
  });
});
