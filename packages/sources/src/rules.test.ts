import { aggregatePaise, type SourceReport, type SourceRunWrite } from '@ipokit/core/backend';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { startCollector } from './collector.js';
import { BACKOFF_START_MS, changedReports, combineReports, isStale, nextRunDelay } from './rules.js';
import { ManualClock } from './test-clock.js';
import { recordingStore } from './test-store.js';
import type { Source, SourceAnswer } from './types.js';

describe('nextRunDelay', () => {
  it('is everyMs after a success; after failures 5 s doubling, never above everyMs, never shrinking', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1_000, max: 86_400_000 }), fc.integer({ min: 0, max: 2_000 }), (everyMs, failures) => {
        const delay = nextRunDelay(everyMs, failures);
        expect(delay).toBe(failures === 0 ? everyMs : Math.min(everyMs, BACKOFF_START_MS * 2 ** (failures - 1)));
        expect(delay).toBeGreaterThan(0);
        expect(delay).toBeLessThanOrEqual(everyMs);
        if (failures > 0) expect(nextRunDelay(everyMs, failures + 1)).toBeGreaterThanOrEqual(delay);
      }),
    );
  });
});

describe('isStale', () => {
  it('is true exactly when the report is older than staleAfterMs', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 42 }), fc.integer({ min: 0, max: 2 ** 30 }), fc.integer({ min: 1, max: 2 ** 30 }), (at, age, staleAfterMs) => {
        expect(isStale(at, at + age, staleAfterMs)).toBe(age > staleAfterMs);
      }),
    );
  });
});

const ids = fc.constantFrom('a', 'b', 'c', 'd');
const paise = fc.option(fc.integer({ min: -100_000, max: 100_000 }), { nil: null });

describe('changedReports', () => {
  it('names, in run order, the IPOs without a stored report or with another price', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.record({ ipoId: ids, paise }), { selector: (r) => r.ipoId }), fc.uniqueArray(fc.record({ ipoId: ids, paise }), { selector: (r) => r.ipoId }), (stored, run) => {
        const expected = run.filter((r) => !stored.some((s) => s.ipoId === r.ipoId && s.paise === r.paise)).map((r) => r.ipoId);
        expect(changedReports(stored, run)).toEqual(expected);
      }),
    );
  });
});

describe('combineReports', () => {
  const report = fc.record({ source: fc.constantFrom('x', 'y', 'z', 'Z', 'é'), ipoId: ids, paise, at: fc.integer({ min: 0, max: 100 }) });
  it('holds, per changed IPO, every fresh numeric report by source name, with its aggregations', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(report, { selector: (r) => `${r.source}/${r.ipoId}` }),
        fc.uniqueArray(ids),
        fc.integer({ min: 0, max: 200 }),
        fc.integer({ min: 1, max: 100 }),
        (reports, changed, at, staleAfterMs) => {
          const snapshots = combineReports(reports, changed, at, staleAfterMs);
          expect(snapshots.map((s) => s.ipoId)).toEqual(changed);
          for (const snapshot of snapshots) {
            const fresh = reports.filter((r) => r.ipoId === snapshot.ipoId && r.paise !== null && at - r.at <= staleAfterMs);
            const names = fresh.map((r) => r.source).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
            expect(snapshot.timestamp).toBe(at);
            expect(snapshot.sources.map((s) => s.name)).toEqual(names);
            expect(snapshot.aggregations).toEqual(aggregatePaise(snapshot.sources.map((s) => s.paise)));
            for (const s of snapshot.sources) expect(fresh.find((r) => r.source === s.name)?.paise).toBe(s.paise);
          }
        },
      ),
    );
  });
});

/**
 * The collector against a model: sources answering random reports or failing, on a manual
 * clock; every snapshot written is what the model, replaying the successful runs in the order
 * the store took them, says: one per IPO whose report changed, holding each source's latest
 * fresh numeric report.
 */
describe('startCollector against a model', () => {
  const run = fc.oneof(
    { weight: 1, arbitrary: fc.constant<'fail'>('fail') },
    { weight: 4, arbitrary: fc.uniqueArray(fc.record({ ipoId: fc.constantFrom('ipo-1', 'ipo-2', 'ipo-3'), gmpPrice: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }) }), { selector: (r) => r.ipoId, maxLength: 3 }) },
  );
  it('writes exactly the model\'s snapshots', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(run, { maxLength: 12 }), { minLength: 3, maxLength: 3 }),
        fc.array(fc.integer({ min: 1, max: 90 }), { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 60, max: 300 }),
        async (scripts, steps, staleAfterSeconds) => {
          const clock = new ManualClock('2026-11-24T04:00:00Z');
          const recording = await recordingStore(3);
          const taken: Array<Pick<SourceRunWrite, 'source' | 'at' | 'reports'>> = [];
          const inner = recording.store.writeSourceRun.bind(recording.store);
          const store = Object.assign(Object.create(null) as object, recording.store, {
            writeSourceRun: async (w: SourceRunWrite, o?: { at?: number }) => {
              const result = await inner(w, o);
              if (result.conflicts.length === 0) taken.push({ source: w.source, at: w.at, reports: w.reports });
              return result;
            },
          });
          const sources: Source[] = scripts.map((script, k) => {
            let n = 0;
            return {
              name: ['ipowatch', 'chittorgarh', 'ipoji'][k]!,
              everyMs: [60_000, 45_000, 100_000][k]!,
              async collect(): Promise<SourceAnswer> {
                const next = script[n++ % Math.max(1, script.length)] ?? [];
                if (next === 'fail') throw new Error('down');
                return { gmpReports: next };
              },
            };
          });
          const staleAfterMs = staleAfterSeconds * 1000;
          const collector = await startCollector(store as typeof recording.store, { sources, now: clock.now, timers: clock, staleAfterMs });
          await clock.advance(0);
          for (const s of steps) await clock.advance(s * 1000);
          await collector.stop();

          // The model: each source's latest reports, replayed in the order the store took the runs.
          const latest = new Map<string, SourceReport>();
          const expected: Array<{ ipoId: string; timestamp: number; sources: Array<{ name: string; paise: number }> }> = [];
          for (const t of taken) {
            const changed = t.reports.filter((r) => {
              const before = latest.get(`${t.source}/${r.ipoId}`);
              return before === undefined || before.paise !== r.paise;
            });
            for (const r of t.reports) latest.set(`${t.source}/${r.ipoId}`, { source: t.source, ipoId: r.ipoId, paise: r.paise, at: t.at });
            for (const c of changed) {
              const sourcesOf = [...latest.values()]
                .filter((r) => r.ipoId === c.ipoId && r.paise !== null && t.at - r.at <= staleAfterMs)
                .sort((a, b) => (a.source < b.source ? -1 : 1))
                .map((r) => ({ name: r.source, paise: r.paise! }));
              expected.push({ ipoId: c.ipoId, timestamp: t.at, sources: sourcesOf });
            }
          }
          expect(recording.snapshots.map(({ ipoId, timestamp, sources: s }) => ({ ipoId, timestamp, sources: s }))).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });
});
