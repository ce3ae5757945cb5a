/**
 * @ipokit/sources: data in (docs/spec.md#sources). Sources run on a schedule by a collector
 * that checks and writes what they answer, combines the GMP sites' reports into snapshots,
 * and keeps its state in the store, so that every process of an app may run it. Built-in
 * sources mirror another IPO API, fetch a dataset from a URL, or import a file when it
 * changes (`@ipokit/sources/node`). Runs wherever the core does; the file source needs
 * `node:fs`. `npm run api` records this list in api/sources.api.md.
 */
export type { GmpReport, Source, SourceAnswer, SourceRunContext, SourceStatus } from './types.js';
export { isSourceStore, sourceStatuses, startCollector, type Collector, type CollectorOptions, type CollectorTimers } from './collector.js';
export { localSourceStore } from './local-store.js';
export { datasetUrlSource, type DatasetUrlSourceOptions } from './dataset-sources.js';
// The rules, for a store that keeps a collector's state (docs/spec.md#sources).
export { BACKOFF_START_MS, changedReports, combineReports, DEFAULT_STALE_AFTER_MS, DEFAULT_TIMEOUT_MS, isStale, nextRunDelay } from './rules.js';
export { upstreamSource, type UpstreamSourceOptions, type UpstreamWaitInfo } from './upstream.js';
