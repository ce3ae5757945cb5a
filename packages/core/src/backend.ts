/**
 * `@ipokit/core/backend`: the rules a storage backend, rate limiter or adapter restates or
 * uses, each defined once in the core (docs/spec.md#storage). A backend that answers from
 * its own indexes or in SQL or Lua is pinned to these by the conformance suites of
 * `@ipokit/testing`. An app that only mounts the router needs none of it.
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
export { asciiLower } from './model/ascii.js';
export { closingDate, compareCodePoints, compareForStatus, deriveStatus, IPO_STATUSES } from './model/status.js';
// Dates and numbers.
export { addDays, DAY_MS, dayNumber, isCalendarDate, toIsoUtc } from './model/dates.js';
export { aggregatePaise } from './model/aggregate.js';
export { MAX_GMP_PAISE, paiseToRupees, roundDiv } from './model/numbers.js';
// GMP buckets.
export { BUCKET_GRIDS, toGmpSnapshot, toSeriesPoints } from './model/gmp.js';
// Subscription snapshots: every category of a partial times object, as stores keep it.
export { fullTimes } from './model/subscription.js';
// The IPO fields, written once: their order, JSON Schemas and dataset checks.
export { IPO_FIELDS } from './model/ipo-fields.js';
// The windows: the decision every limiter is pinned to, and IST day periods.
export { describeWindow, rateLimitHit, rateLimitPeek, WINDOW_MS, type RateLimitHitResult, type WindowHits } from './limits/sliding-window.js';
export { istDayStart } from './model/dates.js';
export { HOUR_MS } from './limits/rate-limit.js';
// Keys, as stores keep them.
export { hashApiKey, KEY_PREFIX_LENGTH, randomBase62 } from './accounts/keys.js';
// Datasets: conflicts found while writing.
export { datasetConflictError } from './dataset/import.js';
// Requests and error bodies, for adapters.
export { decodeComponent, decodeQueryComponent, isOpenApiPath, parseQuery, routePath, type Route } from './http/request.js';
export { errorBody, toWireIpo } from './http/serialize.js';
export { parsedAccountBody, readAccountBody } from './http/account-handler.js';
// Webhooks: the events of a write, and endpoints, events and deliveries in memory.
export { eventsOfStatusChanges, eventsOfWrite, sameIpo, sameSnapshot, sameSubscription, type WriteChanges } from './events/events.js';
export { dueStatusChanges, nextStatusChangeAt } from './events/events.js';
export { DELIVERIES_KEPT_PER_WEBHOOK, DELIVERY_RETENTION_MS, DISABLED_ERROR, WEBHOOK_DISABLE_AFTER_MS, WEBHOOK_RETRY_DELAYS_MS } from './events/events.js';
export { generateWebhookSecret, nextAttemptAt, statusChangeEventId, webhookSignature } from './events/events.js';
// The store's records and calls, for authors of a store or limiter (docs/spec.md#storage).
export type {
  AccountRecord,
  ActiveKeyLimits,
  ApiKeyRecord,
  ClaimedDelivery,
  DatasetConflict,
  DeliveryEventType,
  DeliveryRecord,
  DeliveryResult,
  DeliveryState,
  EventRecord,
  GmpAggregationsPaise,
  GmpBucket,
  GmpBucketQuery,
  IpoRecord,
  IpoRow,
  KeyGrant,
  ListQuery,
  RateLimitOutcome,
  RateLimitWindow,
  RateLimitWindowState,
  SnapshotRecord,
  SourceReport,
  SourceRunWrite,
  SourceState,
  SourceStore,
  StoreCallOptions,
  SubscriptionQuery,
  SubscriptionRecord,
  UsageCharge,
  UsageRoute,
  WebhookChange,
  WebhookRecord,
  WriteOptions,
} from './model/types.js';
export type { IpokitErrorOptions, WireErrorCode } from './model/errors.js';
// A GMP price checked as a dataset's, and IPOs the store does not hold, for a source's reports (docs/spec.md#sources).
export { quote, readGmpPrice, unstoredIpoIds, validateDatasetForStore } from './dataset/dataset.js';
// Datasets one record at a time, for a streaming import (docs/spec.md#datasets).
export { createDatasetChecker, type DatasetChecker, type DatasetCounts, type DatasetItem, type DatasetPart, type DatasetRecordPlace, type DatasetRecords } from './dataset/dataset.js';
// Where webhooks may go (docs/spec.md#webhooks): what the transports and the CLI check.
export {
  isAddressAllowed,
  isIpLiteral,
  parseAllowedNetworks,
  parseCidr,
  refusedHost,
  REFUSED_IPV4_NETWORKS,
  REFUSED_IPV6_NETWORKS,
  type AllowedNetworks,
  type AllowedNetworksInput,
  type Network,
} from './events/address-policy.js';
// The OpenAPI document's parts, for checking answers against it.
export type {
  JsonSchema,
  JsonSchemaType,
  JsonValue,
  OpenApiApiKeyScheme,
  OpenApiHeader,
  OpenApiMediaType,
  OpenApiOperation,
  OpenApiParameter,
  OpenApiPathItem,
  OpenApiReference,
  OpenApiResponse,
  OpenApiSecurityRequirement,
} from './http/openapi.js';
