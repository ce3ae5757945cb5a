/**
 * @ipokit/sources: data in (docs/spec.md#sources). Sources run on a schedule by a collector
 * that checks and writes what they answer, combines the GMP sites' reports into snapshots,
 * and keeps its state in the store, so that every process of an app may run it. Built-in
 * sources mirror another IPO API, fetch a dataset from a URL, or import a file when it
 * changes. Runs wherever the core does. `npm run api` records this list in api/sources.api.md.
 */
export type { GmpReport, Source, SourceAnswer, SourceRunContext, SourceStatus } from './types.js';
export { upstreamSource, type UpstreamSourceOptions, type UpstreamWaitInfo } from './upstream.js';
