/**
 * The collector's rules (docs/spec.md#sources), as pure functions: when a source runs again,
 * when a report is stale, which reports a run changes, and how every source's reports of an
 * IPO combine into one GMP snapshot. The collector and every store apply these; nothing else
 * restates them.
 */
import { aggregatePaise, compareCodePoints, type SnapshotRecord, type SourceReport } from '@ipokit/core/backend';

/** The first wait after a failed run, in milliseconds; each further failure doubles it. */
export const BACKOFF_START_MS = 5_000;

/** How long a run may take by default before it is cut, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** How old a report may be and still go into a snapshot by default, in milliseconds (6 hours). */
export const DEFAULT_STALE_AFTER_MS = 6 * 3_600_000;

/** The shortest `everyMs` a source may have, in milliseconds. */
export const MIN_EVERY_MS = 1_000;

/**
 * How long after a run's start the source runs again: `everyMs` after a success; after the
 * `failures`-th failure in a row, the backoff (5 s doubling with each failure) but never
 * longer than `everyMs`.
 *
 * @example
 * ```ts
 * nextRunDelay(60_000, 0); // 60000
 * nextRunDelay(60_000, 1); // 5000
 * nextRunDelay(60_000, 3); // 20000
 * nextRunDelay(60_000, 9); // 60000
 * ```
 */
export function nextRunDelay(everyMs: number, failures: number): number {
  if (failures <= 0) return everyMs;
  // 2^(failures-1) grows past any everyMs long before it leaves the doubles' exact range.
  const backoff = BACKOFF_START_MS * 2 ** Math.min(failures - 1, 40);
  return Math.min(everyMs, backoff);
}

/**
 * Whether a report made at `reportAt` is stale at `now`: older than `staleAfterMs` (a report
 * exactly `staleAfterMs` old is not).
 *
 * @example
 * ```ts
 * isStale(0, 6 * 3_600_000, 6 * 3_600_000);     // false
 * isStale(0, 6 * 3_600_000 + 1, 6 * 3_600_000); // true
 * ```
 */
export function isStale(reportAt: number, now: number, staleAfterMs: number): boolean {
  return now - reportAt > staleAfterMs;
}

/**
 * Which of a run's reports change what the source had reported: those of an IPO it had no
 * report of, or a report of another price (a number against null too). Their ipoIds, in the
 * run's order. `stored` is the source's reports before the run.
 *
 * @example
 * ```ts
 * changedReports([{ source: 'a', ipoId: 'x', paise: 4200, at: 0 }], [{ ipoId: 'x', paise: 4200 }, { ipoId: 'y', paise: null }]);
 * // ['y']
 * ```
 */
export function changedReports(
  stored: ReadonlyArray<Pick<SourceReport, 'ipoId' | 'paise'>>,
  run: ReadonlyArray<{ ipoId: string; paise: number | null }>,
): string[] {
  const before = new Map<string, number | null>();
  for (const r of stored) before.set(r.ipoId, r.paise);
  const changed: string[] = [];
  for (const r of run) {
    if (!before.has(r.ipoId) || before.get(r.ipoId) !== r.paise) changed.push(r.ipoId);
  }
  return changed;
}

/**
 * The GMP snapshots a run writes at its instant `at`: one for each IPO of `changed`, in that
 * order, holding every source's report of it that is not stale at `at` and has a price,
 * ascending by source name in code-point order, with its aggregations. `reports` are every
 * source's reports of those IPOs (others are ignored).
 *
 * @example
 * ```ts
 * combineReports(
 *   [
 *     { source: 'ipowatch', ipoId: 'x', paise: 4200, at: 1_000 },
 *     { source: 'chittorgarh', ipoId: 'x', paise: 4000, at: 0 },
 *   ],
 *   ['x'],
 *   1_000,
 *   6 * 3_600_000,
 * );
 * // [{ ipoId: 'x', timestamp: 1000, sources: [{ name: 'chittorgarh', paise: 4000 }, { name: 'ipowatch', paise: 4200 }],
 * //    aggregations: { mean: 4100, median: 4100, min: 4000, max: 4200, mode: 4000 } }]
 * ```
 */
export function combineReports(reports: readonly SourceReport[], changed: readonly string[], at: number, staleAfterMs: number): SnapshotRecord[] {
  const byIpo = new Map<string, Array<{ name: string; paise: number }>>();
  for (const id of changed) byIpo.set(id, []);
  for (const r of reports) {
    const sources = byIpo.get(r.ipoId);
    if (sources === undefined || r.paise === null || isStale(r.at, at, staleAfterMs)) continue;
    sources.push({ name: r.source, paise: r.paise });
  }
  const snapshots: SnapshotRecord[] = [];
  for (const [ipoId, sources] of byIpo) {
    sources.sort((a, b) => compareCodePoints(a.name, b.name));
    snapshots.push({ ipoId, timestamp: at, sources, aggregations: aggregatePaise(sources.map((s) => s.paise)) });
  }
  return snapshots;
}

/**
 * How many of a source's reports are stale at `now`.
 *
 * @example
 * ```ts
 * staleCount([{ source: 'a', ipoId: 'x', paise: 1, at: 0 }], 10, 5); // 1
 * ```
 */
export function staleCount(reports: ReadonlyArray<Pick<SourceReport, 'at'>>, now: number, staleAfterMs: number): number {
  let n = 0;
  for (const r of reports) if (isStale(r.at, now, staleAfterMs)) n += 1;
  return n;
}
