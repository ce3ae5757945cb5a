/**
 * The shapes of data in (docs/spec.md#sources): a source, what it answers, and what a
 * collector tells of it.
 */
import type { DatasetIpo, DatasetSnapshot, DatasetSubscription } from '@ipokit/core';

/** One source's current GMP number for one IPO: rupees with at most 2 decimals, or null when it has none. */
export interface GmpReport {
  ipoId: string;
  gmpPrice: number | null;
}

/**
 * What a source's run resolves to: a partial dataset (docs/spec.md#datasets) and the
 * source's current GMP numbers. Every part may be left out. The collector checks all of it
 * as `importDataset` checks a dataset; an answer with any problem writes nothing.
 */
export interface SourceAnswer {
  ipos?: DatasetIpo[];
  gmp?: DatasetSnapshot[];
  subscription?: DatasetSubscription[];
  /**
   * This source's current GMP number of each IPO it follows, at most one per IPO. The
   * collector keeps the latest of each source and, when one changes, writes a GMP snapshot
   * combining every source's (docs/spec.md#sources).
   */
  gmpReports?: GmpReport[];
}

/** What a run is given: the collector's clock at the run's start, and a signal aborted when the run is cut. */
export interface SourceRunContext {
  now: Date;
  signal: AbortSignal;
  /**
   * When the source's last successful run started (its answer was written), or null: a source
   * that answers only what changed answers again what a failed run answered.
   */
  lastSuccessAt?: Date | null;
}

/**
 * A source of IPO data the collector runs on a schedule: a GMP site's scraper, an exchange's
 * subscription figures, another IPO API.
 *
 * @example
 * ```ts
 * const ipoCentral: Source = {
 *   name: 'ipocentral',
 *   everyMs: 5 * 60_000,
 *   async collect({ signal }) {
 *     const rows = await (await fetch('https://scraper.internal/ipocentral.json', { signal })).json();
 *     return { gmpReports: rows.map((r) => ({ ipoId: r.id, gmpPrice: r.gmp })) };
 *   },
 * };
 * ```
 */
export interface Source {
  /**
   * The source's name: 1 to 64 of A-Z, a-z, 0-9, ".", "_" and "-", unique among a
   * collector's sources. It names the source's price in the snapshots combined from its
   * reports, and its state in the store.
   */
  name: string;
  /** How often it runs, in milliseconds (at least 1,000). */
  everyMs: number;
  /**
   * How long a run may take before it is cut, in milliseconds: a source that waits out another
   * API's limits needs longer than the collector's `timeoutMs`, which applies when this is left out.
   */
  timeoutMs?: number;
  /** One run. It should stop when `signal` aborts; its answer is ignored once the run is cut. */
  collect(context: SourceRunContext): Promise<SourceAnswer>;
}

/** One source as {@link Collector.status} tells it. Times are ISO-8601 UTC, or null. */
export interface SourceStatus {
  name: string;
  /** When its last run started. */
  lastRunAt: string | null;
  /** When its last successful run started. */
  lastSuccessAt: string | null;
  /** Why its last run failed, or null when it succeeded (or has not run yet). */
  lastError: string | null;
  /** Records its runs wrote, in all: IPOs, GMP snapshots (its own and those combined after its runs) and subscription snapshots. */
  records: number;
  /** How many of its reports are older than `staleAfterMs`: no longer in new snapshots. */
  staleReports: number;
  /** When it runs next. */
  nextRunAt: string | null;
  /** Whether a run of it is under way in this process (from taking its lock to writing its state). */
  running: boolean;
}
