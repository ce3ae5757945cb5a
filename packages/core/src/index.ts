/**
 * @ipokit/core: the pure engine behind the ipokit routers and stores.
 *
 * The public surface is this list and nothing else (docs/spec.md#surface): the wire and store
 * types, the errors, the framework-free handler the adapters wrap, the settings, the OpenAPI
 * document, the operator's functions (datasets, accounts, keys) and the IST day. What a
 * storage backend, rate limiter or adapter restates (folding, status table, bucket grid, the
 * sliding window, error bodies) is on `@ipokit/core/backend`; the conformance suites are on
 * `@ipokit/testing`. `npm run api` records all three in api/*.api.md.
 */

// The wire: what a client receives (docs/spec.md#ipo-object).
export {
  EXCHANGES,
  GMP_FIELDS,
  GMP_INTERVALS,
  IPO_TYPES,
  STATUS_VALUES,
  type ErrorBody,
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
  type ListResponse,
  type Plan,
  type RateWindowName,
  RATE_WINDOWS,
  type ScheduleEvent,
  EVENT_TYPES,
  type EventType,
} from './model/types.js';

// The store, as capabilities (docs/spec.md#storage).
export type {
  AccountRecord,
  AccountStore,
  ActiveKeyLimits,
  ApiKeyRecord,
  DatasetConflict,
  GmpAggregationsPaise,
  GmpBucket,
  GmpBucketQuery,
  IpoRecord,
  IpoRow,
  IpoStore,
  KeyGrant,
  ListQuery,
  RateLimiter,
  RateLimitOutcome,
  RateLimitWindow,
  RateLimitWindowState,
  SnapshotRecord,
  Store,
  StoreCallOptions,
  UsageCharge,
  UsageRoute,
  UsageRow,
  WebhookRecord,
  WebhookStore,
  WriteOptions,
  EventRecord,
  DeliveryRecord,
  DeliveryState,
  ClaimedDelivery,
  DeliveryResult,
} from './model/types.js';

// Errors (docs/spec.md#errors).
export {
  IpokitError,
  isIpokitError,
  type DatasetProblem,
  type ErrorCode,
  type IpokitErrorOptions,
  type WireErrorCode,
} from './model/errors.js';

// The handler the adapters wrap, and its settings (docs/spec.md#adapters, #settings).
export {
  createIpoHandler,
  type HandlerRequest,
  type HandlerResponse,
  type IpoHandler,
  type IpoRouterArgs,
} from './http/handler.js';
// The account holder's routes the adapters wrap (docs/spec.md#account-router).
export {
  createAccountHandler,
  DASHBOARD_KEY_ID,
  MAX_ACCOUNT_BODY_BYTES,
  type AccountHandler,
  type AccountHandlerOptions,
  type AccountRequest,
  type AccountRequestBody,
  type AccountRouterArgs,
  type DashboardAsset,
  type DashboardAssets,
} from './http/account-handler.js';
export {
  DEFAULT_OPTIONS,
  resolveOptions,
  type IpoRouterOptions,
  type KeylessLimits,
  type LimitSettings,
  type PlanLimits,
  type RateLimitHeaders,
  type ResolvedOptions,
} from './http/options.js';

// The OpenAPI document (docs/spec.md#openapi).
export {
  OPENAPI_PATH,
  openApiDocument,
  type JsonSchema,
  type JsonSchemaType,
  type JsonValue,
  type OpenApiApiKeyScheme,
  type OpenApiDocument,
  type OpenApiDocumentOptions,
  type OpenApiHeader,
  type OpenApiMediaType,
  type OpenApiOperation,
  type OpenApiParameter,
  type OpenApiPathItem,
  type OpenApiReference,
  type OpenApiResponse,
  type OpenApiSecurityRequirement,
} from './http/openapi.js';

// The operator's functions: data, accounts, keys (docs/spec.md#datasets, #keys).
export { deleteIpos, importDataset } from './dataset/import.js';
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
// Webhooks (docs/spec.md#webhooks).
export {
  createWebhook,
  deleteWebhook,
  DEFAULT_WEBHOOK_PLANS,
  listDeliveries,
  listWebhooks,
  replayDelivery,
  type DeliveryInfo,
  type WebhookInfo,
  type WebhookOptions,
} from './events/webhooks.js';
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
export {
  createDatasetChecker,
  validateDataset,
  type DatasetChecker,
  type DatasetItem,
  type DatasetRecordPlace,
} from './dataset/dataset.js';
export type { Dataset, DatasetIpo, DatasetSnapshot, DatasetSource } from './model/types.js';

// The IST calendar day every status is derived on (docs/spec.md#status).
export { todayInIst } from './model/dates.js';
