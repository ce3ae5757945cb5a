/**
 * @ipokit/core: the pure engine behind the ipokit routers and stores.
 *
 * The public surface is this list and nothing else (docs/spec.md#surface): what an app that
 * mounts a router and runs the service uses. The wire types and their vocabularies, the
 * store's capabilities as a whole, the errors, the router's settings, the OpenAPI document,
 * the operator's functions (datasets, accounts, keys, webhook endpoints) and the IST day.
 * What a storage backend or rate limiter restates or uses (records, folding, status table,
 * bucket grid, the sliding window, address policy) is on `@ipokit/core/backend`; what a
 * framework adapter needs (the handlers, the request-target, the prefix) on
 * `@ipokit/core/adapter`; the conformance suites are `@ipokit/testing`. `npm run api`
 * records each list in api/*.api.md.
 */

// The wire: what a client receives (docs/spec.md#ipo-object).
export {
  EVENT_TYPES,
  EXCHANGES,
  GMP_FIELDS,
  GMP_INTERVALS,
  IPO_TYPES,
  RATE_WINDOWS,
  STATUS_VALUES,
  SUBSCRIPTION_CATEGORIES,
  TEST_EVENT_TYPE,
  USAGE_ROUTES,
  type DeliveryEventType,
  type ErrorBody,
  type EventType,
  type Exchange,
  type GmpField,
  type GmpInterval,
  type GmpSeries,
  type GmpSnapshot,
  type Ipo,
  type IpoDates,
  type IpoResponse,
  type IpoStatus,
  type IpoType,
  type ListingPrice,
  type ListResponse,
  type Plan,
  type PriceBand,
  type RateWindowName,
  type ScheduleEvent,
  type SubscriptionCategory,
  type SubscriptionPoint,
  type SubscriptionSeries,
  type SubscriptionSnapshot,
  type SubscriptionTimes,
  type UsageRoute,
} from './model/types.js';

// The store, as the capabilities a router or function asks for (docs/spec.md#storage); the
// records and calls inside them are on @ipokit/core/backend.
export type { AccountStore, IpoStore, RateLimiter, Store, UsageRow, WebhookStore } from './model/types.js';

// Errors (docs/spec.md#errors).
export { IpokitError, isIpokitError, type DatasetProblem, type ErrorCode } from './model/errors.js';

// The routers' arguments and settings (docs/spec.md#adapters, #settings).
export type { IpoRouterArgs } from './http/handler.js';
export type { AccountRouterArgs } from './http/account-handler.js';
export type { IpoRouterOptions, KeylessLimits, LimitSettings, PlanLimits, RateLimitHeaders } from './model/options.js';

// The OpenAPI document (docs/spec.md#openapi).
export { OPENAPI_PATH, openApiDocument, type OpenApiDocument, type OpenApiDocumentOptions } from './http/openapi.js';

// The operator's functions: data (docs/spec.md#datasets).
export { deleteIpos, importDataset } from './dataset/import.js';
export { validateDataset } from './dataset/dataset.js';
export type { Dataset, DatasetIpo, DatasetSnapshot, DatasetSource, DatasetSubscription } from './model/types.js';
// Accounts and keys (docs/spec.md#keys, #limits).
export {
  createAccount,
  createApiKey,
  getAccount,
  getAccountWindows,
  getUsage,
  listAccounts,
  listApiKeys,
  revokeApiKey,
  rotateApiKey,
  updateAccount,
  type Account,
  type AdminOptions,
  type ApiKeyInfo,
  type CreatedApiKey,
} from './accounts/admin.js';
export type { AccountWindow } from './limits/rate-limit.js';
// Webhook endpoints (docs/spec.md#webhooks); @ipokit/webhooks delivers to them.
export {
  createWebhook,
  deleteWebhook,
  DEFAULT_WEBHOOK_PLANS,
  getDelivery,
  getWebhookLimits,
  listDeliveries,
  listWebhooks,
  replayDelivery,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
  type DeliveryDetail,
  type DeliveryInfo,
  type WebhookInfo,
  type WebhookLimits,
  type WebhookOptions,
} from './events/webhooks.js';

// The IST calendar day every status is derived on (docs/spec.md#status).
export { todayInIst } from './model/dates.js';
