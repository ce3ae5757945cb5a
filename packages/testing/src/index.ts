/**
 * `@ipokit/testing`: the storage conformance suite, the reference store it is
 * checked against, the reference implementations of the store queries, fast-check
 * arbitraries of valid records, and the HTTP conformance suite, which validates every
 * response against the OpenAPI document. Needs `vitest` and `fast-check`, and for the
 * HTTP suite `ajv` and `ajv-formats` (optional peer dependencies); nothing here is
 * imported by `@ipokit/core` itself.
 *
 * @example
 * ```ts
 * // my-store.test.ts: a store passes when every check of the suite passes
 * import { testStore } from '@ipokit/testing';
 * import { memoryStore } from '@ipokit/storage-memory';
 *
 * testStore({ name: 'memoryStore', createStore: () => memoryStore(), destroyStore: (store) => store.close?.() });
 * ```
 */
export { rateLimitModel } from './limiter-model.js';
export {
  testAccountStore,
  testIpoStore,
  testLimiter,
  testStore,
  type TestAccountStoreOptions,
  type TestIpoStoreOptions,
  type TestLimiterOptions,
  type TestStoreOptions,
} from './store-suite.js';
export { referenceStore } from './reference-store.js';
export { testClientAddress, type ClientAddressTarget } from './client-address.js';
export { latestSnapshot, latestSubscription, matchesQ, referenceBuckets, referenceFind, referenceList, referenceSubscriptionSeries } from './reference.js';
export { asciiLower } from '@ipokit/core/backend';
export {
  ARBITRARY_DAYS,
  ARBITRARY_FIRST_DAY,
  ARBITRARY_FIRST_INSTANT,
  ARBITRARY_INSTANT_DAYS,
  datasetArbitrary,
  instantArbitrary,
  ipoDatesArbitrary,
  ipoIdArbitrary,
  ipoNameArbitrary,
  ipoRecordArbitrary,
  ipoRecordsArbitrary,
  isoDateArbitrary,
  listingPricesArbitrary,
  makeIpo,
  makeSnapshot,
  makeSubscription,
  slugArbitrary,
  snapshotRecordArbitrary,
  subscriptionRecordArbitrary,
  subscriptionTimesArbitrary,
  subscriptionValueArbitrary,
  symbolArbitrary,
  textArbitrary,
  toDataset,
  type DatasetArbitraryOptions,
  type DateRangeOptions,
  type RecordDataset,
  type RecordsAsDataset,
} from './arbitraries.js';
export {
  STORE_FAULT_SECRET,
  httpChecks,
  openApiValidator,
  runCheck,
  testHttp,
  type CheckContext,
  type HttpCheck,
  type HttpResult,
  type HttpTarget,
  type OpenApiExchange,
  type OpenApiValidator,
  type RawRequestOptions,
  type RequestOptions,
  type StartedTarget,
  type StoreFault,
  type StoreMethod,
  type TestClock,
  type TestHttpOptions,
} from './http-suite.js';
export {
  EXPECTED_ORDER,
  FIXTURE_NOW,
  FIXTURE_TODAY,
  FUTURE_SNAPSHOT_AT,
  IPO_IDS,
  bucketOf,
  expectedIpo,
  expectedSeries,
  expectedSnapshot,
  expectedSubscription,
  expectedSubscriptionSeries,
  fixtureDataset,
  fixtureStatus,
  seedFixture,
  type FixtureKeys,
  type SeededFixture,
  type SeriesQuery,
  type SubscriptionSeriesQuery,
} from './http-fixture.js';
export {
  FuzzViolation,
  REPORTED_BUGS,
  checkFuzzResponse,
  compareFuzzReports,
  describeRequest,
  fuzzHttp,
  fuzzRequestArbitrary,
  generatedRequest,
  type FixtureKeyName,
  type FuzzExpectations,
  type FuzzHttpOptions,
  type FuzzReport,
  type FuzzRequest,
  type FuzzResponse,
  type FuzzRoute,
  type HeaderPart,
  type KnownBug,
  type SentRequest,
  type StatusCounts,
} from './fuzz.js';
export { testFuzz, type TestFuzzOptions } from './fuzz-suite.js';
export { testWebhookStore, type TestWebhookStoreOptions, type WebhookTestStore } from './webhook-suite.js';
export { testWebhookWorker, type TestWebhookWorkerOptions } from './worker-suite.js';
export { testSourceStore, type SourceTestStore, type SourceTestTarget, type TestSourceStoreOptions } from './source-store-suite.js';
export { accountChecks, testAccountRouter, type AccountHttpTarget, type AccountTargetOptions, type TestAccountRouterOptions } from './account-suite.js';
