/**
 * `@ipokit/core/backend`: the rules a storage backend, rate limiter or adapter restates or
 * uses, each defined once in the core (docs/spec.md#storage). A backend that answers from
 * its own indexes or in SQL or Lua is pinned to these by the conformance suites of
 * `@ipokit/core/testing`. An app that only mounts the router needs none of it.
 *
 * @example
 * ```ts
 * import { asciiLower, deriveStatus, rateLimitHit } from '@ipokit/core/backend';
 *
 * const folded = asciiLower('ORBIT');                     // how symbols are matched
 * const status = deriveStatus(ipo, '2026-11-24');         // the status on an IST day
 * const { admitted } = rateLimitHit({ now: 1_764_000_000_000, windows: [{ quota: 6, ms: 60_000, hits: [] }] });
 * ```
 */
// Text: ordering and case folding.
export { asciiLower } from './ascii.js';
export { closingDate, compareCodePoints, compareForStatus, deriveStatus, IPO_STATUSES } from './status.js';
// Dates and numbers.
export { addDays, dayNumber, isCalendarDate } from './dates.js';
export { aggregatePaise } from './aggregate.js';
export { paiseToRupees, roundDiv } from './numbers.js';
// GMP buckets.
export { BUCKET_GRIDS, toSeriesPoints } from './gmp.js';
// The windows: the decision every limiter is pinned to, and IST day periods.
export { describeWindow, rateLimitHit, rateLimitPeek, WINDOW_MS, type RateLimitHitResult, type WindowHits } from './sliding-window.js';
export { istDayStart } from './dates.js';
export { HOUR_MS } from './rate-limit.js';
// Keys, as stores keep them.
export { hashApiKey, KEY_PREFIX_LENGTH, randomBase62 } from './keys.js';
// Datasets: conflicts found while writing.
export { datasetConflictError } from './admin.js';
// Requests and error bodies, for adapters.
export { decodeComponent, decodeQueryComponent, parseQuery, routePath, type Route } from './request.js';
export { errorBody } from './serialize.js';
export { parsedAccountBody, readAccountBody } from './account-handler.js';
// Webhooks: the events of a write, and endpoints, events and deliveries in memory.
export { eventsOfStatusChanges, eventsOfWrite, sameIpo, sameSnapshot, type WriteChanges } from './events.js';
export { dueStatusChanges, nextStatusChangeAt } from './events.js';
export { DELIVERY_RETENTION_MS, DISABLED_ERROR, MemoryOutbox } from './outbox.js';
