/**
 * The HTTP conformance suite (graphql-http's audits pattern): a list of
 * `{ id, name: 'MUST ...', fn }` checks of the contract, run over real HTTP against any
 * adapter (Express, Koa, ...) on any store. Each check gets a fresh store with the
 * fixture of `http-fixture.ts`, a server on port 0 and a controllable clock.
 */
import http from 'node:http';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createApiKey, type DatasetIpo, type ErrorBody, getUsage, GMP_FIELDS, type GmpField, type GmpInterval, type GmpSeries, importDataset, type Ipo, type IpoResponse, type IpoRouterOptions, type IpoStatus, listApiKeys, type ListResponse, openApiDocument, type OpenApiDocument, type RateLimiter, type RateLimitHeaders, type RateWindowName, type ResponseInfo, revokeApiKey, rotateApiKey, type Store, type StoreCallInfo, type SubscriptionSeries, updateAccount } from '@ipokit/core';
import { decodeComponent, isOpenApiPath, type OpenApiHeader, type OpenApiReference, type OpenApiResponse } from '@ipokit/core/backend';
import {
  EXPECTED_ORDER,
  FIXTURE_NOW,
  IPO_IDS,
  expectedIpo,
  expectedSeries,
  expectedSnapshot,
  expectedSubscription,
  expectedSubscriptionSeries,
  fixtureDataset,
  seedFixture,
  type FixtureKeys,
  type SeededFixture,
  type SubscriptionSeriesQuery,
} from './http-fixture.js';
import { SPEC_CODES as CODES, SPEC_TITLES as TITLES } from './spec-error-tables.js';

// ---------------------------------------------------------------------------------------
// Public surface

/** A server started by an {@link HttpTarget}. */
export interface StartedTarget {
  /** The URL the router is mounted at, without a trailing slash, e.g. `http://127.0.0.1:41234/ipos`. */
  baseUrl: string;
  /** Stops the server (closing open connections). */
  close(): Promise<void>;
}

/**
 * An adapter under test: starts an app that mounts the router built from `store` and
 * `options` (listening on 127.0.0.1, port 0) and says where.
 *
 * @example
 * ```ts
 * const target: HttpTarget = {
 *   name: 'express',
 *   async start(store, options) {
 *     const app = express();
 *     app.use('/ipos', ipoRouter(store, options));
 *     const server = app.listen(0, '127.0.0.1');
 *     await once(server, 'listening');
 *     const { port } = server.address() as AddressInfo;
 *     return { baseUrl: `http://127.0.0.1:${port}/ipos`, close: () => new Promise((r) => server.close(() => r())) };
 *   },
 * };
 * ```
 */
export interface HttpTarget {
  /** Shown in the describe block, e.g. `'express 5'`. */
  name: string;
  start(store: Store, options: IpoRouterOptions): Promise<StartedTarget>;
  /**
   * Starts the router inside an app of the framework's own, in this order: a middleware
   * that sets the response header `x-app: before` on every response; `GET /health`
   * answering 200 `ok` (text/plain); the router at `/ipos`; `GET /iposX` answering 200
   * `app iposX` and `GET /other` answering 200 `app other`; last, a handler answering
   * every other request 404 `app 404` (text/plain). `baseUrl` is the router's mount URL.
   */
  startInApp(store: Store, options: IpoRouterOptions): Promise<StartedTarget>;
}

/** A response as the checks see it. */
export interface HttpResult {
  status: number;
  /** Header names lowercased; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** The body as sent (UTF-8). */
  text: string;
  /** The body parsed as JSON, or `undefined` when it is not JSON. */
  json: unknown;
}

/** Options of {@link CheckContext.request}. */
export interface RequestOptions {
  /** Sent as `x-api-key` (an empty string sends an empty header). */
  key?: string;
  /** Default `GET`. */
  method?: string;
  headers?: Record<string, string>;
}

/** Options of {@link CheckContext.raw}: headers may repeat (an array sends several lines). */
export interface RawRequestOptions {
  method?: string;
  headers?: Record<string, string | string[]>;
  /** Send the request-target in absolute-form (`http://host:port/ipos/...`, RFC 9112 3.2.2). */
  absoluteForm?: boolean;
}

/** The clock every router of a check reads (its `now` option). */
export interface TestClock {
  /** The current instant, epoch ms. Starts at {@link FIXTURE_NOW}. */
  now(): number;
  set(ms: number): void;
  advance(ms: number): void;
}

/** Store methods a check can make fail. */
export type StoreMethod = 'findApiKey' | 'recordKeyUse' | 'hitRateLimit' | 'listIpos' | 'findIpo' | 'gmpBuckets' | 'subscriptionSeries';

/** A failure injected into the store the router sees: every call of `method` rejects or never settles. */
export interface StoreFault {
  method: StoreMethod | '*';
  mode: 'reject' | 'hang';
}

/** Text in every injected store failure; it must never reach a client. */
export const STORE_FAULT_SECRET = 'SELECT secret FROM ipokit.api_keys -- db-7.internal.example';

/** What a check can do. */
export interface CheckContext {
  /** The mount URL of the running server (changes on {@link CheckContext.restart}). */
  readonly baseUrl: string;
  /**
   * GET (or `method`) `baseUrl + target`, with fetch. `target` is what follows the mount,
   * e.g. `'?status=open'`, `'/ORBIT/gmp?interval=5m'`; fetch sends it as written, except
   * that it percent-encodes characters a URL cannot hold (spaces, non-ASCII).
   */
  request(target: string, options?: RequestOptions): Promise<HttpResult>;
  /** Like `request` but with node:http: the target goes out verbatim and headers may repeat. */
  raw(target: string, options?: RawRequestOptions): Promise<HttpResult>;
  /** Keys of the fixture accounts. */
  keys: FixtureKeys;
  /** Account ids and key ids, for the admin functions. */
  fixture: SeededFixture;
  clock: TestClock;
  /** The store the router was built on (wraps the suite's store to inject faults). */
  store: Store;
  /**
   * The store `createStore` returned: the same data as {@link CheckContext.store} but
   * another store object, so admin calls made on it reach the router as another
   * process's would (through the store, not the router's key cache).
   */
  otherProcessStore: Store;
  /** The router's rate limiter: the store's own, or the suite's `createLimiter` one (without faults). */
  limiter: RateLimiter;
  /** Every value passed to `onError` so far. */
  errors: unknown[];
  /** How many times a router read the clock so far. */
  readonly clockReads: number;
  /** Makes store calls fail from now on (`null` heals it). */
  fault(fault: StoreFault | null): void;
  /**
   * Stops the server and starts a new one on the same store with the suite's base options
   * merged with `options` (shallowly; the check's own `options` are not reapplied).
   * Rate-limit state lives in the store and survives.
   */
  restart(options?: IpoRouterOptions): Promise<void>;
  /** Like {@link CheckContext.restart}, with the router inside an app ({@link HttpTarget.startInApp}). */
  restartInApp(options?: IpoRouterOptions): Promise<void>;
}

/** One conformance check. */
export interface HttpCheck {
  /** Stable identifier, e.g. `'ratelimit-quota-exact'`. */
  id: string;
  /** What the contract requires, starting with `MUST`. */
  name: string;
  /**
   * Router options merged (shallowly) over the suite's base options: the clock, quotas so
   * large that nothing is limited (pass `limits: {}` for the contract's defaults), and an
   * `onError` that records into `ctx.errors`.
   */
  options?: IpoRouterOptions;
  /** When false (default), the check also fails if `onError` was called. */
  expectsErrors?: boolean;
  fn(ctx: CheckContext): Promise<void>;
}

/** Options of {@link testHttp}. */
export interface TestHttpOptions {
  target: HttpTarget;
  /** Returns an EMPTY store; called before every check. */
  createStore: () => Store | Promise<Store>;
  /** Called after every check with the store `createStore` returned. */
  destroyStore?: (store: Store) => void | Promise<void>;
  /**
   * Returns a rate limiter holding no hits, passed to every router as its `limiter` option
   * (so the store's own is not used); called before every check. Default: none.
   */
  createLimiter?: () => RateLimiter | Promise<RateLimiter>;
  /** Called after every check with the limiter `createLimiter` returned. */
  destroyLimiter?: (limiter: RateLimiter) => void | Promise<void>;
  /** Runs only the checks with these ids (for debugging). */
  only?: readonly string[];
}

/**
 * Registers the HTTP conformance suite as a vitest `describe` block with one `it` per
 * check of {@link httpChecks}. Every check gets a fresh store with the fixture imported,
 * the fixture accounts and keys, and a server started by `target` (torn down after).
 *
 * @example
 * ```ts
 * // express.test.ts
 * import { testHttp } from '@ipokit/testing';
 * import { memoryStore } from '@ipokit/storage-memory';
 *
 * testHttp({ target: expressTarget, createStore: () => memoryStore(), destroyStore: (s) => s.close?.() });
 * ```
 */
export function testHttp(options: TestHttpOptions): void {
  const checks = httpChecks().filter((c) => options.only === undefined || options.only.includes(c.id));
  describe(`HTTP conformance: ${options.target.name}`, () => {
    for (const check of checks) {
      it(`${check.id}: ${check.name}`, () => runCheck(options, check));
    }
  });
}

/**
 * Runs one check outside vitest's registration (for custom runners): fresh store,
 * fixture, server, the check, teardown. Rejects when the check fails.
 *
 * @example
 * ```ts
 * for (const check of httpChecks()) await runCheck({ target, createStore: () => memoryStore() }, check);
 * ```
 */
export async function runCheck(options: TestHttpOptions, check: HttpCheck): Promise<void> {
  const store = await options.createStore();
  const limiter = options.createLimiter === undefined ? undefined : await options.createLimiter();
  const server: { current: StartedTarget | null } = { current: null };
  const state = { now: FIXTURE_NOW, reads: 0, errors: [] as unknown[], fault: null as StoreFault | null };
  try {
    const fixture = await seedFixture(store);
    const routed = faultyStore(store, state);
    const base: IpoRouterOptions = {
      ...(limiter === undefined ? {} : { limiter: faultyStore(limiter, state) }),
      now: () => {
        state.reads += 1;
        return new Date(state.now);
      },
      limits: {
        free: { perMinute: GENEROUS, gmpPerMinute: GENEROUS },
        paid: { perMinute: GENEROUS, gmpPerMinute: GENEROUS },
        pro: { perMinute: GENEROUS, gmpPerMinute: GENEROUS },
        keyless: { perMinute: GENEROUS },
      },
      onError: (error) => {
        state.errors.push(error);
      },
    };
    let mode: RateLimitHeaders = 'draft-6';
    const start = async (extra: IpoRouterOptions, inApp = false): Promise<void> => {
      mode = extra.rateLimitHeaders ?? 'draft-6';
      if (server.current !== null) {
        const running = server.current;
        server.current = null;
        await running.close();
      }
      const target = options.target;
      server.current = await (inApp ? target.startInApp(routed, { ...base, ...extra }) : target.start(routed, { ...base, ...extra }));
    };
    await start(check.options ?? {});
    const baseUrl = (): string => {
      if (server.current === null) throw new Error('no server is running');
      return server.current.baseUrl.replace(/\/$/, '');
    };
    const ctx: CheckContext = {
      get baseUrl() {
        return baseUrl();
      },
      request: async (target, o) => {
        const url = baseUrl() + target;
        const res = await fetchResult(url, o);
        await expectConforms(baseUrl(), (o?.method ?? 'GET').toUpperCase(), new URL(url).pathname, res, mode);
        return res;
      },
      raw: async (target, o) => {
        const res = await rawResult(new URL(baseUrl()), target, o);
        await expectConforms(baseUrl(), (o?.method ?? 'GET').toUpperCase(), new URL(baseUrl()).pathname + (target.split('?')[0] ?? ''), res, mode);
        return res;
      },
      keys: fixture.keys,
      fixture,
      clock: {
        now: () => state.now,
        set: (ms) => {
          state.now = ms;
        },
        advance: (ms) => {
          state.now += ms;
        },
      },
      store: routed,
      otherProcessStore: store,
      limiter: limiter ?? store,
      errors: state.errors,
      get clockReads() {
        return state.reads;
      },
      fault: (f) => {
        state.fault = f;
      },
      restart: (o) => start(o ?? {}),
      restartInApp: (o) => start(o ?? {}, true),
    };
    await check.fn(ctx);
    if (check.expectsErrors !== true) expect(state.errors, 'onError must not be called').toEqual([]);
  } finally {
    state.fault = null;
    const running = server.current;
    server.current = null;
    try {
      await running?.close();
    } finally {
      try {
        await options.destroyStore?.(store);
      } finally {
        if (limiter !== undefined) await options.destroyLimiter?.(limiter);
      }
    }
  }
}

/**
 * Every check of the contract, in a stable order. Ids are unique and stable.
 *
 * @example
 * ```ts
 * httpChecks().map((c) => c.id); // ['auth-keyless-list', ...]
 * ```
 */
export function httpChecks(): HttpCheck[] {
  return [
    ...authChecks(),
    ...errorChecks(),
    ...headerChecks(),
    ...rateLimitChecks(),
    ...includeGmpChecks(),
    ...seriesChecks(),
    ...listChecks(),
    ...ipoChecks(),
    ...badInputChecks(),
    ...jsonChecks(),
    ...openApiChecks(),
    ...subscriptionChecks(),
    ...qChecks(),
    ...hookChecks(),
  ];
}

/** The `onResponse` and `onStoreCall` hooks (docs/spec.md#metrics). */
function hookChecks(): HttpCheck[] {
  return [
    {
      id: 'hooks-on-response',
      name: 'MUST tell onResponse of every answered request once: its route name (never the path), method, status, plan, key cache and the limiter\'s decision',
      async fn(ctx) {
        const infos: ResponseInfo[] = [];
        await ctx.restart({ onResponse: (info) => infos.push(info), limits: { paid: { perMinute: 2 } } });
        const statuses = [
          (await ctx.request('/ORBIT', { key: ctx.keys.paid })).status,
          (await ctx.request('?status=open', { key: ctx.keys.paid })).status,
          (await ctx.request('/ORBIT/gmp', { key: ctx.keys.paid })).status,
          (await ctx.request('/a/b/c')).status,
          (await ctx.request('?status=open')).status,
          (await ctx.request('/ORBIT', { method: 'DELETE' })).status,
          (await ctx.request('/NOPE', { key: ctx.keys.pro })).status,
        ];
        expect(statuses).toEqual([200, 200, 429, 404, 200, 405, 404]);
        const minute = (refusedBy: RateWindowName | null = null, windows: RateWindowName[] = ['minute']): ResponseInfo['rateLimit'] => ({ windows, refusedBy });
        expect(infos.map(({ durationMs: _, ...rest }) => rest)).toEqual([
          { router: 'api', route: 'ipo', method: 'GET', status: 200, plan: 'paid', rateLimit: minute(), keyCache: 'miss' },
          { router: 'api', route: 'list', method: 'GET', status: 200, plan: 'paid', rateLimit: minute(), keyCache: 'hit' },
          { router: 'api', route: 'gmp', method: 'GET', status: 429, plan: 'paid', rateLimit: minute('minute', ['minute', 'gmp-minute']), keyCache: 'hit' },
          { router: 'api', route: 'unknown', method: 'GET', status: 404, plan: null, rateLimit: null, keyCache: null },
          { router: 'api', route: 'list', method: 'GET', status: 200, plan: 'keyless', rateLimit: minute(), keyCache: null },
          { router: 'api', route: 'ipo', method: 'DELETE', status: 405, plan: null, rateLimit: null, keyCache: null },
          { router: 'api', route: 'ipo', method: 'GET', status: 404, plan: 'pro', rateLimit: minute(), keyCache: 'miss' },
        ]);
        for (const info of infos) expect(info.durationMs).toBeGreaterThanOrEqual(0);
      },
    },
    {
      id: 'hooks-throwing',
      name: 'MUST answer as usual when onResponse or onStoreCall throws, and pass the error to onError',
      options: {
        onResponse: () => {
          throw new Error('onResponse failed');
        },
        onStoreCall: () => {
          throw new Error('onStoreCall failed');
        },
      },
      expectsErrors: true,
      async fn(ctx) {
        const res = await ctx.request('/ORBIT', { key: ctx.keys.paid });
        expect(res.status).toBe(200);
        const messages = ctx.errors.map((e) => (e instanceof Error ? e.message : String(e)));
        expect(messages).toContain('onResponse failed');
        expect(messages).toContain('onStoreCall failed');
      },
    },
    {
      id: 'hooks-store-calls',
      name: 'MUST tell onStoreCall of each store call with its operation and outcome, a timeout (storeTimeoutMs) as timeout',
      expectsErrors: true,
      async fn(ctx) {
        const calls: StoreCallInfo[] = [];
        // The answered calls run without a deadline: on a loaded machine a real database's
        // first call (a new connection) can take longer than any short one (seen in CI: 503).
        await ctx.restart({ onStoreCall: (info) => calls.push(info) });
        expect((await ctx.request('/ORBIT', { key: ctx.keys.paid })).status).toBe(200);
        const ok = calls.splice(0);
        expect(ok.every((c) => c.outcome === 'ok' && c.durationMs >= 0)).toBe(true);
        expect(ok.map((c) => c.op)).toEqual(expect.arrayContaining(['hitRateLimit', 'findIpo']));
        // A deadline the hung call meets and the others (warmed by one request) do not.
        await ctx.restart({ storeTimeoutMs: 1_000, onStoreCall: (info) => calls.push(info) });
        expect((await ctx.request('/ORBIT', { key: ctx.keys.paid })).status).toBe(200);
        calls.splice(0);
        ctx.fault({ method: 'findIpo', mode: 'hang' });
        expect((await ctx.request('/ORBIT', { key: ctx.keys.paid })).status).toBe(503);
        ctx.fault({ method: 'listIpos', mode: 'reject' });
        expect((await ctx.request('?status=open', { key: ctx.keys.paid })).status).toBe(503);
        ctx.fault(null);
        expect(calls.filter((c) => c.outcome !== 'ok').map(({ op, outcome }) => ({ op, outcome }))).toEqual([
          { op: 'findIpo', outcome: 'timeout' },
          { op: 'listIpos', outcome: 'error' },
        ]);
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------
// OpenAPI conformance: every response a check receives is validated against the document

/** One request and its response, as {@link OpenApiValidator.check} reads them. */
export interface OpenApiExchange {
  /** The method sent, e.g. `GET`. */
  method: string;
  /** The path below the mount as sent (still percent-encoded, no query), e.g. `/ORBIT/gmp`; `''` or `/` for the list. */
  path: string;
  /** The mount path the request reached, e.g. `/ipos` (`''` at the root): the served document's `servers` URL. */
  mount: string;
  status: number;
  /** Response headers, names lowercased. */
  headers: Readonly<Record<string, string>>;
  /** The response body as sent (UTF-8). */
  body: string;
}

/** Validates responses against an OpenAPI document of the API, with ajv (JSON Schema 2020-12 and formats). */
export interface OpenApiValidator {
  /** The document responses are validated against. */
  readonly document: OpenApiDocument;
  /**
   * What is wrong with a response, as readable sentences; `[]` when it conforms. A path of
   * the document is matched as the router reads paths (segments percent-decoded once, one
   * trailing slash tolerated). Checked: that the document lists the status for the
   * route's operation (GET, or HEAD; any other method only 405, or the 414 and 500 that
   * come before the method check), the body against the response's schema (HEAD: no
   * body), every documented header (required ones present, values valid), and that no
   * `RateLimit-*`, `Retry-After` or `Allow` header appears where the response does not
   * document it. Paths the document does not list may only answer the unknown-path 404
   * (or 414, or 500), with the error body and no rate-limit header; the served document
   * (`/-/openapi.json`) must be exactly `openApiDocument({ serverUrl: mount })`.
   */
  check(exchange: OpenApiExchange): string[];
}

/**
 * Builds a validator of responses against `document` (default: `openApiDocument()`).
 * Every schema is compiled with ajv's JSON Schema 2020-12 validator in strict mode, with
 * ajv-formats; a schema that does not compile or a `$ref` that does not resolve throws
 * when a response first needs it. Needs the optional peer dependencies `ajv` and
 * `ajv-formats`, loaded only here (the storage suite runs without them).
 *
 * @example
 * ```ts
 * const validator = await openApiValidator();
 * const res = await fetch('http://localhost:3000/ipos/ORBIT', { headers: { 'x-api-key': key } });
 * const headers = Object.fromEntries(res.headers); // names come lowercased
 * validator.check({ method: 'GET', path: '/ORBIT', mount: '/ipos', status: res.status, headers, body: await res.text() }); // [] when it conforms
 * ```
 */
export async function openApiValidator(document: OpenApiDocument = openApiDocument()): Promise<OpenApiValidator> {
  const [ajvModule, formatsModule] = await Promise.all([import('ajv/dist/2020.js'), import('ajv-formats')]);
  // CommonJS modules whose module.exports is the class (or plugin) and also its own `.default`.
  const Ajv2020 = ajvModule.default.default;
  const addFormats = formatsModule.default.default;
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  // The document's own keys are not JSON Schema keywords: declared so that strict mode
  // accepts the document as the root every `#/components/...` reference resolves in.
  ajv.addVocabulary(['openapi', 'jsonSchemaDialect', 'info', 'servers', 'tags', 'security', 'paths', 'components', 'webhooks', 'externalDocs']);
  ajv.addSchema({ ...document, $id: OPENAPI_SCHEMA_ID });
  const compiled = new Map<string, ValidateFunction>();
  const validatorAt = (pointer: string[]): ValidateFunction => {
    const fragment = pointer.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
    let validate = compiled.get(fragment);
    if (validate === undefined) {
      validate = ajv.getSchema(`${OPENAPI_SCHEMA_ID}#/${fragment}`);
      if (validate === undefined) throw new Error(`the OpenAPI document has no schema at #/${pointer.join('/')}`);
      compiled.set(fragment, validate);
    }
    return validate;
  };
  const served = new Map<string, string>();
  const servedText = (mount: string): string => {
    let text = served.get(mount);
    if (text === undefined) {
      text = JSON.stringify(openApiDocument({ serverUrl: mount === '' ? '/' : mount }));
      served.set(mount, text);
    }
    return text;
  };
  return {
    document,
    check(x) {
      const where = `${x.method} ${x.mount}${x.path} answered ${x.status}`;
      const template = templateOf(document, x.path);
      if (template !== null) {
        const item = document.paths[template];
        const name = x.method === 'HEAD' ? 'head' : 'get';
        const op = item[name];
        const response = op.responses[String(x.status)];
        if (response === undefined) {
          return [`${where}, a status the OpenAPI document does not list for ${op.operationId} (${template}): it lists ${Object.keys(op.responses).join(', ')}`];
        }
        const other = x.method !== 'GET' && x.method !== 'HEAD';
        if (other && ![405, 414, 500].includes(x.status)) return [`${where}: a method other than GET and HEAD may only be answered 405 (or 414, 500)`];
        if (!other && x.status === 405) return [`${where}: the document lists 405 for other methods, never for GET or HEAD`];
        return conform(x, where, response, ['paths', template, name, 'responses', String(x.status)], document, validatorAt);
      }
      const openapi = isOpenApiPath(x.path === '' ? '/' : x.path);
      if (openapi && x.status === 200) {
        const problems = conform(x, where, { description: 'the served OpenAPI document', headers: { 'Cache-Control': { $ref: '#/components/headers/CacheControl' } } }, null, document, validatorAt);
        if (!/^application\/json\s*(;|$)/i.test(x.headers['content-type'] ?? '')) problems.push(`${where}: the document is served as ${x.headers['content-type'] ?? 'no content-type'}`);
        if (x.method !== 'HEAD' && x.body !== servedText(x.mount)) {
          problems.push(`${where}: the served document is not openApiDocument({ serverUrl: ${JSON.stringify(x.mount === '' ? '/' : x.mount)} }) (got ${x.body.slice(0, 120)}...)`);
        }
        return problems;
      }
      const schema = UNROUTED_ERRORS[x.status];
      if (schema === undefined || (x.status === 405 && !openapi)) {
        return [`${where}: ${x.path} is no path of the OpenAPI document, where only the unknown-path 404 (or 414, 500) may answer`];
      }
      const headers: OpenApiResponse['headers'] = { 'Cache-Control': { $ref: '#/components/headers/CacheControl' } };
      if (x.status === 405) headers['Allow'] = { $ref: '#/components/headers/Allow' };
      const response: OpenApiResponse = { description: schema, headers, content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } } };
      return conform(x, where, response, ['components', 'schemas', schema], document, validatorAt);
    },
  };
}

const OPENAPI_SCHEMA_ID = 'https://ipokit.invalid/openapi.json';
/** Headers whose presence must be documented for the response that carries them. */
const DOCUMENTED_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'allow'];
/** What a path the document does not list may answer (the served document's path: 405 too), and the body schema. */
const UNROUTED_ERRORS: Readonly<Record<number, string>> = { 404: 'NotFoundError', 405: 'MethodNotAllowedError', 414: 'UriTooLongError', 500: 'InternalError' };

/** The path of the document a path below the mount names, read as the router reads it; null for none. */
function templateOf(document: OpenApiDocument, path: string): keyof OpenApiDocument['paths'] | null {
  let p = path === '' ? '/' : path;
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  const segments = p === '/' ? [] : p.slice(1).split('/');
  for (const template of Object.keys(document.paths) as Array<keyof OpenApiDocument['paths']>) {
    const parts = template === '/' ? [] : template.slice(1).split('/');
    if (parts.length !== segments.length) continue;
    const matches = parts.every((part, i) => {
      const segment = segments[i] as string;
      return /^\{[^}]+\}$/.test(part) ? segment !== '' : decodeComponent(segment) === part;
    });
    if (matches) return template;
  }
  return null;
}

/**
 * Checks headers and body against one response object; `pointer` locates it in the
 * document (its body schema at `content/<media>/schema`), or, for a synthesised response,
 * names the body schema itself (null: no body schema).
 */
function conform(
  x: OpenApiExchange,
  where: string,
  response: OpenApiResponse,
  pointer: string[] | null,
  document: OpenApiDocument,
  validatorAt: (pointer: string[]) => ValidateFunction,
): string[] {
  const problems: string[] = [];
  const documented = new Set<string>();
  for (const [name, declared] of Object.entries(response.headers)) {
    documented.add(name.toLowerCase());
    const [header, schemaPointer] = resolveHeader(document, declared, pointer !== null && pointer[0] === 'paths' ? [...pointer, 'headers', name] : null);
    const value = x.headers[name.toLowerCase()];
    if (value === undefined) {
      if (header.required) problems.push(`${where} without the header ${name}, which the OpenAPI document requires`);
      continue;
    }
    let data: unknown = value;
    if (header.schema.type === 'integer' || header.schema.type === 'number') {
      if (!/^-?[0-9]+$/.test(value)) {
        problems.push(`${where} with ${name}: ${JSON.stringify(value)}, not an integer`);
        continue;
      }
      data = Number(value);
    }
    const validate = validatorAt(schemaPointer);
    if (!validate(data)) problems.push(`${where} with ${name}: ${JSON.stringify(value)}, which does not match the OpenAPI document: ${errorsText(validate, name)}`);
  }
  for (const name of DOCUMENTED_HEADERS) {
    if (x.headers[name] !== undefined && !documented.has(name)) {
      problems.push(`${where} with the header ${name}, which the OpenAPI document does not give this response`);
    }
  }
  if (x.method === 'HEAD') {
    if (x.body !== '') problems.push(`${where} with a body to HEAD`);
    return problems;
  }
  if (pointer === null) return problems;
  const content = response.content;
  if (content === undefined) {
    if (x.body !== '') problems.push(`${where} with a body, which the OpenAPI document does not give this response`);
    return problems;
  }
  const media = (x.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (content[media] === undefined) {
    problems.push(`${where} with content-type ${JSON.stringify(x.headers['content-type'] ?? '')}, not one the OpenAPI document lists (${Object.keys(content).join(', ')})`);
    return problems;
  }
  let body: unknown;
  try {
    body = JSON.parse(x.body);
  } catch {
    problems.push(`${where} with a body that is not JSON: ${x.body.slice(0, 200)}`);
    return problems;
  }
  const validate = validatorAt(pointer[0] === 'paths' ? [...pointer, 'content', media, 'schema'] : pointer);
  if (!validate(body)) {
    const shown = pointer.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    problems.push(`${where} with a body that does not match the OpenAPI document (#/${shown}): ${errorsText(validate, 'body')}; body: ${x.body.slice(0, 300)}`);
  }
  return problems;
}

/** A header object of a response, and the pointer of its schema. */
function resolveHeader(document: OpenApiDocument, declared: OpenApiHeader | OpenApiReference, inline: string[] | null): [OpenApiHeader, string[]] {
  if ('$ref' in declared) {
    const name = declared.$ref.replace('#/components/headers/', '');
    const header = document.components.headers[name];
    if (header === undefined) throw new Error(`the OpenAPI document's ${declared.$ref} does not resolve`);
    return [header, ['components', 'headers', name, 'schema']];
  }
  if (inline === null) throw new Error('an inline header needs the pointer of its response');
  return [declared, [...inline, 'schema']];
}

function errorsText(validate: ValidateFunction, dataVar: string): string {
  return (validate.errors ?? [])
    .slice(0, 8)
    .map((e) => `${dataVar}${e.instancePath} ${e.message ?? 'is invalid'}${e.params === undefined ? '' : ` ${JSON.stringify(e.params)}`}`)
    .join('; ');
}

const sharedValidators = new Map<RateLimitHeaders, Promise<OpenApiValidator>>();

/** One validator of the document per `rateLimitHeaders` value, for every check (compiled schemas are kept). */
function suiteValidator(mode: RateLimitHeaders): Promise<OpenApiValidator> {
  let validator = sharedValidators.get(mode);
  if (validator === undefined) sharedValidators.set(mode, (validator = openApiValidator(openApiDocument({ rateLimitHeaders: mode }))));
  return validator;
}

/** Rejects, failing the check, when a response of the router does not conform to the document of its settings. */
async function expectConforms(baseUrl: string, method: string, pathname: string, res: HttpResult, mode: RateLimitHeaders): Promise<void> {
  const mount = new URL(baseUrl).pathname.replace(/\/$/, '');
  // A path the URL parser moved out of the mount (`/ipos/../x`) never reached the router.
  if (pathname !== mount && !pathname.startsWith(`${mount}/`)) return;
  const problems = (await suiteValidator(mode)).check({ method, path: pathname.slice(mount.length), mount, status: res.status, headers: res.headers, body: res.text });
  if (problems.length > 0) throw new Error(`OpenAPI conformance: ${problems.join('\n')}`);
}

// ---------------------------------------------------------------------------------------
// Constants of the contract

const GENEROUS = 1_000_000;
const JSON_TYPE = 'application/json; charset=utf-8';
const CACHE_CONTROL = 'private, no-store';
const KEYLESS_INFO = 'To get all IPOs, please provide a valid API key.';
const T0 = FIXTURE_NOW;
const DAY = 86_400_000;
const STATUSES: readonly IpoStatus[] = ['open', 'upcoming', 'listed', 'closed', 'announced'];
const INTERVALS: readonly GmpInterval[] = ['5m', '10m', '15m', '30m', 'hourly', 'daily', 'weekly'];
const FIELDS: readonly GmpField[] = GMP_FIELDS;
const LIST_PARAMS = ['status', 'type', 'source', 'startDate', 'endDate', 'year', 'q', 'page', 'limit', 'includeGmp'] as const;
const RATE_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy', 'ratelimit', 'retry-after'] as const;

const ORBIT = IPO_IDS.orbit;
const iso = (ms: number): string => new Date(ms).toISOString();

// ---------------------------------------------------------------------------------------
// 1. Authentication (interface "Authentication"; docs/spec.md#list, #one-ipo, #gmp-series, #limits, #requests step 2)

function authChecks(): HttpCheck[] {
  return [
    {
      id: 'auth-keyless-list',
      name: 'MUST answer a keyless list with 200 and a partial body: at most one IPO, the full count, limit 1, page 1 and meta.info',
      async fn(ctx) {
        for (const status of STATUSES) {
          const order = EXPECTED_ORDER[status];
          const body = asList(await ctx.request(`?status=${status}`));
          expect(Object.keys(body.meta)).toEqual(['count', 'countOnPage', 'totalPages', 'page', 'limit', 'info']);
          expect(body.meta).toEqual({
            count: order.length,
            countOnPage: Math.min(1, order.length),
            totalPages: order.length,
            page: 1,
            limit: 1,
            info: KEYLESS_INFO,
          });
          expect(body.ipos).toEqual(order.slice(0, 1).map((id) => expectedIpo(id)));
        }
      },
    },
    {
      id: 'auth-keyless-forced-page',
      name: 'MUST report page 1 and limit 1 on a keyless list whatever page and limit were asked',
      async fn(ctx) {
        for (const q of ['page=3&limit=50', 'page=2', 'limit=100', 'page=1000000000&limit=1']) {
          const body = asList(await ctx.request(`?status=listed&${q}`));
          expect(body.meta).toEqual({ count: 5, countOnPage: 1, totalPages: 5, page: 1, limit: 1, info: KEYLESS_INFO });
          expect(body.ipos.map((i) => i.id)).toEqual([EXPECTED_ORDER.listed[0]]);
        }
      },
    },
    {
      id: 'auth-empty-key',
      name: 'MUST treat an empty x-api-key header as no key (keyless list, 401 elsewhere)',
      async fn(ctx) {
        const list = asList(await ctx.request('?status=open', { key: '' }));
        expect(list.meta.info).toBe(KEYLESS_INFO);
        expectError(await ctx.request('/ORBIT', { key: '' }), 401);
        expectError(await ctx.request('/ORBIT/gmp', { key: '' }), 401);
      },
    },
    {
      id: 'auth-wrong-key-list',
      name: 'MUST answer 401 ERR:INVLDKEY to a list with a key that is sent but not valid, before checking parameters',
      async fn(ctx) {
        for (const key of [ctx.keys.wrong, 'hello', 'ipk_', ctx.keys.paid.toLowerCase(), `${ctx.keys.paid} `.trim() + 'x']) {
          expectError(await ctx.request('?status=open', { key }), 401);
        }
        expectError(await ctx.request('?status=bogus&page=0', { key: ctx.keys.wrong }), 401);
        expectError(await ctx.request('', { key: ctx.keys.wrong }), 401);
      },
    },
    {
      id: 'auth-ipo-needs-key',
      name: 'MUST answer 401 ERR:INVLDKEY to one IPO without a key or with a wrong key, before the identifier is checked',
      async fn(ctx) {
        for (const target of ['/ORBIT', `/${ORBIT}`, '/NOPE', '/%E0%A4', '/ORBIT?includeGmp=maybe']) {
          expectError(await ctx.request(target), 401);
          expectError(await ctx.request(target, { key: ctx.keys.wrong }), 401);
        }
      },
    },
    {
      id: 'auth-gmp-needs-key',
      name: 'MUST answer 401 ERR:INVLDKEY to a GMP series without a key or with a wrong key, before parameters',
      async fn(ctx) {
        for (const target of ['/ORBIT/gmp', '/NOPE/gmp', '/ORBIT/gmp?interval=1h', '/%E0%A4/gmp']) {
          expectError(await ctx.request(target), 401);
          expectError(await ctx.request(target, { key: ctx.keys.wrong }), 401);
        }
      },
    },
    {
      id: 'auth-revoked-key',
      name: 'MUST answer 401 ERR:INVLDKEY to a revoked key on every route',
      async fn(ctx) {
        const key = ctx.keys.revoked;
        expectError(await ctx.request('?status=open', { key }), 401);
        expectError(await ctx.request('/ORBIT', { key }), 401);
        expectError(await ctx.request('/ORBIT/gmp', { key }), 401);
      },
    },
    {
      id: 'auth-revoke-at-once',
      name: 'MUST refuse a key at once after revokeApiKey on the store the router uses (its other keys still work)',
      async fn(ctx) {
        expect((await ctx.request('/ORBIT', { key: ctx.keys.paid })).status).toBe(200);
        await revokeApiKey(ctx.store, ctx.fixture.keyIds.paid);
        expectError(await ctx.request('/ORBIT', { key: ctx.keys.paid }), 401);
        expectError(await ctx.request('?status=open', { key: ctx.keys.paid }), 401);
        expect((await ctx.request('/ORBIT', { key: ctx.keys.paid2 })).status).toBe(200);
      },
    },
    {
      id: 'auth-plan-change-at-once',
      name: 'MUST apply updateAccount at once: the list limit and includeGmp follow the new plan',
      async fn(ctx) {
        expect(asList(await ctx.request('?status=listed&limit=5', { key: ctx.keys.free })).meta.limit).toBe(1);
        await updateAccount(ctx.store, { accountId: ctx.fixture.accounts.free, plan: 'paid' });
        expect(asList(await ctx.request('?status=listed&limit=5', { key: ctx.keys.free })).meta.limit).toBe(5);
        expect((await ctx.request('/ORBIT?includeGmp=true', { key: ctx.keys.proGmp })).status).toBe(200);
        await updateAccount(ctx.store, { accountId: ctx.fixture.accounts.proGmp, gmpAddon: false });
        expectError(await ctx.request('/ORBIT?includeGmp=true', { key: ctx.keys.proGmp }), 403);
        expectError(await ctx.request('/ORBIT/gmp', { key: ctx.keys.proGmp }), 403);
      },
    },
    {
      id: 'auth-key-expiry',
      name: 'MUST refuse a key from its expiresAt on, on every route, as a revoked key, even while its grant is cached',
      async fn(ctx) {
        const t = ctx.clock.now();
        const clock = { now: () => new Date(ctx.clock.now()) };
        const { key } = await createApiKey(ctx.store, { accountId: ctx.fixture.accounts.paid, label: 'expiring', expiresAt: new Date(t + 10_000).toISOString() }, clock);
        expect((await ctx.request('/ORBIT', { key })).status).toBe(200);
        ctx.clock.set(t + 9_000); // read again (older than keyCacheTtlMs) and cached
        expect((await ctx.request('?status=open', { key })).status).toBe(200);
        ctx.clock.set(t + 9_999);
        expect((await ctx.request('/ORBIT', { key })).status).toBe(200);
        ctx.clock.set(t + 10_000); // the cached grant is 1 s old: still refused
        const refused = await ctx.request('/ORBIT', { key });
        expectError(refused, 401);
        expect(refused.json).toEqual((await ctx.request('/ORBIT', { key: ctx.keys.revoked })).json);
        expectError(await ctx.request('?status=open', { key }), 401);
        expectError(await ctx.request('/ORBIT/gmp', { key }), 401);
        ctx.clock.advance(3_600_000);
        expectError(await ctx.request('/ORBIT', { key }), 401);
        expect((await ctx.request('/ORBIT', { key: ctx.keys.paid })).status).toBe(200);
      },
    },
    {
      id: 'auth-rotate-overlap',
      name: 'MUST accept both keys of a rotation during its overlap and refuse the old one from its end (at once with overlap 0), on the store the router uses',
      async fn(ctx) {
        const clock = { now: () => new Date(ctx.clock.now()) };
        const old = ctx.keys.paid;
        expect((await ctx.request('/ORBIT', { key: old })).status).toBe(200); // cached
        const next = await rotateApiKey(ctx.store, ctx.fixture.keyIds.paid, { overlapSeconds: 60 }, clock);
        expect((await ctx.request('/ORBIT', { key: next.key })).status).toBe(200);
        expect((await ctx.request('/ORBIT', { key: old })).status).toBe(200);
        ctx.clock.advance(59_999);
        expect((await ctx.request('/ORBIT', { key: old })).status).toBe(200);
        ctx.clock.advance(1);
        expectError(await ctx.request('/ORBIT', { key: old }), 401);
        expect((await ctx.request('/ORBIT', { key: next.key })).status).toBe(200); // cached
        const third = await rotateApiKey(ctx.store, next.id, { overlapSeconds: 0 }, clock);
        expectError(await ctx.request('/ORBIT', { key: next.key }), 401);
        expect((await ctx.request('?status=open', { key: third.key })).status).toBe(200);
      },
    },
    {
      id: 'key-last-used',
      name: 'MUST record lastUsedAt on the router clock for admitted requests only, at most 60 s stale, written at most once a minute per key',
      options: { limits: { paid: { perMinute: GENEROUS, gmpPerMinute: GENEROUS, perHour: 3 } } },
      async fn(ctx) {
        const lastUsed = async (keyId: string) => (await listApiKeys(ctx.store, { accountId: ctx.fixture.accounts.paid })).find((k) => k.id === keyId)?.lastUsedAt;
        const { paid, paid2 } = ctx.fixture.keyIds;
        const iso = (ms: number) => new Date(ms).toISOString();
        const t = ctx.clock.now();
        expect(await lastUsed(paid)).toBeNull();
        expect((await ctx.request('/NOPE', { key: ctx.keys.paid })).status).toBe(404); // admitted, then not found
        expect(await lastUsed(paid)).toBe(iso(t));
        expect(await lastUsed(paid2)).toBeNull();
        ctx.clock.set(t + 30_000);
        expect((await ctx.request('/ORBIT', { key: ctx.keys.paid2 })).status).toBe(200); // another key: its own time
        expect(await lastUsed(paid2)).toBe(iso(t + 30_000));
        ctx.clock.set(t + 59_999); // no second write within the minute
        expect((await ctx.request('/ORBIT', { key: ctx.keys.paid })).status).toBe(200);
        expect(await lastUsed(paid)).toBe(iso(t));
        ctx.clock.set(t + 60_000); // a write is due, but the request is refused: no use
        expect((await ctx.request('/ORBIT', { key: ctx.keys.paid })).status).toBe(429);
        expect(await lastUsed(paid)).toBe(iso(t));
        ctx.clock.set(t + 3_600_000); // the first hit has left the hour
        expect((await ctx.request('/ORBIT', { key: ctx.keys.paid })).status).toBe(200);
        expect(await lastUsed(paid)).toBe(iso(t + 3_600_000));
        expect(await lastUsed(paid2)).toBe(iso(t + 30_000));
      },
    },
    {
      id: 'key-last-used-failure',
      name: 'MUST answer a request whose lastUsedAt write fails, report the failure to onError, and write it with the key\'s next request',
      expectsErrors: true,
      async fn(ctx) {
        const lastUsed = async () => (await listApiKeys(ctx.store, { accountId: ctx.fixture.accounts.paid })).find((k) => k.id === ctx.fixture.keyIds.paid)?.lastUsedAt;
        ctx.fault({ method: 'recordKeyUse', mode: 'reject' });
        expect((await ctx.request('/ORBIT', { key: ctx.keys.paid })).status).toBe(200);
        expect(ctx.errors).toHaveLength(1);
        expect(await lastUsed()).toBeNull();
        ctx.fault(null);
        ctx.clock.advance(1_000);
        expect((await ctx.request('/ORBIT', { key: ctx.keys.paid })).status).toBe(200);
        expect(await lastUsed()).toBe(new Date(ctx.clock.now()).toISOString());
        expect(ctx.errors).toHaveLength(1);
      },
    },
    {
      id: 'auth-other-process-ttl',
      name: 'MUST apply a revocation or plan change made by another process within keyCacheTtlMs (default 5,000 ms; 0 disables caching)',
      async fn(ctx) {
        expect((await ctx.request('/ORBIT', { key: ctx.keys.paid })).status).toBe(200);
        expect(asList(await ctx.request('?status=listed&limit=5', { key: ctx.keys.pro })).meta.limit).toBe(5);
        await revokeApiKey(ctx.otherProcessStore, ctx.fixture.keyIds.paid);
        await updateAccount(ctx.otherProcessStore, { accountId: ctx.fixture.accounts.pro, plan: 'free' });
        // (seeing them earlier is allowed; by keyCacheTtlMs it is required)
        ctx.clock.advance(5000);
        expectError(await ctx.request('/ORBIT', { key: ctx.keys.paid }), 401);
        expect(asList(await ctx.request('?status=listed&limit=5', { key: ctx.keys.pro })).meta.limit).toBe(1);
        await ctx.restart({ keyCacheTtlMs: 0 });
        expect((await ctx.request('/ORBIT', { key: ctx.keys.paid2 })).status).toBe(200);
        await revokeApiKey(ctx.otherProcessStore, ctx.fixture.keyIds.paid2);
        expectError(await ctx.request('/ORBIT', { key: ctx.keys.paid2 }), 401);
      },
    },
    {
      id: 'auth-two-key-headers',
      name: 'MUST answer 401 to two x-api-key headers (they arrive joined as "a, b"), even when both keys are valid',
      async fn(ctx) {
        const { paid, paid2, wrong } = ctx.keys;
        expectError(await ctx.raw('?status=open', { headers: { 'x-api-key': [paid, paid] } }), 401);
        expectError(await ctx.raw('/ORBIT', { headers: { 'x-api-key': [paid, paid2] } }), 401);
        expectError(await ctx.raw('/ORBIT', { headers: { 'x-api-key': [paid, wrong] } }), 401);
        expectError(await ctx.request('/ORBIT', { key: `${paid}, ${paid2}` }), 401);
      },
    },
    {
      id: 'auth-key-never-echoed',
      name: 'MUST never echo the sent key in an error body',
      async fn(ctx) {
        const secret = 'ipk_SECRETsecretSECRETsecret0123456789';
        for (const target of ['?status=open', '/ORBIT', '/ORBIT/gmp', '?status=bogus', '/NOPE/gmp']) {
          const res = await ctx.request(target, { key: secret });
          expectError(res, 401);
          expect(res.text).not.toContain('SECRET');
        }
        const bad = await ctx.request('?status=bogus', { key: ctx.keys.paid });
        expectError(bad, 400, 'status');
        expect(bad.text).not.toContain(ctx.keys.paid.slice(4));
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------
// 2. Errors (docs/spec.md#errors, #requests step 1)

function errorChecks(): HttpCheck[] {
  return [
    {
      id: 'error-400-body',
      name: 'MUST send a 400 as {"status":"400","title":"Bad Request","detail":...,"code":"ERR:BADPARAM","meta":{"parameter":...}} in that key order',
      async fn(ctx) {
        const res = await ctx.request('?status=bogus', { key: ctx.keys.paid });
        const body = expectError(res, 400, 'status');
        expect(res.text).toBe(`{"status":"400","title":"Bad Request","detail":${JSON.stringify(body.detail)},"code":"ERR:BADPARAM","meta":{"parameter":"status"}}`);
        const missing = await ctx.request('', { key: ctx.keys.paid });
        expectError(missing, 400, 'status');
      },
    },
    {
      id: 'error-401-403-404-body',
      name: 'MUST send 401, 403 and 404 errors as {"status","title","detail","code"} without meta',
      async fn(ctx) {
        const cases: Array<[HttpResult, number, string]> = [
          [await ctx.request('/ORBIT'), 401, 'ERR:INVLDKEY'],
          [await ctx.request('/ORBIT?includeGmp=true', { key: ctx.keys.paid }), 403, 'ERR:PLAN'],
          [await ctx.request('/NOPE', { key: ctx.keys.paid }), 404, 'ERR:NOTFOUND'],
          [await ctx.request('/a/b/c', { key: ctx.keys.paid }), 404, 'ERR:NOTFOUND'],
        ];
        for (const [res, status, code] of cases) {
          const body = expectError(res, status);
          expect(res.text).toBe(`{"status":"${status}","title":"${TITLES[status] ?? ''}","detail":${JSON.stringify(body.detail)},"code":"${code}"}`);
        }
      },
    },
    {
      id: 'error-404-unknown-paths',
      name: 'MUST answer 404 ERR:NOTFOUND to unknown paths under the mount, without rate-limit headers',
      async fn(ctx) {
        const paths = ['/a/b/c', '//gmp', '/ORBIT/gmp/x', '/ORBIT/GMP', '/ORBIT/gmp//', '/ORBIT//', '/ORBIT/history', '/a/b', '///'];
        for (const path of paths) {
          for (const key of [undefined, ctx.keys.paid, ctx.keys.wrong]) {
            const res = await ctx.request(`${path}?status=open`, key === undefined ? {} : { key });
            expectError(res, 404);
            expectNoRateHeaders(res);
          }
        }
      },
    },
    {
      id: 'error-405-methods',
      name: 'MUST answer 405 ERR:METHOD with Allow: GET, HEAD to any other method on every route, without rate-limit headers',
      async fn(ctx) {
        for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
          for (const target of ['?status=open', '', '/ORBIT', '/ORBIT/gmp', '/NOPE']) {
            for (const key of [undefined, ctx.keys.proGmp, ctx.keys.wrong]) {
              const res = await ctx.request(target, key === undefined ? { method } : { method, key });
              expectError(res, 405);
              expect(res.headers['allow']).toBe('GET, HEAD');
              expectNoRateHeaders(res);
            }
          }
        }
        // The path is checked first.
        expectError(await ctx.request('/a/b/c', { method: 'POST' }), 404);
      },
    },
    {
      id: 'error-414-default',
      name: 'MUST answer 414 ERR:URITOOLONG when the request-target (mount path and query included) exceeds 4,096 bytes, before path and method',
      async fn(ctx) {
        const mount = new URL(ctx.baseUrl).pathname;
        const fits = targetOfLength(mount, '?status=open&pad=', 4096);
        const ok = await ctx.request(fits, { key: ctx.keys.paid });
        expect(ok.status).toBe(200);
        const over = targetOfLength(mount, '?status=open&pad=', 4097);
        const res = await ctx.request(over, { key: ctx.keys.paid });
        expectError(res, 414);
        expectNoRateHeaders(res);
        expectError(await ctx.request(targetOfLength(mount, '/a/b/c?pad=', 4097)), 414);
        expectError(await ctx.request(over, { method: 'POST' }), 414);
        expectError(await ctx.request(targetOfLength(mount, '/ORBIT/gmp?pad=', 4097)), 414);
        expectError(await ctx.request(targetOfLength(mount, '?status=open&pad=', 10_000), { key: ctx.keys.paid }), 414);
        // Percent-encoded bytes count as sent (3 bytes each).
        const encoded = `?status=open&pad=${'%41'.repeat(1400)}`;
        expect(Buffer.byteLength(mount + encoded)).toBeGreaterThan(4096);
        expectError(await ctx.request(encoded, { key: ctx.keys.paid }), 414);
      },
    },
    {
      id: 'error-414-option',
      name: 'MUST apply the maxUrlLength option exactly',
      options: { maxUrlLength: 64 },
      async fn(ctx) {
        const mount = new URL(ctx.baseUrl).pathname;
        expect((await ctx.request(targetOfLength(mount, '?status=open&x=', 64), { key: ctx.keys.paid })).status).toBe(200);
        expectError(await ctx.request(targetOfLength(mount, '?status=open&x=', 65), { key: ctx.keys.paid }), 414);
      },
    },
    {
      id: 'error-503-store-rejects',
      name: 'MUST answer 503 ERR:UNAVAILABLE when a store call rejects, report it to onError, and leak nothing',
      expectsErrors: true,
      async fn(ctx) {
        const cases: Array<[StoreMethod, string, string | undefined]> = [
          ['findApiKey', '?status=open', ctx.keys.paid],
          ['hitRateLimit', '?status=open', undefined],
          ['hitRateLimit', '/ORBIT', ctx.keys.paid],
          ['listIpos', '?status=open', ctx.keys.paid],
          ['listIpos', '?status=open', undefined],
          ['findIpo', '/ORBIT', ctx.keys.paid],
          ['gmpBuckets', '/ORBIT/gmp', ctx.keys.proGmp],
          ['findIpo', '/ORBIT/subscription', ctx.keys.paid],
          ['subscriptionSeries', '/ORBIT/subscription', ctx.keys.paid],
        ];
        for (const [method, target, key] of cases) {
          const before = ctx.errors.length;
          ctx.fault({ method, mode: 'reject' });
          const res = await ctx.request(target, key === undefined ? {} : { key });
          ctx.fault(null);
          expectError(res, 503);
          expectNoRateHeaders(res);
          expectNoLeak(res, key);
          expect(ctx.errors.length, `onError after ${method}`).toBeGreaterThan(before);
          expect(ctx.errors.slice(before).some((e) => chainHas(e, STORE_FAULT_SECRET))).toBe(true);
          expect((await ctx.request(target, key === undefined ? {} : { key })).status).toBe(200);
        }
      },
    },
    {
      id: 'error-503-store-timeout',
      name: 'MUST answer 503 ERR:UNAVAILABLE when a store call takes longer than storeTimeoutMs, and report it to onError',
      options: { storeTimeoutMs: 100 },
      expectsErrors: true,
      async fn(ctx) {
        const cases: Array<[StoreMethod, string, string | undefined]> = [
          ['findApiKey', '?status=open', ctx.keys.free],
          ['hitRateLimit', '?status=open', undefined],
          ['listIpos', '?status=open', ctx.keys.paid],
          ['findIpo', '/ORBIT', ctx.keys.paid],
          ['gmpBuckets', '/ORBIT/gmp', ctx.keys.proGmp],
        ];
        for (const [method, target, key] of cases) {
          const before = ctx.errors.length;
          ctx.fault({ method, mode: 'hang' });
          const started = Date.now();
          const res = await ctx.request(target, key === undefined ? {} : { key });
          const took = Date.now() - started;
          ctx.fault(null);
          expectError(res, 503);
          expectNoRateHeaders(res);
          expectNoLeak(res, key);
          expect(took).toBeGreaterThanOrEqual(90);
          expect(took).toBeLessThan(3000);
          expect(ctx.errors.length).toBeGreaterThan(before);
        }
      },
    },
    {
      id: 'error-limiter-fail-open',
      name: 'MUST admit a request without rate-limit headers when the limiter fails and limiterFailOpen is true (and report it)',
      options: { limiterFailOpen: true },
      expectsErrors: true,
      async fn(ctx) {
        for (const key of [ctx.keys.paid, undefined]) {
          const before = ctx.errors.length;
          ctx.fault({ method: 'hitRateLimit', mode: 'reject' });
          const res = await ctx.request('?status=open', key === undefined ? {} : { key });
          ctx.fault(null);
          expect(res.status).toBe(200);
          expectNoRateHeaders(res);
          expect(ctx.errors.length).toBeGreaterThan(before);
        }
      },
    },
    {
      id: 'error-500-internal',
      name: 'MUST answer 500 ERR:INTERNAL when the library itself fails (a clock that throws), report it to onError, and leak nothing',
      expectsErrors: true,
      async fn(ctx) {
        await ctx.restart({
          now: () => {
            throw new Error(`clock exploded: ${STORE_FAULT_SECRET}`);
          },
        });
        for (const [target, key] of [['?status=open', undefined], ['/ORBIT', ctx.keys.paid], ['/ORBIT/gmp', ctx.keys.proGmp]] as const) {
          const before = ctx.errors.length;
          const res = await ctx.request(target, key === undefined ? {} : { key });
          expectError(res, 500);
          expectNoLeak(res, key);
          expect(ctx.errors.slice(before).some((e) => chainHas(e, 'clock exploded'))).toBe(true);
        }
        await ctx.restart({ now: () => new Date(Number.NaN) });
        const before = ctx.errors.length;
        expectError(await ctx.request('/ORBIT', { key: ctx.keys.paid }), 500);
        expect(ctx.errors.length).toBeGreaterThan(before);
      },
    },
    {
      id: 'error-detail-quote-cut',
      name: 'MUST quote at most 50 characters of a bad value in detail',
      async fn(ctx) {
        const long = 'q'.repeat(200);
        for (const [target, parameter] of [
          [`?status=${long}`, 'status'],
          [`?status=open&type=${long}`, 'type'],
          [`?status=open&year=${long}`, 'year'],
          [`/ORBIT/gmp?interval=${long}`, 'interval'],
        ] as const) {
          const body = expectError(await ctx.request(target, { key: ctx.keys.proGmp }), 400, parameter);
          expect(body.detail).not.toContain('q'.repeat(51));
        }
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------
// 3. Headers (docs/spec.md#errors)

function headerChecks(): HttpCheck[] {
  return [
    {
      id: 'headers-every-response',
      name: 'MUST send content-type application/json; charset=utf-8 and cache-control private, no-store on every response, and no ETag',
      async fn(ctx) {
        const mount = new URL(ctx.baseUrl).pathname;
        const responses: HttpResult[] = [
          await ctx.request('?status=open'),
          await ctx.request('?status=open', { key: ctx.keys.paid }),
          await ctx.request('/ORBIT', { key: ctx.keys.paid }),
          await ctx.request('/ORBIT/gmp', { key: ctx.keys.proGmp }),
          await ctx.request('?status=bogus', { key: ctx.keys.paid }),
          await ctx.request('/ORBIT'),
          await ctx.request('/ORBIT/gmp', { key: ctx.keys.free }),
          await ctx.request('/NOPE', { key: ctx.keys.paid }),
          await ctx.request('/a/b/c'),
          await ctx.request('/ORBIT', { method: 'DELETE' }),
          await ctx.request(targetOfLength(mount, '?status=open&pad=', 5000)),
        ];
        await ctx.restart({ limits: {} });
        // the keyless hits above still sit in the store's window: let them leave
        ctx.clock.advance(60_000);
        for (let i = 0; i < 7; i++) responses.push(await ctx.request('/NOPE'));
        expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 400, 401, 403, 404, 404, 405, 414, 401, 401, 401, 401, 401, 401, 429]);
        for (const res of responses) {
          expect(res.headers['content-type'], `${res.status}`).toBe(JSON_TYPE);
          expect(res.headers['cache-control'], `${res.status}`).toBe(CACHE_CONTROL);
          expect(res.headers['etag'], `${res.status}`).toBeUndefined();
          expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.text, 'utf8')));
        }
      },
    },
    {
      id: 'headers-no-304',
      name: 'MUST answer conditional requests (If-None-Match, If-Modified-Since) in full, never 304',
      async fn(ctx) {
        const plain = await ctx.request('/ORBIT', { key: ctx.keys.paid });
        const conditionals: Array<Record<string, string>> = [
          { 'if-none-match': '*' },
          { 'if-none-match': 'W/"abc"' },
          { 'if-modified-since': 'Tue, 01 Jan 2999 00:00:00 GMT' },
        ];
        for (const headers of conditionals) {
          const res = await ctx.request('/ORBIT', { key: ctx.keys.paid, headers });
          expect(res.status).toBe(200);
          expect(res.text).toBe(plain.text);
        }
        const list = await ctx.request('?status=open', { headers: { 'if-none-match': '*' } });
        expect(list.status).toBe(200);
      },
    },
    {
      id: 'head-as-get',
      name: 'MUST answer HEAD exactly as GET (same status and headers) without a body',
      async fn(ctx) {
        const cases: Array<[string, string | undefined]> = [
          ['?status=open', undefined],
          ['?status=listed', ctx.keys.paid],
          ['/ORBIT', ctx.keys.paid],
          ['/ORBIT/gmp', ctx.keys.proGmp],
          ['/NOPE', ctx.keys.paid],
          ['?status=bogus', ctx.keys.paid],
          ['/a/b/c', undefined],
          ['/ORBIT', undefined],
          ['/ORBIT/gmp', ctx.keys.paid],
        ];
        for (const [target, key] of cases) {
          const get = await ctx.request(target, key === undefined ? {} : { key });
          const head = await ctx.request(target, key === undefined ? { method: 'HEAD' } : { method: 'HEAD', key });
          expect(head.status, target).toBe(get.status);
          expect(head.text).toBe('');
          const strip = (h: Record<string, string>): Record<string, string> => {
            const out = { ...h };
            for (const k of ['date', 'ratelimit-remaining', 'connection', 'keep-alive']) delete out[k];
            return out;
          };
          expect(strip(head.headers), target).toEqual(strip(get.headers));
          const r = get.headers['ratelimit-remaining'];
          if (r !== undefined) expect(head.headers['ratelimit-remaining']).toBe(String(Number(r) - 1));
          else expect(head.headers['ratelimit-remaining']).toBeUndefined();
        }
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------
// 4. Rate limits (docs/spec.md#limits, #requests steps 2-3), with the contract's default quotas

function rateLimitChecks(): HttpCheck[] {
  const defaults: IpoRouterOptions = { limits: {} };
  return [
    {
      id: 'ratelimit-quota-exact',
      name: 'MUST admit exactly 6 requests per 60 s per account, counting RateLimit-Remaining down, and answer the 7th with 429 and expiresIn from the clock',
      options: defaults,
      async fn(ctx) {
        for (let i = 0; i < 6; i++) {
          ctx.clock.set(T0 + i * 1000);
          const res = await ctx.request(i % 2 === 0 ? '?status=open' : '/ORBIT', { key: ctx.keys.paid });
          expect(res.status).toBe(200);
          expectRateHeaders(res, { limit: 6, remaining: 5 - i, reset: 60 - i });
        }
        ctx.clock.set(T0 + 10_000);
        const res = await ctx.request('?status=open', { key: ctx.keys.paid });
        expect429(res, 6, 50);
        expectRateHeaders(res, { limit: 6, remaining: 0, reset: 50, retryAfter: 50 });
        expect429(await ctx.request('/ORBIT', { key: ctx.keys.paid }), 6, 50);
        expect429(await ctx.request('/NOPE', { key: ctx.keys.paid }), 6, 50);
        expect429(await ctx.request('?status=bogus', { key: ctx.keys.paid }), 6, 50);
      },
    },
    {
      id: 'ratelimit-concurrent-exact',
      name: 'MUST admit exactly the quota when requests arrive at once (6 of 20 general, 3 of 10 GMP)',
      options: defaults,
      async fn(ctx) {
        const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => ctx.request(i % 2 === 0 ? '?status=open' : '/ORBIT', { key: i % 3 === 0 ? ctx.keys.paid2 : ctx.keys.paid })));
        expect(burst.filter((r) => r.status === 200).length).toBe(6);
        expect(burst.filter((r) => r.status === 429).length).toBe(14);
        const remaining = burst.filter((r) => r.status === 200).map((r) => r.headers['ratelimit-remaining']).sort();
        expect(remaining).toEqual(['0', '1', '2', '3', '4', '5']);
        const gmp = await Promise.all(Array.from({ length: 10 }, () => ctx.request('/ORBIT/gmp', { key: ctx.keys.proGmp })));
        expect(gmp.filter((r) => r.status === 200).length).toBe(3);
        for (const r of gmp.filter((x) => x.status === 429)) expect429(r, 3, 60, 'gmp-minute');
        const keyless = await Promise.all(Array.from({ length: 10 }, () => ctx.request('/ORBIT', { key: ctx.keys.wrong })));
        expect(keyless.map((r) => r.status).sort()).toEqual([401, 401, 401, 401, 401, 401, 429, 429, 429, 429]);
      },
    },
    {
      id: 'ratelimit-window-edge',
      name: 'MUST keep a hit in the window while now - t < 60,000 ms and let it leave exactly at 60,000 ms',
      options: defaults,
      async fn(ctx) {
        for (let i = 0; i < 6; i++) {
          ctx.clock.set(T0 + i * 1000);
          expect((await ctx.request('?status=open', { key: ctx.keys.paid })).status).toBe(200);
        }
        ctx.clock.set(T0 + 59_999);
        expect429(await ctx.request('?status=open', { key: ctx.keys.paid }), 6, 1);
        ctx.clock.set(T0 + 60_000);
        const res = await ctx.request('?status=open', { key: ctx.keys.paid });
        expect(res.status).toBe(200);
        expectRateHeaders(res, { limit: 6, remaining: 0, reset: 1 });
        ctx.clock.set(T0 + 60_500);
        expect429(await ctx.request('?status=open', { key: ctx.keys.paid }), 6, 1);
        ctx.clock.set(T0 + 61_000);
        expect((await ctx.request('?status=open', { key: ctx.keys.paid })).status).toBe(200);
        // now T0+2000 is the oldest hit: it leaves at T0+62,000
        ctx.clock.set(T0 + 61_001);
        expect429(await ctx.request('?status=open', { key: ctx.keys.paid }), 6, 1);
        ctx.clock.set(T0 + 62_000);
        expect((await ctx.request('?status=open', { key: ctx.keys.paid })).status).toBe(200);
      },
    },
    {
      id: 'ratelimit-account-shared',
      name: 'MUST count all keys of one account in one window, and other accounts and keyless callers separately',
      options: defaults,
      async fn(ctx) {
        for (let i = 0; i < 6; i++) {
          const res = await ctx.request('?status=open', { key: i % 2 === 0 ? ctx.keys.paid : ctx.keys.paid2 });
          expect(res.status).toBe(200);
          expectRateHeaders(res, { limit: 6, remaining: 5 - i, reset: 60 });
        }
        expect429(await ctx.request('?status=open', { key: ctx.keys.paid2 }), 6, 60);
        expect429(await ctx.request('?status=open', { key: ctx.keys.paid }), 6, 60);
        for (const key of [ctx.keys.free, ctx.keys.pro, ctx.keys.proGmp, undefined]) {
          const res = await ctx.request('?status=open', key === undefined ? {} : { key });
          expect(res.status).toBe(200);
          expectRateHeaders(res, { limit: 6, remaining: 5, reset: 60 });
        }
      },
    },
    {
      id: 'ratelimit-gmp-window',
      name: 'MUST limit the GMP route to 3 per 60 s in its own window on top of the general one',
      options: defaults,
      async fn(ctx) {
        const key = ctx.keys.proGmp;
        for (let i = 0; i < 3; i++) {
          const res = await ctx.request('/ORBIT/gmp', { key });
          expect(res.status).toBe(200);
          expectRateHeaders(res, { limit: 3, remaining: 2 - i, reset: 60 });
        }
        ctx.clock.set(T0 + 1000);
        const refused = await ctx.request('/ORBIT/gmp', { key });
        expect429(refused, 3, 59, 'gmp-minute');
        expectRateHeaders(refused, { limit: 3, remaining: 0, reset: 59, retryAfter: 59 });
        // The refused request was charged to neither window: the general one has 3 hits.
        const list = await ctx.request('?status=open', { key });
        expect(list.status).toBe(200);
        expectRateHeaders(list, { limit: 6, remaining: 2, reset: 59 });
        ctx.clock.set(T0 + 60_000);
        const again = await ctx.request('/ORBIT/gmp', { key });
        expect(again.status).toBe(200);
        // general: hits at T0+1000 and now (remaining 4); GMP: now (remaining 2)
        expectRateHeaders(again, { limit: 3, remaining: 2, reset: 60 });
      },
    },
    {
      id: 'ratelimit-headers-closest-window',
      name: 'MUST describe the window closest to refusing in RateLimit-* headers, the GMP window on a tie',
      options: defaults,
      async fn(ctx) {
        const key = ctx.keys.proGmp;
        for (let i = 0; i < 3; i++) expect((await ctx.request('?status=open', { key })).status).toBe(200);
        ctx.clock.set(T0 + 2000);
        // general 4 of 6 (2 left), GMP 1 of 3 (2 left): a tie goes to the GMP window
        const res = await ctx.request('/ORBIT/gmp', { key });
        expect(res.status).toBe(200);
        expectRateHeaders(res, { limit: 3, remaining: 2, reset: 60 });
        // general 5 of 6 (1 left), GMP 2 of 3 (1 left): tie again
        expectRateHeaders(await ctx.request('/ORBIT/gmp', { key }), { limit: 3, remaining: 1, reset: 60 });
        // general 6 of 6 (0 left, oldest at T0), GMP 3 of 3 (0 left, oldest at T0+2000): tie -> GMP
        expectRateHeaders(await ctx.request('/ORBIT/gmp', { key }), { limit: 3, remaining: 0, reset: 60 });
      },
    },
    {
      id: 'ratelimit-429-which-window',
      name: 'MUST report in a 429 the refusing window with the longer wait, the GMP window on equal waits',
      options: defaults,
      async fn(ctx) {
        const key = ctx.keys.proGmp;
        // Only the general window refuses.
        for (let i = 0; i < 6; i++) expect((await ctx.request('?status=open', { key })).status).toBe(200);
        ctx.clock.set(T0 + 1000);
        const general = await ctx.request('/ORBIT/gmp', { key });
        expect429(general, 6, 59);
        expectRateHeaders(general, { limit: 6, remaining: 0, reset: 59, retryAfter: 59 });

        // Both refuse, equal waits: the GMP window.
        const t1 = T0 + 120_000;
        ctx.clock.set(t1);
        for (let i = 0; i < 3; i++) expect((await ctx.request('/ORBIT/gmp', { key })).status).toBe(200);
        ctx.clock.set(t1 + 1000);
        for (let i = 0; i < 3; i++) expect((await ctx.request('?status=open', { key })).status).toBe(200);
        ctx.clock.set(t1 + 2000);
        const equal = await ctx.request('/ORBIT/gmp', { key });
        expect429(equal, 3, 58, 'gmp-minute');
        expectRateHeaders(equal, { limit: 3, remaining: 0, reset: 58, retryAfter: 58 });

        // Both refuse, the GMP window waits longer.
        const t2 = T0 + 240_000;
        ctx.clock.set(t2);
        for (let i = 0; i < 3; i++) expect((await ctx.request('?status=open', { key })).status).toBe(200);
        ctx.clock.set(t2 + 1000);
        for (let i = 0; i < 3; i++) expect((await ctx.request('/ORBIT/gmp', { key })).status).toBe(200);
        ctx.clock.set(t2 + 2000);
        const longer = await ctx.request('/ORBIT/gmp', { key });
        expect429(longer, 3, 59, 'gmp-minute');
        expectRateHeaders(longer, { limit: 3, remaining: 0, reset: 59, retryAfter: 59 });
      },
    },
    {
      id: 'ratelimit-401-charged-to-address',
      name: 'MUST charge a 401 to the client address window, so the 7th bad key in a minute gets 429',
      options: defaults,
      async fn(ctx) {
        for (let i = 0; i < 6; i++) {
          ctx.clock.set(T0 + i * 100);
          const res = await ctx.request(i % 2 === 0 ? '?status=open' : '/ORBIT', { key: `${ctx.keys.wrong.slice(0, -1)}${i}` });
          expectError(res, 401);
          expectRateHeaders(res, { limit: 6, remaining: 5 - i, reset: 60 });
        }
        ctx.clock.set(T0 + 600);
        expect429(await ctx.request('?status=open', { key: ctx.keys.wrong }), 6, 60);
        // The keyless window is the same one (keyless list and keyless one-IPO 401).
        expect429(await ctx.request('?status=open'), 6, 60);
        expect429(await ctx.request('/ORBIT'), 6, 60);
        expect429(await ctx.request('/ORBIT/gmp', { key: ctx.keys.revoked }), 6, 60);
        // A valid key draws on its account's window.
        expect((await ctx.request('?status=open', { key: ctx.keys.paid })).status).toBe(200);
      },
    },
    {
      id: 'ratelimit-keyless-per-address',
      name: 'MUST limit keyless lists to 6 per 60 s per client address',
      options: defaults,
      async fn(ctx) {
        for (let i = 0; i < 6; i++) {
          const res = await ctx.request(`?status=${STATUSES[i % 5] ?? 'open'}`);
          expect(res.status).toBe(200);
          expectRateHeaders(res, { limit: 6, remaining: 5 - i, reset: 60 });
        }
        const res = await ctx.request('?status=open');
        expect429(res, 6, 60);
        expectRateHeaders(res, { limit: 6, remaining: 0, reset: 60, retryAfter: 60 });
        ctx.clock.set(T0 + 60_000);
        expect((await ctx.request('?status=open')).status).toBe(200);
      },
    },
    {
      id: 'ratelimit-infinity-off',
      name: 'MUST turn a window off with a quota of Infinity (no limit, none of its headers)',
      options: { limits: { paid: { perMinute: Infinity }, pro: { gmpPerMinute: Infinity }, keyless: { perMinute: Infinity } } },
      async fn(ctx) {
        for (let i = 0; i < 10; i++) {
          const res = await ctx.request('?status=open', { key: ctx.keys.paid });
          expect(res.status).toBe(200);
          expectNoRateHeaders(res);
          const keyless = await ctx.request('?status=open');
          expect(keyless.status).toBe(200);
          expectNoRateHeaders(keyless);
          expectError(await ctx.request('/ORBIT'), 401);
        }
        // pro: the general window (6) stays; only the GMP one is off.
        for (let i = 0; i < 6; i++) {
          const res = await ctx.request('/ORBIT/gmp', { key: ctx.keys.proGmp });
          expect(res.status).toBe(200);
          expectRateHeaders(res, { limit: 6, remaining: 5 - i, reset: 60 });
        }
        expect429(await ctx.request('/ORBIT/gmp', { key: ctx.keys.proGmp }), 6, 60);
      },
    },
    {
      id: 'ratelimit-hour-and-day',
      name: 'MUST refuse in the hour window (sliding, 3,600 s) and the day window (the IST day, until 00:00 IST), charging a refused request to none',
      // a free plan of 10 a minute and 100 a day, scaled down: 3 a minute, 4 an hour, 5 a day
      options: { limits: { paid: { perMinute: 3, perHour: 4, perDay: 5 } } },
      async fn(ctx) {
        const key = ctx.keys.paid;
        for (let i = 0; i < 3; i++) expect((await ctx.request('?status=open', { key })).status).toBe(200);
        expect429(await ctx.request('?status=open', { key }), 3, 60);
        ctx.clock.set(T0 + 60_000);
        const fourth = await ctx.request('?status=open', { key });
        expect(fourth.status).toBe(200);
        // minute: 2 of 3 left; hour: 0 of 4 left, the closest to refusing, its oldest hit at T0
        expectRateHeaders(fourth, { limit: 4, remaining: 0, reset: 3540 });
        ctx.clock.set(T0 + 120_000);
        const hour = await ctx.request('?status=open', { key });
        expect429(hour, 3, 3480, 'hour', 4);
        expectRateHeaders(hour, { limit: 4, remaining: 0, reset: 3480, retryAfter: 3480 });
        // an hour later one place frees in the hour window; the day window then holds 5 of 5
        ctx.clock.set(T0 + 3_600_000);
        expect((await ctx.request('?status=open', { key })).status).toBe(200);
        ctx.clock.set(T0 + 7_300_000);
        // FIXTURE_NOW is 12:00 IST: the IST day ends 12 h after it
        const day = await ctx.request('?status=open', { key });
        expect429(day, 3, (43_200_000 - 7_300_000) / 1000, 'day', 5);
        expect(day.headers['ratelimit-limit']).toBe('5');
        // 00:00 IST: a new day, with room again
        ctx.clock.set(T0 + 43_200_000);
        expect((await ctx.request('?status=open', { key })).status).toBe(200);
      },
    },
    {
      id: 'ratelimit-429-minute-off',
      name: 'MUST give quotaPerMinute null in a 429 whose family has its minute window off',
      options: { limits: { paid: { perMinute: Infinity, perHour: 2 }, pro: { gmpPerMinute: Infinity, gmpPerDay: 1 } } },
      async fn(ctx) {
        for (let i = 0; i < 2; i++) expect((await ctx.request('?status=open', { key: ctx.keys.paid })).status).toBe(200);
        expect429(await ctx.request('?status=open', { key: ctx.keys.paid }), null, 3600, 'hour', 2);
        expect((await ctx.request('/ORBIT/gmp', { key: ctx.keys.proGmp })).status).toBe(200);
        expect429(await ctx.request('/ORBIT/gmp', { key: ctx.keys.proGmp }), null, 43_200, 'gmp-day', 1);
      },
    },
    {
      id: 'ratelimit-headers-draft-11',
      name: "MUST send RateLimit-Policy (every window drawn on) and RateLimit (the closest to refusing) with rateLimitHeaders 'draft-11', and none of the draft-6 trio",
      options: { rateLimitHeaders: 'draft-11', limits: { paid: { perDay: 100 }, pro: { perHour: 360 } } },
      async fn(ctx) {
        const res = await ctx.request('?status=open', { key: ctx.keys.paid });
        expect(res.status).toBe(200);
        expect(res.headers['ratelimit-policy']).toBe('"minute";q=6;w=60, "day";q=100;w=86400');
        expect(res.headers['ratelimit']).toBe('"minute";r=5;t=60');
        for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after']) expect(res.headers[h]).toBeUndefined();
        const gmp = await ctx.request('/ORBIT/gmp', { key: ctx.keys.proGmp });
        expect(gmp.headers['ratelimit-policy']).toBe('"minute";q=6;w=60, "hour";q=360;w=3600, "gmp-minute";q=3;w=60');
        expect(gmp.headers['ratelimit']).toBe('"gmp-minute";r=2;t=60');
        for (let i = 0; i < 4; i++) await ctx.request('?status=open', { key: ctx.keys.paid });
        ctx.clock.set(T0 + 1_500);
        expect((await ctx.request('?status=open', { key: ctx.keys.paid })).headers['ratelimit']).toBe('"minute";r=0;t=59');
        const refused = await ctx.request('?status=open', { key: ctx.keys.paid });
        expect429(refused, 6, 59);
        expect(refused.headers['ratelimit']).toBe('"minute";r=0;t=59');
        expect(refused.headers['ratelimit-limit']).toBeUndefined();
      },
    },
    {
      id: 'ratelimit-headers-both',
      name: "MUST send both drafts with rateLimitHeaders 'both'",
      options: { rateLimitHeaders: 'both', limits: {} },
      async fn(ctx) {
        const res = await ctx.request('?status=open', { key: ctx.keys.paid });
        expectRateHeaders(res, { limit: 6, remaining: 5, reset: 60 });
        expect(res.headers['ratelimit-policy']).toBe('"minute";q=6;w=60');
        expect(res.headers['ratelimit']).toBe('"minute";r=5;t=60');
      },
    },
    {
      id: 'ratelimit-headers-none',
      name: "MUST send no RateLimit header with rateLimitHeaders 'none', but Retry-After on a 429",
      options: { rateLimitHeaders: 'none', limits: {} },
      async fn(ctx) {
        for (let i = 0; i < 6; i++) expectNoRateHeaders(await ctx.request('?status=open', { key: ctx.keys.paid }));
        const refused = await ctx.request('?status=open', { key: ctx.keys.paid });
        expect429(refused, 6, 60);
        for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy', 'ratelimit']) expect(refused.headers[h]).toBeUndefined();
      },
    },
    {
      id: 'usage-counted',
      name: 'MUST count the usage of every keyed request the limiter admitted (whatever it answers next) or refused with a 429, by key, route and IST day, and never a 401 or a keyless request',
      options: { limits: { paid: { perMinute: 3 } } },
      async fn(ctx) {
        const { paid, paid2, proGmp, wrong } = ctx.keys;
        expect((await ctx.request('?status=open', { key: paid })).status).toBe(200);
        expect((await ctx.request('/NOPE', { key: paid })).status).toBe(404);
        expect((await ctx.request('?status=bogus', { key: paid })).status).toBe(400);
        expect((await ctx.request('?status=open', { key: paid })).status).toBe(429);
        expect((await ctx.request('/ORBIT', { key: paid2 })).status).toBe(429);
        expect((await ctx.request('/ORBIT', { key: wrong })).status).toBe(401);
        expect((await ctx.request('?status=open')).status).toBe(200);
        expect((await ctx.request('/ORBIT/gmp', { key: proGmp })).status).toBe(200);
        // FIXTURE_NOW is 2026-11-22 12:00 IST; at 00:00 IST it is another day
        ctx.clock.set(T0 + 12 * 3_600_000);
        expect((await ctx.request('/ORBIT/gmp', { key: proGmp })).status).toBe(200);
        const ids = ctx.fixture.keyIds;
        const byKey = (a: { keyId: string }, b: { keyId: string }) => (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : 0);
        const read = (accountId: string) => getUsage(ctx.store, { accountId, from: '2026-11-01', to: '2026-11-30' }, { limiter: ctx.limiter });
        expect(await read(ctx.fixture.accounts.paid)).toEqual(
          [
            { day: '2026-11-22', keyId: ids.paid, route: 'ipo', admitted: 1, refused: 0 },
            { day: '2026-11-22', keyId: ids.paid, route: 'list', admitted: 2, refused: 1 },
            { day: '2026-11-22', keyId: ids.paid2, route: 'ipo', admitted: 0, refused: 1 },
          ].sort((a, b) => byKey(a, b) || (a.route < b.route ? -1 : 1)),
        );
        expect(await read(ctx.fixture.accounts.proGmp)).toEqual([
          { day: '2026-11-22', keyId: ids.proGmp, route: 'gmp', admitted: 1, refused: 0 },
          { day: '2026-11-23', keyId: ids.proGmp, route: 'gmp', admitted: 1, refused: 0 },
        ]);
        expect(await read(ctx.fixture.accounts.free)).toEqual([]);
      },
    },
    {
      id: 'ratelimit-counts-after-admission',
      name: 'MUST count every admitted request whatever it answers next (400, 403, 404), with RateLimit-* headers on them',
      options: defaults,
      async fn(ctx) {
        const key = ctx.keys.paid;
        const answers = [
          await ctx.request('?status=bogus', { key }),
          await ctx.request('?page=0', { key }),
          await ctx.request('/NOPE', { key }),
          await ctx.request('/ORBIT?includeGmp=true', { key }),
          await ctx.request('/ORBIT/gmp?interval=1h', { key }),
          await ctx.request('?status=open', { key }),
        ];
        expect(answers.map((r) => r.status)).toEqual([400, 400, 404, 403, 400, 200]);
        answers.forEach((res, i) => expectRateHeaders(res, { limit: 6, remaining: 5 - i, reset: 60 }));
        expect429(await ctx.request('?status=open', { key }), 6, 60);
      },
    },
    {
      id: 'ratelimit-step1-not-counted',
      name: 'MUST NOT count 404 unknown paths, 405 and 414 in any window',
      options: defaults,
      async fn(ctx) {
        const mount = new URL(ctx.baseUrl).pathname;
        for (let i = 0; i < 4; i++) {
          for (const key of [ctx.keys.paid, undefined, ctx.keys.wrong]) {
            const o = key === undefined ? {} : { key };
            expectError(await ctx.request('/a/b/c', o), 404);
            expectError(await ctx.request('?status=open', { ...o, method: 'POST' }), 405);
            expectError(await ctx.request(targetOfLength(mount, '?status=open&x=', 4100), o), 414);
          }
        }
        for (let i = 0; i < 6; i++) {
          const res = await ctx.request('?status=open', { key: ctx.keys.paid });
          expectRateHeaders(res, { limit: 6, remaining: 5 - i, reset: 60 });
          expectRateHeaders(await ctx.request('?status=open'), { limit: 6, remaining: 5 - i, reset: 60 });
        }
      },
    },
    {
      id: 'ratelimit-partial-limits',
      name: 'MUST merge a partial limits option into the defaults per plan',
      options: { limits: { paid: { perMinute: 2 } }, gmpPreviewEnds: '2026-12-31' },
      async fn(ctx) {
        expectRateHeaders(await ctx.request('?status=open', { key: ctx.keys.paid }), { limit: 2, remaining: 1, reset: 60 });
        expectRateHeaders(await ctx.request('/ORBIT/gmp', { key: ctx.keys.paid }), { limit: 2, remaining: 0, reset: 60 });
        expect429(await ctx.request('/ORBIT/gmp', { key: ctx.keys.paid }), 2, 60);
        expectRateHeaders(await ctx.request('?status=open', { key: ctx.keys.pro }), { limit: 6, remaining: 5, reset: 60 });
        expectRateHeaders(await ctx.request('/ORBIT/gmp', { key: ctx.keys.free }), { limit: 3, remaining: 2, reset: 60 });
        expectRateHeaders(await ctx.request('?status=open'), { limit: 6, remaining: 5, reset: 60 });
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------
// 5. includeGmp (docs/spec.md#ipo-object, #list, #one-ipo, #limits)

function includeGmpChecks(): HttpCheck[] {
  return [
    {
      id: 'include-gmp-ipo',
      name: 'MUST add gmp (the latest snapshot at or before now, aggregations rounded, the estimated listing price and GMP percent, sources by name) to one IPO for pro + GMP add-on',
      async fn(ctx) {
        const key = ctx.keys.proGmp;
        for (const target of ['/ORBIT?includeGmp=true', `/${ORBIT}?includeGmp=TRUE`, '/orbit-aerospace-ipo?includeGmp=True']) {
          const res = await ctx.request(target, { key });
          expectOk(res);
          expect(res.text).toBe(JSON.stringify({ ipo: expectedIpo(ORBIT, { gmpAt: T0 }) }));
        }
        const expected: Array<[string, unknown]> = [
          // a snapshot without numeric sources
          [
            IPO_IDS.nimbus,
            { lastUpdatedAt: '2026-11-21T08:00:00.000Z', aggregations: { mean: null, median: null, min: null, max: null, mode: null }, estimatedListingPrice: null, gmpPercent: null, sources: [] },
          ],
          // only a snapshot after now
          [IPO_IDS.aster, null],
          // no snapshot at all
          [IPO_IDS.kappa, null],
          // priceRange 210-221: 221 + 31.2, and 31.2 / 221 x 100 = 14.1176... -> 14.12
          [
            IPO_IDS.lumen,
            {
              lastUpdatedAt: '2026-11-19T09:00:00.000Z',
              aggregations: { mean: 31.2, median: 31.2, min: 31.2, max: 31.2, mode: 31.2 },
              estimatedListingPrice: 252.2,
              gmpPercent: 14.12,
              sources: [{ name: 'ipowatch', gmpPrice: 31.2 }],
            },
          ],
        ];
        for (const [id, gmp] of expected) {
          const body = asIpo(await ctx.request(`/${id}?includeGmp=true`, { key }));
          expect(body.ipo.gmp).toEqual(gmp);
          expect(body.ipo).toEqual(expectedIpo(id, { gmpAt: T0 }));
        }
      },
    },
    {
      id: 'include-gmp-list',
      name: 'MUST add gmp to every IPO of a list for pro + GMP add-on (null when the IPO has none yet)',
      async fn(ctx) {
        for (const status of STATUSES) {
          const body = asList(await ctx.request(`?status=${status}&includeGmp=true&limit=100`, { key: ctx.keys.proGmp }));
          expect(body.ipos).toEqual(EXPECTED_ORDER[status].map((id) => expectedIpo(id, { gmpAt: T0 })));
          for (const ipo of body.ipos) expect(Object.keys(ipo).at(-1)).toBe('gmp');
        }
      },
    },
    {
      id: 'include-gmp-future-invisible',
      name: 'MUST hide snapshots dated after now until their time comes',
      async fn(ctx) {
        const key = ctx.keys.proGmp;
        const at = async (ms: number): Promise<unknown> => {
          ctx.clock.set(ms);
          return asIpo(await ctx.request('/ORBIT?includeGmp=true', { key })).ipo.gmp;
        };
        expect(await at(T0 - 1)).toEqual(expectedSnapshot(ORBIT, T0 - 1));
        expect(await at(T0)).toEqual(expectedSnapshot(ORBIT, T0));
        const next = await at(T0 + 1);
        expect(next).toEqual(expectedSnapshot(ORBIT, T0 + 1));
        expect(next).toMatchObject({ lastUpdatedAt: '2026-11-22T06:30:00.001Z', aggregations: { mean: 999 } });
        ctx.clock.set(Date.parse('2026-11-24T08:00:00.000Z'));
        const list = asList(await ctx.request('?status=upcoming&includeGmp=true', { key }));
        expect(list.ipos.find((i) => i.id === IPO_IDS.aster)?.gmp).toMatchObject({ lastUpdatedAt: '2026-11-24T08:00:00.000Z' });
      },
    },
    {
      id: 'include-gmp-plans',
      name: 'MUST answer 403 ERR:PLAN to includeGmp=true without pro + GMP add-on (free, paid, pro alone, keyless list)',
      async fn(ctx) {
        for (const key of [ctx.keys.free, ctx.keys.paid, ctx.keys.pro]) {
          expectError(await ctx.request('?status=open&includeGmp=true', { key }), 403);
          expectError(await ctx.request('/ORBIT?includeGmp=true', { key }), 403);
          expectError(await ctx.request('/NOPE?includeGmp=true', { key }), 403);
          // parameters come before the plan
          expectError(await ctx.request('?status=bogus&includeGmp=true', { key }), 400, 'status');
        }
        expectError(await ctx.request('?status=open&includeGmp=true'), 403);
        expectError(await ctx.request('?status=open&includeGmp=TRUE&limit=50&page=9'), 403);
        expectError(await ctx.request('?status=bogus&includeGmp=true'), 400, 'status');
        expectError(await ctx.request('/ORBIT?includeGmp=true'), 401);
      },
    },
    {
      id: 'include-gmp-false',
      name: 'MUST leave gmp out when includeGmp is false or absent, for every plan',
      async fn(ctx) {
        for (const key of [ctx.keys.free, ctx.keys.paid, ctx.keys.pro, ctx.keys.proGmp]) {
          for (const q of ['', '&includeGmp=false', '&includeGmp=FALSE']) {
            const one = asIpo(await ctx.request(`/ORBIT?x=1${q}`, { key }));
            expect(one.ipo).toEqual(expectedIpo(ORBIT));
            expect('gmp' in one.ipo).toBe(false);
            const list = asList(await ctx.request(`?status=open${q}`, { key }));
            for (const ipo of list.ipos) expect('gmp' in ipo).toBe(false);
          }
        }
        const keyless = asList(await ctx.request('?status=open&includeGmp=false'));
        expect('gmp' in (keyless.ipos[0] ?? {})).toBe(false);
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------
// 6. GMP series (docs/spec.md#gmp-series, #numbers)

function seriesChecks(): HttpCheck[] {
  const series = async (ctx: CheckContext, target: string, key = ctx.keys.proGmp): Promise<GmpSeries> => asSeries(await ctx.request(target, { key }));
  const expected = (q: Partial<{ ipoId: string; interval: GmpInterval; field: GmpField; from: string | null; to: string | null; now: number }>): GmpSeries => {
    const body = expectedSeries({ ipoId: ORBIT, interval: 'daily', field: 'mean', from: null, to: null, now: T0, ...q });
    if (body === 'from') throw new Error('the reference found the range empty');
    return body;
  };
  return [
    {
      id: 'series-default-range',
      name: 'MUST default to daily means over the 30 days ending now (meta.from = now - 30 days, meta.to = now)',
      async fn(ctx) {
        const body = await series(ctx, '/ORBIT/gmp');
        expect(body.meta.from).toBe('2026-10-23T06:30:00.000Z');
        expect(body.meta.to).toBe('2026-11-22T06:30:00.000Z');
        expect(body).toEqual(expected({}));
        expect(body.series.length).toBeGreaterThan(25);
      },
    },
    {
      id: 'series-only-to',
      name: 'MUST start 30 days before `to` when only `to` is given, and end at 23:59:59.999Z of `to`',
      async fn(ctx) {
        const body = await series(ctx, '/ORBIT/gmp?to=2026-11-10');
        expect(body.meta).toMatchObject({ from: '2026-10-11T00:00:00.000Z', to: '2026-11-10T23:59:59.999Z' });
        expect(body).toEqual(expected({ to: '2026-11-10' }));
        expect(body.series[0]?.timestamp).toBe('2026-10-11T00:00:00.000Z');
        expect(body.series.at(-1)?.timestamp).toBe('2026-11-10T00:00:00.000Z');
      },
    },
    {
      id: 'series-only-from',
      name: 'MUST end at now when only `from` is given, starting at 00:00:00.000Z of `from`',
      async fn(ctx) {
        const body = await series(ctx, '/ORBIT/gmp?from=2026-11-01');
        expect(body.meta).toMatchObject({ from: '2026-11-01T00:00:00.000Z', to: '2026-11-22T06:30:00.000Z' });
        expect(body).toEqual(expected({ from: '2026-11-01' }));
      },
    },
    {
      id: 'series-every-interval-and-field',
      name: 'MUST bucket every interval (5m ... weekly, weeks from Monday 00:00Z) and aggregate every field as the naive reference does',
      async fn(ctx) {
        for (const interval of INTERVALS) {
          for (const field of FIELDS) {
            const body = await series(ctx, `/ORBIT/gmp?interval=${interval}&field=${field}&from=2026-10-20&to=2026-11-22`);
            const want = expected({ interval, field, from: '2026-10-20', to: '2026-11-22' });
            expect(body, `${interval} ${field}`).toEqual(want);
            expect(want.series.length).toBeGreaterThan(interval === 'weekly' ? 4 : 30);
          }
        }
        const weekly = await series(ctx, '/ORBIT/gmp?interval=weekly&from=2026-10-08&to=2026-11-22');
        expect(weekly.series.map((p) => p.timestamp)).toEqual([
          '2026-10-05T00:00:00.000Z',
          '2026-10-12T00:00:00.000Z',
          '2026-10-19T00:00:00.000Z',
          '2026-10-26T00:00:00.000Z',
          '2026-11-02T00:00:00.000Z',
          '2026-11-09T00:00:00.000Z',
          '2026-11-16T00:00:00.000Z',
        ]);
      },
    },
    {
      id: 'series-exact-rounding',
      name: 'MUST round snapshot aggregations and bucket means half away from zero on exact paise (1 and 1.01 -> 1.01; -1.005 -> -1.01)',
      async fn(ctx) {
        const body = await series(ctx, '/ORBIT/gmp?interval=5m&from=2026-11-21&to=2026-11-21');
        const at = (t: string, s: GmpSeries): number | null | undefined => s.series.find((p) => p.timestamp === t)?.price;
        expect(at('2026-11-21T10:00:00.000Z', body)).toBe(14.49);
        expect(at('2026-11-21T11:00:00.000Z', body)).toBe(1.01);
        expect(at('2026-11-21T11:10:00.000Z', body)).toBe(-1.01);
        const min = await series(ctx, '/ORBIT/gmp?interval=5m&field=min&from=2026-11-21&to=2026-11-21');
        expect(at('2026-11-21T10:00:00.000Z', min)).toBe(14.48);
        const median = await series(ctx, '/ORBIT/gmp?interval=5m&field=median&from=2026-11-21&to=2026-11-21');
        expect(at('2026-11-21T10:00:00.000Z', median)).toBe(14.49);
        const mode = await series(ctx, '/ORBIT/gmp?interval=5m&field=mode&from=2026-11-21&to=2026-11-21');
        expect(at('2026-11-21T10:00:00.000Z', mode)).toBe(14.48);
        const max = await series(ctx, '/ORBIT/gmp?interval=5m&field=max&from=2026-11-21&to=2026-11-21');
        expect(at('2026-11-21T10:00:00.000Z', max)).toBe(14.49);
        expect(body).toEqual(expected({ interval: '5m', from: '2026-11-21', to: '2026-11-21' }));
      },
    },
    {
      id: 'series-case-insensitive',
      name: 'MUST accept interval and field in any case and echo the canonical lowercase value',
      async fn(ctx) {
        for (const [q, interval, field] of [
          ['interval=HOURLY&field=MeAn', 'hourly', 'mean'],
          ['interval=5M&field=MEDIAN', '5m', 'median'],
          ['interval=Weekly&field=Mode', 'weekly', 'mode'],
          ['interval=dAILY&field=MAX', 'daily', 'max'],
        ] as const) {
          const body = await series(ctx, `/ORBIT/gmp?${q}`);
          expect(body.interval).toBe(interval);
          expect(body.field).toBe(field);
          expect(body).toEqual(expected({ interval, field }));
        }
      },
    },
    {
      id: 'series-future-invisible',
      name: 'MUST leave snapshots after now out of the series, while meta.to still reports the asked end',
      async fn(ctx) {
        const body = await series(ctx, '/ORBIT/gmp?interval=5m&from=2026-11-22&to=2026-11-30');
        expect(body.meta).toEqual({ from: '2026-11-22T00:00:00.000Z', to: '2026-11-30T23:59:59.999Z', count: body.series.length });
        expect(body.series.at(-1)).toEqual({ timestamp: '2026-11-22T06:30:00.000Z', price: 41.4 });
        expect(body).toEqual(expected({ interval: '5m', from: '2026-11-22', to: '2026-11-30' }));
        ctx.clock.set(Date.parse('2026-11-23T06:00:00.000Z'));
        const later = await series(ctx, '/ORBIT/gmp?interval=5m&from=2026-11-22&to=2026-11-30');
        expect(later.series.slice(-2)).toEqual([
          { timestamp: '2026-11-22T06:30:00.000Z', price: 520.2 },
          { timestamp: '2026-11-23T05:00:00.000Z', price: 777 },
        ]);
        expect(later).toEqual(expected({ interval: '5m', from: '2026-11-22', to: '2026-11-30', now: Date.parse('2026-11-23T06:00:00.000Z') }));
      },
    },
    {
      id: 'series-empty-and-null',
      name: 'MUST answer 200 with series [] for an IPO without data in range, and a null price for a bucket of null values',
      async fn(ctx) {
        for (const [id, symbol] of [[IPO_IDS.beta, 'BETA'], [IPO_IDS.aster, 'ASTER'], [IPO_IDS.indusBonds, null]] as const) {
          const body = await series(ctx, `/${id}/gmp`);
          expect(body).toEqual({
            ipoId: id,
            symbol,
            interval: 'daily',
            field: 'mean',
            series: [],
            meta: { from: '2026-10-23T06:30:00.000Z', to: '2026-11-22T06:30:00.000Z', count: 0 },
          });
        }
        const orbitEarly = await series(ctx, '/ORBIT/gmp?from=2026-01-01&to=2026-01-31');
        expect(orbitEarly.series).toEqual([]);
        expect(orbitEarly.meta.count).toBe(0);
        const nimbus = await series(ctx, '/NIMBUS/gmp?field=median');
        expect(nimbus.series).toEqual([{ timestamp: '2026-11-21T00:00:00.000Z', price: null }]);
        expect(nimbus.meta.count).toBe(1);
      },
    },
    {
      id: 'series-identifier',
      name: 'MUST resolve the series identifier like one IPO (id, symbol, slug) and answer with the canonical ipoId and symbol',
      async fn(ctx) {
        for (const target of ['/orbit-aerospace-ipo/gmp', '/Orbit/gmp', `/${ORBIT}/gmp`, '/ORB%49T/gmp', '/ORBIT/gmp/']) {
          const body = await series(ctx, target);
          expect(body).toEqual(expected({}));
        }
        const holdings = await series(ctx, '/orbit/gmp');
        expect(holdings.ipoId).toBe('orbit');
        expect(holdings.symbol).toBe('ORBH');
        expectError(await ctx.request('/NOPE/gmp', { key: ctx.keys.proGmp }), 404);
        expectError(await ctx.request('/a%2Fb/gmp', { key: ctx.keys.proGmp }), 404);
        expectError(await ctx.request('/%E2%84%AAAPPA/gmp', { key: ctx.keys.proGmp }), 404);
      },
    },
    {
      id: 'series-bad-params',
      name: 'MUST answer 400 naming the parameter for a bad interval, field, from or to',
      async fn(ctx) {
        const cases: Array<[string, string]> = [
          ['interval=1h', 'interval'],
          ['interval=', 'interval'],
          ['interval', 'interval'],
          ['interval=daily&interval=daily', 'interval'],
          ['interval=%ZZ', 'interval'],
          ['interval=daily%20', 'interval'],
          ['interval=1d', 'interval'],
          // case folds in ASCII only: the Kelvin sign lowercases to k in JavaScript
          ['interval=wee%E2%84%AAly', 'interval'],
          ['field=avg', 'field'],
          ['field=', 'field'],
          ['field=mean&field=max', 'field'],
          ['from=2026-13-01', 'from'],
          ['from=2026-2-3', 'from'],
          ['from=0000-00-00', 'from'],
          ['from=2026-11-01T00:00:00Z', 'from'],
          ['from=', 'from'],
          ['from=2026-11-01&from=2026-11-02', 'from'],
          ['to=2026-02-30', 'to'],
          ['to=', 'to'],
          ['to=20261101', 'to'],
          ['to=2026-11-01&to=2026-11-01', 'to'],
        ];
        for (const [q, parameter] of cases) {
          expectError(await ctx.request(`/ORBIT/gmp?${q}`, { key: ctx.keys.proGmp }), 400, parameter);
        }
      },
    },
    {
      id: 'series-param-order',
      name: 'MUST check identifier, interval, field, from, to, then start > end (from), then the bucket cap (interval), before plan and lookup',
      async fn(ctx) {
        const key = ctx.keys.proGmp;
        const cases: Array<[string, string]> = [
          ['/%E0%A4/gmp?interval=bad&field=bad', 'identifier'],
          ['/ORBIT/gmp?field=bad&interval=bad', 'interval'],
          ['/ORBIT/gmp?to=bad&from=bad&field=bad', 'field'],
          ['/ORBIT/gmp?to=bad&from=bad', 'from'],
          ['/ORBIT/gmp?from=2026-11-10&to=bad', 'to'],
          ['/ORBIT/gmp?to=2026-11-09&from=2026-11-10', 'from'],
          ['/ORBIT/gmp?interval=5m&from=2026-11-10&to=2000-01-01', 'from'],
          ['/ORBIT/gmp?interval=5m&from=2000-01-01&to=2026-11-10', 'interval'],
          ['/NOPE/gmp?interval=bad', 'interval'],
          ['/NOPE/gmp?interval=5m&from=2000-01-01&to=2026-11-10', 'interval'],
        ];
        for (const [target, parameter] of cases) expectError(await ctx.request(target, { key }), 400, parameter);
        // 400 before the plan's 403, 403 before the lookup's 404
        expectError(await ctx.request('/ORBIT/gmp?interval=bad', { key: ctx.keys.free }), 400, 'interval');
        expectError(await ctx.request('/NOPE/gmp', { key: ctx.keys.free }), 403);
        expectError(await ctx.request('/NOPE/gmp', { key }), 404);
      },
    },
    {
      id: 'series-start-after-end',
      name: 'MUST answer 400 naming from when the effective start is after the effective end, and accept from = to',
      async fn(ctx) {
        const key = ctx.keys.proGmp;
        expectError(await ctx.request('/ORBIT/gmp?from=2026-11-10&to=2026-11-09', { key }), 400, 'from');
        // only from, after now: start > now = end
        expectError(await ctx.request('/ORBIT/gmp?from=2026-11-23', { key }), 400, 'from');
        const same = await series(ctx, '/ORBIT/gmp?from=2026-11-21&to=2026-11-21');
        expect(same.meta).toEqual({ from: '2026-11-21T00:00:00.000Z', to: '2026-11-21T23:59:59.999Z', count: 1 });
        // from today (start before now) is fine; a range wholly after now is empty, not an error
        expect((await series(ctx, '/ORBIT/gmp?from=2026-11-22')).meta.to).toBe(iso(T0));
        expect((await series(ctx, '/ORBIT/gmp?from=2026-11-25&to=2026-11-26')).series).toEqual([]);
      },
    },
    {
      id: 'series-bucket-cap-5m',
      name: 'MUST allow exactly 20,000 5m buckets and refuse 20,001 with 400 naming interval',
      async fn(ctx) {
        // from=2026-09-14 and end = now: (bucketStart(now) - start) / 5 min + 1 buckets
        const start = Date.UTC(2026, 8, 14);
        const lastOf20000 = start + 19_999 * 300_000 + 299_999;
        expect(iso(lastOf20000)).toBe('2026-11-22T10:39:59.999Z');
        ctx.clock.set(lastOf20000);
        const ok = await ctx.request('/ORBIT/gmp?interval=5m&from=2026-09-14', { key: ctx.keys.proGmp });
        expect(ok.status).toBe(200);
        expect(asSeries(ok).meta).toMatchObject({ from: '2026-09-14T00:00:00.000Z', to: '2026-11-22T10:39:59.999Z' });
        ctx.clock.set(lastOf20000 + 1);
        expectError(await ctx.request('/ORBIT/gmp?interval=5m&from=2026-09-14', { key: ctx.keys.proGmp }), 400, 'interval');
        // 30m from 2026-01-01 to now is fine (< 20,000)
        expect((await ctx.request('/ORBIT/gmp?interval=30m&from=2026-01-01', { key: ctx.keys.proGmp })).status).toBe(200);
      },
    },
    {
      id: 'series-bucket-cap-daily',
      name: 'MUST count buckets as (bucketStart(end) - bucketStart(start)) / size + 1 for every interval, honouring maxGmpBuckets',
      async fn(ctx) {
        const key = ctx.keys.proGmp;
        const from = '2000-01-01';
        const to20000 = iso(Date.UTC(2000, 0, 1) + 19_999 * DAY).slice(0, 10);
        const to20001 = iso(Date.UTC(2000, 0, 1) + 20_000 * DAY).slice(0, 10);
        expect((await ctx.request(`/ORBIT/gmp?from=${from}&to=${to20000}`, { key })).status).toBe(200);
        expectError(await ctx.request(`/ORBIT/gmp?from=${from}&to=${to20001}`, { key }), 400, 'interval');
        expectError(await ctx.request(`/ORBIT/gmp?interval=hourly&from=2024-01-01&to=2026-11-22`, { key }), 400, 'interval');
        await ctx.restart({ maxGmpBuckets: 30 });
        expect((await ctx.request('/ORBIT/gmp?from=2026-10-23&to=2026-11-21', { key })).status).toBe(200);
        expectError(await ctx.request('/ORBIT/gmp?from=2026-10-23&to=2026-11-22', { key }), 400, 'interval');
        // the default range: 30 days ending now at 06:30 spans 31 daily buckets
        expectError(await ctx.request('/ORBIT/gmp', { key }), 400, 'interval');
        // weekly: 2026-10-05 (Mon) .. 2027-04-26 (Mon) is 30 weeks
        expect((await ctx.request('/ORBIT/gmp?interval=weekly&from=2026-10-11&to=2027-05-02', { key })).status).toBe(200);
        expectError(await ctx.request('/ORBIT/gmp?interval=weekly&from=2026-10-11&to=2027-05-03', { key }), 400, 'interval');
      },
    },
    {
      id: 'series-plan-after-preview',
      name: 'MUST allow the GMP series only to pro + GMP add-on after gmpPreviewEnds (default 2026-09-30); other keys get 403 ERR:PLAN',
      async fn(ctx) {
        for (const key of [ctx.keys.free, ctx.keys.paid, ctx.keys.pro]) {
          expectError(await ctx.request('/ORBIT/gmp', { key }), 403);
          expectError(await ctx.request('/ORBIT/gmp?interval=weekly&from=2026-11-01', { key }), 403);
        }
        expect((await ctx.request('/ORBIT/gmp', { key: ctx.keys.proGmp })).status).toBe(200);
      },
    },
    {
      id: 'series-plan-during-preview',
      name: 'MUST allow the GMP series to every valid key while the preview runs (gmpPreviewEnds after today)',
      options: { gmpPreviewEnds: '2026-12-31' },
      async fn(ctx) {
        const want = JSON.stringify(expected({}));
        for (const key of [ctx.keys.free, ctx.keys.paid, ctx.keys.paid2, ctx.keys.pro, ctx.keys.proGmp]) {
          const res = await ctx.request('/ORBIT/gmp', { key });
          expectOk(res);
          expect(res.text).toBe(want);
        }
        expectError(await ctx.request('/ORBIT/gmp'), 401);
        expectError(await ctx.request('/ORBIT/gmp', { key: ctx.keys.revoked }), 401);
      },
    },
    {
      id: 'series-preview-ist-day',
      name: 'MUST end the preview with the IST calendar day gmpPreviewEnds (open at 23:59:59.999 IST, closed at 00:00 IST next day)',
      options: { gmpPreviewEnds: '2026-11-22' },
      async fn(ctx) {
        ctx.clock.set(Date.parse('2026-11-22T18:29:59.999Z'));
        expect((await ctx.request('/ORBIT/gmp', { key: ctx.keys.free })).status).toBe(200);
        ctx.clock.set(Date.parse('2026-11-22T18:30:00.000Z'));
        expectError(await ctx.request('/ORBIT/gmp', { key: ctx.keys.free }), 403);
        expect((await ctx.request('/ORBIT/gmp', { key: ctx.keys.proGmp })).status).toBe(200);
      },
    },
    {
      id: 'series-property-reference',
      name: 'MUST answer any interval, field, from and to like the naive reference (property)',
      async fn(ctx) {
        const day = fc.integer({ min: 0, max: 65 }).map((n) => iso(Date.UTC(2026, 9, 1) + n * DAY).slice(0, 10));
        const caseOf = fc.constantFrom<(s: string) => string>((s) => s, (s) => s.toUpperCase(), (s) => s.charAt(0).toUpperCase() + s.slice(1));
        await fc.assert(
          fc.asyncProperty(
            fc.constantFrom(...INTERVALS),
            fc.constantFrom(...FIELDS),
            fc.option(day, { nil: null }),
            fc.option(day, { nil: null }),
            fc.boolean(),
            caseOf,
            async (interval, field, from, to, defaults, casing) => {
              const parts: string[] = [];
              if (!defaults || interval !== 'daily') parts.push(`interval=${casing(interval)}`);
              if (!defaults || field !== 'mean') parts.push(`field=${casing(field)}`);
              if (from !== null) parts.push(`from=${from}`);
              if (to !== null) parts.push(`to=${to}`);
              const res = await ctx.request(`/ORBIT/gmp?${parts.join('&')}`, { key: ctx.keys.proGmp });
              const want = expectedSeries({ ipoId: ORBIT, interval, field, from, to, now: T0 });
              if (want === 'from') {
                expectError(res, 400, 'from');
              } else {
                expectOk(res);
                expect(res.text).toBe(JSON.stringify(want));
              }
            },
          ),
          { numRuns: 100 },
        );
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------
// 7. List (docs/spec.md#status, #list)

function listChecks(): HttpCheck[] {
  const ids = async (ctx: CheckContext, q: string, key = ctx.keys.paid): Promise<string[]> =>
    asList(await ctx.request(`?${q}&limit=100`, { key })).ipos.map((i) => i.id);
  return [
    {
      id: 'list-status-order',
      name: 'MUST list every status with exactly its IPOs in the contract order (ties by id, names in code-point order)',
      async fn(ctx) {
        for (const status of STATUSES) {
          for (const written of [status, status.toUpperCase()]) {
            const body = asList(await ctx.request(`?status=${written}&limit=100`, { key: ctx.keys.paid }));
            const order = EXPECTED_ORDER[status];
            expect(Object.keys(body)).toEqual(['meta', 'ipos']);
            expect(Object.keys(body.meta)).toEqual(['count', 'countOnPage', 'totalPages', 'page', 'limit']);
            expect(body.meta).toEqual({ count: order.length, countOnPage: order.length, totalPages: 1, page: 1, limit: 100 });
            expect(body.ipos).toEqual(order.map((id) => expectedIpo(id)));
          }
        }
      },
    },
    {
      id: 'list-type-filter',
      name: 'MUST filter by type: a comma list, case-insensitive, repeats ignored',
      async fn(ctx) {
        expect(await ids(ctx, 'status=listed&type=eq')).toEqual(['2026000100', '2026000101', '2026000105']);
        expect(await ids(ctx, 'status=listed&type=EQ,SME')).toEqual(['2026000103', '2026000100', '2026000101', '2026000105']);
        expect(await ids(ctx, 'status=listed&type=sme,SME,Sme')).toEqual(['2026000103']);
        expect(await ids(ctx, 'status=listed&type=Debt')).toEqual(['2025000104']);
        expect(await ids(ctx, 'status=listed&type=debt,eq,sme')).toEqual([...EXPECTED_ORDER.listed]);
        expect(await ids(ctx, 'status=open&type=DEBT,SME')).toEqual(['2026000004', '2026000003']);
        expect(await ids(ctx, 'status=announced&type=SME')).toEqual(['2026000404']);
      },
    },
    {
      id: 'list-source-filter',
      name: 'MUST filter by source: IPOs whose exchanges hold it (case-insensitive)',
      async fn(ctx) {
        expect(await ids(ctx, 'status=listed&source=bse')).toEqual(['2026000103', '2026000101', '2026000105']);
        expect(await ids(ctx, 'status=listed&source=NSE')).toEqual(['2026000100', '2026000101', '2025000104']);
        expect(await ids(ctx, 'status=announced&source=nse')).toEqual(['2026000405', '2026000401', '2026000402']);
        expect(await ids(ctx, 'status=open&source=Bse')).toEqual(['2026000004', '2026000001']);
      },
    },
    {
      id: 'list-date-filters',
      name: 'MUST filter startDate >= startDate and endDate <= endDate (inclusive); an IPO lacking the date does not match',
      async fn(ctx) {
        expect(await ids(ctx, 'status=closed&startDate=2026-11-18')).toEqual(['2026000203', '2026000199']);
        expect(await ids(ctx, 'status=closed&startDate=2026-11-19')).toEqual(['2026000203', '2026000199']);
        expect(await ids(ctx, 'status=closed&startDate=2026-11-20')).toEqual(['2026000203']);
        expect(await ids(ctx, 'status=closed&endDate=2026-11-19')).toEqual(['2026000200', '2026000201']);
        expect(await ids(ctx, 'status=closed&endDate=2026-11-18')).toEqual([]);
        expect(await ids(ctx, 'status=open&endDate=2026-11-22')).toEqual(['2026000004']);
        expect(await ids(ctx, 'status=open&startDate=2026-11-20&endDate=2026-11-24')).toEqual(['2026000001']);
        expect(await ids(ctx, 'status=announced&startDate=2000-01-01')).toEqual([]);
        expect(await ids(ctx, 'status=upcoming&endDate=2030-01-01')).toEqual(['2026000300', '2026000301', '2027000302']);
        const empty = asList(await ctx.request('?status=listed&startDate=2026-12-01&endDate=2026-01-01', { key: ctx.keys.paid }));
        expect(empty.meta).toEqual({ count: 0, countOnPage: 0, totalPages: 0, page: 1, limit: 3 });
        expect(empty.ipos).toEqual([]);
      },
    },
    {
      id: 'list-year-filter',
      name: 'MUST filter by year of startDate (four digits; announced IPOs never match)',
      async fn(ctx) {
        expect(await ids(ctx, 'status=listed&year=2025')).toEqual(['2025000104']);
        expect(await ids(ctx, 'status=listed&year=2026')).toEqual(['2026000103', '2026000100', '2026000101', '2026000105']);
        expect(await ids(ctx, 'status=upcoming&year=2027')).toEqual(['2027000302']);
        expect(await ids(ctx, 'status=announced&year=2026')).toEqual([]);
        expect(await ids(ctx, 'status=listed&year=0000')).toEqual([]);
      },
    },
    {
      id: 'list-combined-filters',
      name: 'MUST combine all filters with AND',
      async fn(ctx) {
        expect(await ids(ctx, 'status=listed&type=EQ&source=bse&year=2026&startDate=2026-10-01&endDate=2026-11-14')).toEqual(['2026000101']);
        expect(await ids(ctx, 'status=listed&type=EQ&source=bse&year=2026&startDate=2026-09-01&endDate=2026-11-14')).toEqual(['2026000101', '2026000105']);
        expect(await ids(ctx, 'status=upcoming&type=eq&source=nse&year=2026')).toEqual(['2026000301', 'orbit']);
        expect(await ids(ctx, 'status=open&type=SME&source=bse')).toEqual([]);
      },
    },
    {
      id: 'list-pagination',
      name: 'MUST split the order into pages of limit with totalPages = ceil(count / limit), visiting every match once',
      async fn(ctx) {
        for (const status of STATUSES) {
          const order = EXPECTED_ORDER[status];
          for (const limit of [1, 2, 3]) {
            const totalPages = Math.ceil(order.length / limit);
            const seen: string[] = [];
            for (let page = 1; page <= totalPages + 1; page++) {
              const body = asList(await ctx.request(`?status=${status}&limit=${limit}&page=${page}`, { key: ctx.keys.pro }));
              const slice = order.slice((page - 1) * limit, page * limit);
              expect(body.meta).toEqual({ count: order.length, countOnPage: slice.length, totalPages, page, limit });
              seen.push(...body.ipos.map((i) => i.id));
            }
            expect(seen).toEqual([...order]);
          }
        }
      },
    },
    {
      id: 'list-page-past-end',
      name: 'MUST answer a page past the end with 200, ipos [] and countOnPage 0, the other meta as usual',
      async fn(ctx) {
        for (const page of ['3', '4', '999', '1000000000']) {
          const res = await ctx.request(`?status=listed&limit=2&page=${page}`, { key: ctx.keys.paid });
          const body = asList(res);
          if (page === '3') continue;
          expect(res.text).toBe(`{"meta":{"count":5,"countOnPage":0,"totalPages":3,"page":${page},"limit":2},"ipos":[]}`);
          expect(body.ipos).toEqual([]);
        }
      },
    },
    {
      id: 'list-default-limit',
      name: 'MUST use limit 3 when none is asked for',
      async fn(ctx) {
        const body = asList(await ctx.request('?status=listed', { key: ctx.keys.paid }));
        expect(body.meta).toEqual({ count: 5, countOnPage: 3, totalPages: 2, page: 1, limit: 3 });
        expect(body.ipos.map((i) => i.id)).toEqual(EXPECTED_ORDER.listed.slice(0, 3));
        const page2 = asList(await ctx.request('?status=listed&page=2', { key: ctx.keys.paid }));
        expect(page2.ipos.map((i) => i.id)).toEqual(EXPECTED_ORDER.listed.slice(3));
      },
    },
    {
      id: 'list-limit-clamp',
      name: 'MUST clamp limit to the plan maximum (free 1, paid and pro 100) and report the effective limit',
      async fn(ctx) {
        const meta = async (q: string, key: string): Promise<ListResponse['meta']> => asList(await ctx.request(`?status=announced&${q}`, { key })).meta;
        expect(await meta('limit=5', ctx.keys.free)).toEqual({ count: 8, countOnPage: 1, totalPages: 8, page: 1, limit: 1 });
        expect(await meta('limit=5&page=8', ctx.keys.free)).toEqual({ count: 8, countOnPage: 1, totalPages: 8, page: 8, limit: 1 });
        expect(await meta('', ctx.keys.free)).toMatchObject({ limit: 1, totalPages: 8 });
        expect(await meta('limit=1000', ctx.keys.paid)).toEqual({ count: 8, countOnPage: 8, totalPages: 1, page: 1, limit: 100 });
        expect(await meta('limit=99999999999999999999999999999', ctx.keys.pro)).toMatchObject({ limit: 100 });
        expect(await meta('limit=0005', ctx.keys.pro)).toMatchObject({ limit: 5, totalPages: 2 });
        expect(await meta('limit=100', ctx.keys.proGmp)).toMatchObject({ limit: 100 });
        expectError(await ctx.request('?status=open&limit=0', { key: ctx.keys.paid }), 400, 'limit');
        await ctx.restart({ maxListLimit: { paid: 2 } });
        expect(await meta('limit=10', ctx.keys.paid)).toEqual({ count: 8, countOnPage: 2, totalPages: 4, page: 1, limit: 2 });
        expect(await meta('limit=10', ctx.keys.pro)).toMatchObject({ limit: 10 });
        expect(await meta('limit=10', ctx.keys.free)).toMatchObject({ limit: 1 });
      },
    },
    {
      id: 'list-page-bounds',
      name: 'MUST accept page up to 1,000,000,000 written in digits (leading zeros allowed) and refuse 1,000,000,001',
      async fn(ctx) {
        const key = ctx.keys.paid;
        expect(asList(await ctx.request('?status=listed&page=1000000000', { key })).meta).toEqual({ count: 5, countOnPage: 0, totalPages: 2, page: 1000000000, limit: 3 });
        expect(asList(await ctx.request('?status=listed&page=00000000001000000000', { key })).meta.page).toBe(1000000000);
        expect(asList(await ctx.request('?status=listed&page=0002', { key })).meta.page).toBe(2);
        expectError(await ctx.request('?status=listed&page=1000000001', { key }), 400, 'page');
        expectError(await ctx.request('?status=listed&page=99999999999999999999999', { key }), 400, 'page');
        expectError(await ctx.request('?status=listed&page=0', { key }), 400, 'page');
        expectError(await ctx.request('?status=listed&page=000', { key }), 400, 'page');
      },
    },
    {
      id: 'list-status-by-ist-day',
      name: 'MUST derive status from the IST calendar day of now (transitions at 00:00 IST)',
      async fn(ctx) {
        const key = ctx.keys.paid;
        ctx.clock.set(Date.parse('2026-11-22T18:29:59.999Z'));
        expect(await ids(ctx, 'status=open', key)).toEqual([...EXPECTED_ORDER.open]);
        ctx.clock.set(Date.parse('2026-11-22T18:30:00.000Z'));
        expect(await ids(ctx, 'status=open', key)).toEqual(['2026000001', '2026000002']);
        expect(await ids(ctx, 'status=closed', key)).toEqual(['2026000003', '2026000004', '2026000203', '2026000199', '2026000200', '2026000201']);
        expect(asIpo(await ctx.request('/2026000004', { key })).ipo.status).toBe('closed');
        ctx.clock.set(Date.parse('2026-11-21T18:29:59.999Z'));
        expect(asIpo(await ctx.request('/HARBOR', { key })).ipo.status).toBe('closed');
        expect(asIpo(await ctx.request('/VEGA', { key })).ipo.status).toBe('open');
        ctx.clock.set(Date.parse('2026-11-21T18:30:00.000Z'));
        expect(asIpo(await ctx.request('/HARBOR', { key })).ipo.status).toBe('listed');
        expect(asIpo(await ctx.request('/VEGA', { key })).ipo.status).toBe('closed');
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------
// 8. One IPO (docs/spec.md#one-ipo, #requests)

function ipoChecks(): HttpCheck[] {
  const one = async (ctx: CheckContext, target: string): Promise<Ipo> => asIpo(await ctx.request(target, { key: ctx.keys.paid })).ipo;
  return [
    {
      id: 'ipo-by-id',
      name: 'MUST answer {"ipo": ...} for every IPO by its id',
      async fn(ctx) {
        for (const id of Object.values(IPO_IDS)) {
          const res = await ctx.request(`/${encodeURIComponent(id)}`, { key: ctx.keys.free });
          expectOk(res);
          expect(res.text).toBe(JSON.stringify({ ipo: expectedIpo(id) }));
        }
      },
    },
    {
      id: 'ipo-by-symbol',
      name: 'MUST find an IPO by its symbol ignoring ASCII case',
      async fn(ctx) {
        for (const s of ['ORBIT', 'Orbit', 'oRBIT', 'ORBIt']) expect((await one(ctx, `/${s}`)).id).toBe(ORBIT);
        expect((await one(ctx, '/merid')).id).toBe(IPO_IDS.meridian);
        expect((await one(ctx, '/R&D')).id).toBe(IPO_IDS.crest);
        expect((await one(ctx, '/r%26d')).id).toBe(IPO_IDS.crest);
        expect((await one(ctx, '/sltex')).id).toBe(IPO_IDS.textiles);
      },
    },
    {
      id: 'ipo-by-slug',
      name: 'MUST find an IPO by its slug ignoring ASCII case',
      async fn(ctx) {
        for (const s of ['orbit-aerospace-ipo', 'ORBIT-AEROSPACE-IPO', 'Orbit-Aerospace-Ipo']) expect((await one(ctx, `/${s}`)).id).toBe(ORBIT);
        expect((await one(ctx, '/indus-infra-bonds')).id).toBe(IPO_IDS.indusBonds);
        expect((await one(ctx, '/ARC-VENTURES')).id).toBe(IPO_IDS.arc);
      },
    },
    {
      id: 'ipo-precedence',
      name: 'MUST resolve an identifier by id first, then symbol, then slug',
      async fn(ctx) {
        expect((await one(ctx, '/orbit')).id).toBe('orbit');
        expect((await one(ctx, '/ORBIT')).id).toBe(ORBIT);
        expect((await one(ctx, '/Orbit')).id).toBe(ORBIT);
        expect((await one(ctx, '/nova')).id).toBe(IPO_IDS.novaChem);
        expect((await one(ctx, '/NOVA')).id).toBe(IPO_IDS.novaChem);
        expect((await one(ctx, '/nova-chemicals')).id).toBe(IPO_IDS.novaChem);
        expect((await one(ctx, '/NOVAPWR')).id).toBe(IPO_IDS.novaPower);
        expect((await one(ctx, '/orbh')).id).toBe('orbit');
      },
    },
    {
      id: 'ipo-percent-encoded',
      name: 'MUST percent-decode the identifier once',
      async fn(ctx) {
        for (const t of ['/ORB%49T', '/%4F%52%42%49%54', '/orbit%2Daerospace%2Dipo', '/%32026000001']) expect((await one(ctx, t)).id).toBe(ORBIT);
        // decoded once only: %2549 is "%49", which names nothing
        expectError(await ctx.request('/ORB%2549T', { key: ctx.keys.paid }), 404);
        // the last segment is decoded too: %67mp is gmp
        expect(asSeries(await ctx.request('/ORBIT/%67mp', { key: ctx.keys.proGmp })).ipoId).toBe(ORBIT);
      },
    },
    {
      id: 'ipo-encoded-slash',
      name: 'MUST treat %2F as part of the identifier (/ipos/a%2Fb names "a/b": 404), not as a path separator',
      async fn(ctx) {
        for (const t of ['/a%2Fb', '/ORBIT%2Fgmp', '/ORBIT%2F', '/%2F']) {
          expectError(await ctx.request(t, { key: ctx.keys.paid }), 404);
        }
      },
    },
    {
      id: 'ipo-malformed-encoding',
      name: 'MUST answer 400 naming identifier for a malformed percent-encoding in the path',
      async fn(ctx) {
        for (const t of ['/%E0%A4', '/%', '/%ZZ', '/ORBIT%', '/%C0%AF', '/%ED%A0%80', '/%E0%A4/gmp', '/%/gmp']) {
          expectError(await ctx.request(t, { key: ctx.keys.proGmp }), 400, 'identifier');
        }
      },
    },
    {
      id: 'ipo-unicode-identifier',
      name: 'MUST answer 404 (never 500) to identifiers that are not ASCII, folding no case beyond A-Z',
      async fn(ctx) {
        const targets = [
          '/\u0911\u0930\u094D\u092C\u093F\u091F',
          '/%E2%84%AAAPPA', // KELVIN SIGN + APPA: toLowerCase() would make it "kappa"
          '/ORB%C4%B0T', // LATIN CAPITAL I WITH DOT ABOVE
          '/%C5%BFLTEX', // LATIN SMALL LONG S: toUpperCase() would make it "SLTEX"
          '/%F0%9F%92%A5',
          '/%00',
          '/ORBIT%00',
          `/${'x'.repeat(300)}`,
          '/gmp',
          '/NOPE',
          '/..x',
        ];
        for (const t of targets) expectError(await ctx.request(t, { key: ctx.keys.paid }), 404);
      },
    },
    {
      id: 'ipo-trailing-slash',
      name: 'MUST tolerate one trailing slash (/ipos/, /ipos/ORBIT/, /ipos/ORBIT/gmp/)',
      async fn(ctx) {
        const pairs: Array<[string, string, string]> = [
          ['/ORBIT', '/ORBIT/', ctx.keys.paid],
          ['/ORBIT/gmp', '/ORBIT/gmp/', ctx.keys.proGmp],
          ['?status=open', '/?status=open', ctx.keys.paid],
          ['/ORBIT?includeGmp=true', '/ORBIT/?includeGmp=true', ctx.keys.proGmp],
        ];
        for (const [a, b, key] of pairs) {
          const x = await ctx.request(a, { key });
          const y = await ctx.request(b, { key });
          expect(x.status).toBe(200);
          expect(y.status).toBe(200);
          expect(y.text).toBe(x.text);
        }
        expect((await ctx.request('/?status=open')).status).toBe(200);
      },
    },
    {
      id: 'request-absolute-form',
      name: 'MUST answer a request-target in absolute-form (http://host/ipos/ORBIT, RFC 9112 3.2.2) as its origin-form',
      async fn(ctx) {
        for (const [target, key] of [
          ['/ORBIT', ctx.keys.paid],
          ['?status=open', ctx.keys.paid],
          ['/ORBIT/gmp', ctx.keys.proGmp],
        ] as const) {
          const origin = await ctx.raw(target, { headers: { 'x-api-key': key } });
          const absolute = await ctx.raw(target, { headers: { 'x-api-key': key }, absoluteForm: true });
          expect(origin.status).toBe(200);
          expect(absolute.status, absolute.text.slice(0, 200)).toBe(200);
          expect(absolute.text).toBe(origin.text);
        }
      },
    },
    {
      id: 'app-embedded',
      name: 'MUST work inside an app with its own middleware and routes before and after it, and leave other paths to the app',
      async fn(ctx) {
        await ctx.restartInApp();
        const origin = new URL(ctx.baseUrl).origin;
        const text = async (path: string): Promise<[number, string, string | undefined]> => {
          const res = await fetchResult(origin + path);
          return [res.status, res.text, res.headers['x-app']];
        };
        expect(await text('/health')).toEqual([200, 'ok', 'before']);
        expect(await text('/other')).toEqual([200, 'app other', 'before']);
        expect(await text('/iposX')).toEqual([200, 'app iposX', 'before']);
        expect(await text('/iposX/ORBIT')).toEqual([404, 'app 404', 'before']);
        expect(await text('/nowhere')).toEqual([404, 'app 404', 'before']);
        // (the mount path's letter case is the framework's business: koa-mount is case-sensitive)
        for (const mount of ['/ipos', '/ipos/']) {
          const list = await fetchResult(`${origin}${mount}?status=open`, { key: ctx.keys.paid });
          expect(list.status).toBe(200);
          expect(list.headers['content-type']).toBe('application/json; charset=utf-8');
          expect(list.headers['x-app']).toBe('before');
          expect((list.json as ListResponse).meta.count).toBe(EXPECTED_ORDER.open.length);
        }
        const one = await fetchResult(`${origin}/ipos/ORBIT/`, { key: ctx.keys.paid });
        expect(one.status).toBe(200);
        expect((one.json as IpoResponse).ipo.symbol).toBe('ORBIT');
        // unknown paths and other methods under the mount are the router's, not the app's
        expectError(await fetchResult(`${origin}/ipos/a/b/c`), 404);
        const post = await fetchResult(`${origin}/ipos?status=open`, { method: 'POST' });
        expectError(post, 405);
        expect(post.headers['allow']).toBe('GET, HEAD');
        expect(post.headers['x-app']).toBe('before');
      },
    },
    {
      id: 'ipo-params',
      name: 'MUST ignore parameters the one-IPO route does not list and check includeGmp strictly',
      async fn(ctx) {
        const plain = await ctx.request('/ORBIT', { key: ctx.keys.proGmp });
        for (const q of ['status=bogus', 'foo=1&foo=2', 'page=0&limit=-1', 'interval=1h', 'includegmp=maybe']) {
          const res = await ctx.request(`/ORBIT?${q}`, { key: ctx.keys.proGmp });
          expect(res.status, q).toBe(200);
          expect(res.text).toBe(plain.text);
        }
        for (const q of ['includeGmp=yes', 'includeGmp=', 'includeGmp', 'includeGmp=true&includeGmp=true', 'includeGmp=1', 'includeGmp=%ZZ']) {
          expectError(await ctx.request(`/ORBIT?${q}`, { key: ctx.keys.proGmp }), 400, 'includeGmp');
        }
        // the identifier comes first
        expectError(await ctx.request('/%E0%A4?includeGmp=yes', { key: ctx.keys.proGmp }), 400, 'identifier');
        // parameters before lookup
        expectError(await ctx.request('/NOPE?includeGmp=yes', { key: ctx.keys.proGmp }), 400, 'includeGmp');
        expectError(await ctx.request('/NOPE?includeGmp=true', { key: ctx.keys.proGmp }), 404);
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------
// 9. Bad input never 5xx (docs/spec.md#list, #requests)

function badInputChecks(): HttpCheck[] {
  return [
    {
      id: 'bad-list-values',
      name: 'MUST answer 400 naming the parameter for every wrong, mistyped, impossible, empty or repeated list parameter (with or without a key)',
      async fn(ctx) {
        const cases: Array<[string, string]> = [
          ['', 'status'],
          ['status=', 'status'],
          ['status', 'status'],
          ['status=opened', 'status'],
          ['status=open%20', 'status'],
          ['status=open+', 'status'],
          ['status=%ZZ', 'status'],
          ['status=open&status=listed', 'status'],
          ['status=open&status=open', 'status'],
          ['type=', 'type'],
          ['type=EQ,,SME', 'type'],
          // case folds in ASCII only: the long s uppercases to S in JavaScript
          ['type=%C5%BFme', 'type'],
          ['type=EQ,', 'type'],
          ['type=,EQ', 'type'],
          ['type=BOND', 'type'],
          ['type=EQ&type=SME', 'type'],
          ['type=EQ%2C%2CSME', 'type'],
          ['source=', 'source'],
          ['source=nyse', 'source'],
          ['source=nse,bse', 'source'],
          ['source=nse&source=bse', 'source'],
          ['startDate=2026-02-30', 'startDate'],
          ['startDate=2026-13-01', 'startDate'],
          ['startDate=0000-00-00', 'startDate'],
          ['startDate=2026-2-3', 'startDate'],
          ['startDate=', 'startDate'],
          ['startDate=2026-11-01T00:00:00Z', 'startDate'],
          ['startDate=%202026-11-01', 'startDate'],
          ['endDate=2026-02-29', 'endDate'],
          ['endDate=2026-04-31', 'endDate'],
          ['endDate=2026-11-01&endDate=2026-11-01', 'endDate'],
          ['year=24', 'year'],
          ['year=02024', 'year'],
          ['year=', 'year'],
          ['year=202a', 'year'],
          ['year=-2026', 'year'],
          ['year=%D9%A2%D9%A0%D9%A2%D9%A6', 'year'],
          ['page=1.5', 'page'],
          ['page=-1', 'page'],
          ['page=+1', 'page'],
          ['page=%2B1', 'page'],
          ['page=%201', 'page'],
          ['page=1e2', 'page'],
          ['page=0x10', 'page'],
          ['page=', 'page'],
          ['page=1&page=1', 'page'],
          ['limit=1e2', 'limit'],
          ['limit=1.0', 'limit'],
          ['limit=-5', 'limit'],
          ['limit=0', 'limit'],
          ['limit=', 'limit'],
          ['limit=Infinity', 'limit'],
          ['limit=%EF%BC%91', 'limit'],
          ['includeGmp=yes', 'includeGmp'],
          ['includeGmp=', 'includeGmp'],
          ['includeGmp=0', 'includeGmp'],
        ];
        for (const [q, parameter] of cases) {
          const query = q === '' || q.startsWith('status') ? q : `status=open&${q}`;
          expectError(await ctx.request(`?${query}`, { key: ctx.keys.paid }), 400, parameter);
          expectError(await ctx.request(`?${query}`), 400, parameter);
        }
      },
    },
    {
      id: 'bad-unknown-ignored',
      name: 'MUST ignore parameters the route does not list, repeated or not, and names in another case',
      async fn(ctx) {
        const plain = await ctx.request('?status=open', { key: ctx.keys.paid });
        for (const q of [
          'status=open&foo=1&foo=2',
          'Status=x&status=open&STATUS=y',
          'status=open&page[]=1&limit[]=2',
          '=x&status=open&&',
          'status=open&interval=1h&field=bad&from=x',
          'st%ZZ=1&status=open',
          'status=open&%=1',
          '&&status=open&',
        ]) {
          const res = await ctx.request(`?${q}`, { key: ctx.keys.paid });
          expect(res.status, q).toBe(200);
          expect(res.text, q).toBe(plain.text);
        }
      },
    },
    {
      id: 'bad-query-decoding',
      name: 'MUST split the raw query on & and =, read + as a space and percent-decode names and values once',
      async fn(ctx) {
        const plain = await ctx.request('?status=open', { key: ctx.keys.paid });
        for (const q of ['status=%6Fpen', '%73tatus=open', 'sta%74us=OPEN', 'status=open&type=EQ%2CSME%2CDEBT', 'status=open&type=eq,sme,debt', 'status=%4F%50%45%4E']) {
          const res = await ctx.request(`?${q}`, { key: ctx.keys.paid });
          expect(res.status, q).toBe(200);
          expect(res.text, q).toBe(plain.text);
        }
        // "%73tatus" decodes to status: together with status it is a repeat
        expectError(await ctx.request('?status=open&%73tatus=open', { key: ctx.keys.paid }), 400, 'status');
        expectError(await ctx.request('?status=open&year=2026=1', { key: ctx.keys.paid }), 400, 'year');
        expectError(await ctx.request('?status=op%2Ben', { key: ctx.keys.paid }), 400, 'status');
      },
    },
    {
      id: 'bad-first-invalid-wins',
      name: 'MUST name the first invalid parameter in interface order (status, type, source, startDate, endDate, year, q, page, limit, includeGmp), whatever the query order',
      async fn(ctx) {
        const bad: Record<(typeof LIST_PARAMS)[number], string> = {
          status: 'status=bogus',
          type: 'type=BOND',
          source: 'source=nyse',
          startDate: 'startDate=2026-02-30',
          endDate: 'endDate=x',
          year: 'year=24',
          q: 'q=',
          page: 'page=0',
          limit: 'limit=1e2',
          includeGmp: 'includeGmp=yes',
        };
        for (let i = 0; i < LIST_PARAMS.length; i++) {
          const first = LIST_PARAMS[i] as (typeof LIST_PARAMS)[number];
          const later = LIST_PARAMS.slice(i).map((p) => bad[p]);
          const query = [...later.slice().reverse(), ...(first === 'status' ? [] : ['status=open'])].join('&');
          expectError(await ctx.request(`?${query}`, { key: ctx.keys.free }), 400, first);
        }
        // a missing status comes first too
        expectError(await ctx.request('?includeGmp=yes&type=BOND', { key: ctx.keys.paid }), 400, 'status');
      },
    },
    {
      id: 'bad-list-query-property',
      name: 'MUST never answer 5xx to any list query, and every error has the contract body (property)',
      async fn(ctx) {
        const names = ['status', 'type', 'source', 'startDate', 'endDate', 'year', 'q', 'page', 'limit', 'includeGmp', 'Status', 'foo', '%73tatus', 'x%ZZ', '', 'page[]', 'limit%20', 'Q'];
        const values = [
          'open', 'OPEN', 'listed', 'closed', 'upcoming', 'announced', 'bogus', '', 'EQ', 'eq,sme', 'EQ,,SME', ',', 'nse', 'BSE', '2026-11-20',
          '2026-02-30', '2026-2-3', '2026', '02024', '1', '0', '-1', '+1', '1.5', '1e2', '999999999999999999999', '1000000000', '1000000001',
          'true', 'FALSE', 'yes', '%', '%E0%A4', '%6Fpen', 'a+b', '%2B1', '%00', '\u0911', '\u{1F4A5}', 'q'.repeat(60), '%C0%AF',
        ];
        const part = fc.tuple(fc.constantFrom(...names), fc.option(fc.constantFrom(...values), { nil: undefined })).map(([n, v]) => (v === undefined ? n : `${n}=${v}`));
        const keyOf = fc.constantFrom<keyof FixtureKeys | 'none' | 'empty'>('none', 'empty', 'free', 'paid', 'proGmp', 'wrong');
        await fc.assert(
          fc.asyncProperty(fc.array(part, { maxLength: 7 }), fc.boolean(), keyOf, async (parts, withStatus, who) => {
            const query = (withStatus ? ['status=open', ...parts] : parts).join('&');
            const key = who === 'none' ? undefined : who === 'empty' ? '' : ctx.keys[who];
            const res = await ctx.request(`?${query}`, key === undefined ? {} : { key });
            expectWellFormed(res, LIST_PARAMS);
            if (res.status === 200) {
              const body = asList(res);
              expect('info' in body.meta).toBe(key === undefined || key === '');
            }
          }),
          { numRuns: 100 },
        );
      },
    },
    {
      id: 'bad-path-property',
      name: 'MUST never answer 5xx to any path or GMP query under the mount, and every error has the contract body (property)',
      async fn(ctx) {
        const segments = ['ORBIT', 'orbit', 'Orbit', '2026000001', 'nova', '%E0%A4', '%', '%25', 'a%2Fb', '\u0911', 'gmp', 'GMP', '%67mp', 'subscription', 'Subscription', '%73ubscription', '', 'x'.repeat(140), '%00', 'R&D', 'r%26d', '..x', '%F0%9F%92%A5', 'orbit-aerospace-ipo'];
        const params = ['interval', 'field', 'from', 'to', 'includeGmp', 'foo', 'q'];
        const values = ['daily', 'WEEKLY', '5m', '1h', 'mean', 'MODE', 'avg', '2026-11-01', '2026-11-30', '2026-02-30', '2000-01-01', '', 'true', 'false', '%ZZ', '%E0%A4'];
        const part = fc.tuple(fc.constantFrom(...params), fc.constantFrom(...values)).map(([n, v]) => `${n}=${v}`);
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.constantFrom(...segments), { minLength: 1, maxLength: 3 }),
            fc.boolean(),
            fc.array(part, { maxLength: 4 }),
            fc.constantFrom<keyof FixtureKeys>('proGmp', 'paid', 'wrong'),
            async (segs, trailing, parts, who) => {
              const path = `/${segs.join('/')}${trailing ? '/' : ''}`;
              const res = await ctx.request(`${path}?${parts.join('&')}`, { key: ctx.keys[who] });
              expectWellFormed(res, ['identifier', 'interval', 'field', 'from', 'to', ...LIST_PARAMS]);
            },
          ),
          { numRuns: 100 },
        );
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------
// 10. JSON bytes (docs/spec.md#ipo-object, #list, #gmp-series, #numbers)

const ORBIT_JSON = String.raw`{"id":"2026000001","name":"Orbit Aerospace Ltd","symbol":"ORBIT","slug":"orbit-aerospace-ipo","type":"EQ","isSme":false,"exchanges":["nse","bse"],"infoUrl":"https://example.com/ipo/orbit","nseInfoUrl":"https://www.nseindia.com/market-data/issue-information?symbol=ORBIT&series=EQ","prospectusUrl":"https://example.com/ipo/orbit/rhp.pdf","logo":null,"startDate":"2026-11-20","endDate":"2026-11-24","listingDate":"2026-11-27","priceRange":"95.5-100","minQty":150,"lotSize":150,"minAmount":15000,"issueSize":"192cr","listingGain":null,"status":"open","schedule":[{"event":"Open","date":"2026-11-20"},{"event":"Close","date":"2026-11-24"},{"event":"Allotment","date":"2026-11-25"},{"event":"Refunds","date":"2026-11-26"},{"event":"Demat credit","date":"2026-11-26"},{"event":"Listing","date":"2026-11-27"}],"about":"Orbit builds \"small\" satellites — and launch services.\nSecond line.","strengths":["Order book of 3 years","Margins"],"risks":["Customer concentration"],"mediaCoverageLinks":[],"priceBand":{"low":95.5,"high":100},"issueSizeCrore":192,"registrar":"KFin Technologies Ltd","leadManagers":["Kotak Mahindra Capital Co Ltd","Axis Capital Ltd"],"marketMaker":null,"sector":"Aerospace & Defence","listingPrices":[],"subscription":{"asOf":"2026-11-22T06:30:00.000Z","times":{"qib":12.5,"nii":30.05,"bnii":28,"snii":34.15,"retail":8.9,"employee":4.45,"shareholder":0,"total":15.87}}`;
const ORBIT_GMP_JSON = String.raw`"gmp":{"lastUpdatedAt":"2026-11-22T06:30:00.000Z","aggregations":{"mean":41.4,"median":41,"min":40.5,"max":44,"mode":40.5},"estimatedListingPrice":141.4,"gmpPercent":41.4,"sources":[{"name":"IPO Premium","gmpPrice":41},{"name":"Zeta","gmpPrice":44},{"name":"ipocentral","gmpPrice":40.5},{"name":"ipowatch","gmpPrice":41},{"name":"éclair-gmp","gmpPrice":40.5}]}`;
const INDUS_JSON = String.raw`{"id":"2026000004","name":"Indus Infra Bonds","symbol":null,"slug":"indus-infra-bonds","type":"DEBT","isSme":false,"exchanges":["nse","bse"],"infoUrl":null,"nseInfoUrl":null,"prospectusUrl":null,"logo":null,"startDate":"2026-11-19","endDate":"2026-11-22","listingDate":null,"priceRange":null,"minQty":null,"lotSize":null,"minAmount":null,"issueSize":null,"listingGain":null,"status":"open","schedule":[],"about":null,"strengths":[],"risks":[],"mediaCoverageLinks":[],"priceBand":null,"issueSizeCrore":null,"registrar":null,"leadManagers":[],"marketMaker":null,"sector":null,"listingPrices":[],"subscription":null}`;
// Listing prices (given bse first), an issue size in "crore", and the GMP figures of a band whose high is not 100.
const LUMEN_JSON = String.raw`{"id":"2026000101","name":"Lumen Retail","symbol":"LUMEN","slug":"lumen-retail-ipo","type":"EQ","isSme":false,"exchanges":["nse","bse"],"infoUrl":null,"nseInfoUrl":null,"prospectusUrl":null,"logo":null,"startDate":"2026-11-12","endDate":"2026-11-14","listingDate":"2026-11-20","priceRange":"210-221","minQty":67,"lotSize":67,"minAmount":14807,"issueSize":"24.50 Crore","listingGain":"15.5","status":"listed","schedule":[],"about":null,"strengths":[],"risks":[],"mediaCoverageLinks":[],"priceBand":{"low":210,"high":221},"issueSizeCrore":24.5,"registrar":null,"leadManagers":[],"marketMaker":null,"sector":"Retail","listingPrices":[{"exchange":"nse","open":255.25,"high":261,"low":249.9,"close":255},{"exchange":"bse","open":255,"high":260.5,"low":250,"close":255.05}],"subscription":{"asOf":"2026-11-14T11:30:00.000Z","times":{"qib":100.25,"nii":50,"bnii":null,"snii":null,"retail":10.5,"employee":null,"shareholder":null,"total":60.12}}`;
const LUMEN_GMP_JSON = String.raw`"gmp":{"lastUpdatedAt":"2026-11-19T09:00:00.000Z","aggregations":{"mean":31.2,"median":31.2,"min":31.2,"max":31.2,"mode":31.2},"estimatedListingPrice":252.2,"gmpPercent":14.12,"sources":[{"name":"ipowatch","gmpPrice":31.2}]}`;
const MERIDIAN_JSON = String.raw`{"id":"2026000105","name":"Meridian Power","symbol":"MERID","slug":"meridian-power-ipo","type":"EQ","isSme":false,"exchanges":["bse"],"infoUrl":null,"nseInfoUrl":null,"prospectusUrl":null,"logo":null,"startDate":"2026-09-22","endDate":"2026-09-24","listingDate":"2026-09-29","priceRange":null,"minQty":null,"lotSize":null,"minAmount":null,"issueSize":null,"listingGain":null,"status":"listed","schedule":[],"about":null,"strengths":[],"risks":[],"mediaCoverageLinks":[],"priceBand":null,"issueSizeCrore":null,"registrar":null,"leadManagers":[],"marketMaker":null,"sector":null,"listingPrices":[],"subscription":null}`;

function jsonChecks(): HttpCheck[] {
  return [
    {
      id: 'json-ipo-bytes',
      name: 'MUST write the IPO object compactly with keys in the documented order (exact bytes; derived fields of the dataset ignored)',
      async fn(ctx) {
        expect((await ctx.request('/ORBIT', { key: ctx.keys.paid })).text).toBe(`{"ipo":${ORBIT_JSON}}}`);
        expect((await ctx.request('/ORBIT?includeGmp=true', { key: ctx.keys.proGmp })).text).toBe(`{"ipo":${ORBIT_JSON},${ORBIT_GMP_JSON}}}`);
        expect((await ctx.request('/MERID', { key: ctx.keys.paid })).text).toBe(`{"ipo":${MERIDIAN_JSON}}`);
        expect((await ctx.request('/LUMEN', { key: ctx.keys.paid })).text).toBe(`{"ipo":${LUMEN_JSON}}}`);
        expect((await ctx.request('/LUMEN?includeGmp=true', { key: ctx.keys.proGmp })).text).toBe(`{"ipo":${LUMEN_JSON},${LUMEN_GMP_JSON}}}`);
        // An IPO without a price band: the GMP figures are null.
        expect((await ctx.request('/NIMBUS?includeGmp=true', { key: ctx.keys.proGmp })).text).toContain(
          '"aggregations":{"mean":null,"median":null,"min":null,"max":null,"mode":null},"estimatedListingPrice":null,"gmpPercent":null,"sources":[]}}}',
        );
      },
    },
    {
      id: 'json-list-bytes',
      name: 'MUST write list bodies compactly as {"meta":{count,countOnPage,totalPages,page,limit[,info]},"ipos":[...]} (exact bytes)',
      async fn(ctx) {
        expect((await ctx.request('?status=open')).text).toBe(
          `{"meta":{"count":4,"countOnPage":1,"totalPages":4,"page":1,"limit":1,"info":"To get all IPOs, please provide a valid API key."},"ipos":[${INDUS_JSON}]}`,
        );
        expect((await ctx.request('?status=open&limit=2', { key: ctx.keys.paid })).text).toBe(
          `{"meta":{"count":4,"countOnPage":2,"totalPages":2,"page":1,"limit":2},"ipos":[${INDUS_JSON},${ORBIT_JSON}}]}`,
        );
      },
    },
    {
      id: 'json-output-imports-back',
      name: 'MUST answer the same bytes after the list and one-IPO answers are imported back as a dataset (derived fields ignored, every given field kept)',
      async fn(ctx) {
        const targets = STATUSES.flatMap((status) => [`?status=${status}&limit=100`, `?status=${status}&limit=100&includeGmp=true`]);
        const ids = Object.values(IPO_IDS);
        targets.push(...ids.map((id) => `/${encodeURIComponent(id)}`), ...ids.map((id) => `/${encodeURIComponent(id)}?includeGmp=true`));
        const answers = async (): Promise<string[]> => Promise.all(targets.map(async (t) => (await ctx.request(t, { key: ctx.keys.proGmp })).text));
        const before = await answers();
        const lists = before.slice(0, 2 * STATUSES.length).map((text) => (JSON.parse(text) as ListResponse).ipos);
        const ones = before.slice(2 * STATUSES.length).map((text) => (JSON.parse(text) as IpoResponse).ipo);
        expect(lists.flat().length).toBe(2 * ids.length);
        // What is imported back holds every field of the fixture (listing prices, lead managers, ...).
        expect(ones).toEqual([...ids.map((id) => expectedIpo(id)), ...ids.map((id) => expectedIpo(id, { gmpAt: T0 }))]);
        // Every IPO of the answers (with their derived fields and gmp) as a dataset: the list's and the one-IPO route's.
        await importDataset(ctx.store, { ipos: lists.flat().filter((ipo) => ipo.gmp !== undefined) as unknown as DatasetIpo[] });
        await importDataset(ctx.store, { ipos: ones.filter((ipo) => ipo.gmp === undefined) as unknown as DatasetIpo[] });
        expect(await answers()).toEqual(before);
      },
    },
    {
      id: 'json-series-bytes',
      name: 'MUST write the GMP series compactly as {ipoId,symbol,interval,field,series:[{timestamp,price}],meta:{from,to,count}} (exact bytes)',
      async fn(ctx) {
        expect((await ctx.request('/NIMBUS/gmp', { key: ctx.keys.proGmp })).text).toBe(
          '{"ipoId":"2026000002","symbol":"NIMBUS","interval":"daily","field":"mean","series":[{"timestamp":"2026-11-21T00:00:00.000Z","price":null}],"meta":{"from":"2026-10-23T06:30:00.000Z","to":"2026-11-22T06:30:00.000Z","count":1}}',
        );
        expect((await ctx.request('/ORBIT/gmp?interval=5m&from=2026-11-21&to=2026-11-22&field=mode', { key: ctx.keys.proGmp })).text).toContain(
          '{"timestamp":"2026-11-21T11:10:00.000Z","price":-1.01},',
        );
        expect((await ctx.request('/ORBIT/gmp?interval=5m&from=2026-11-22', { key: ctx.keys.proGmp })).text).toMatch(
          /"series":\[.*\{"timestamp":"2026-11-22T06:30:00.000Z","price":41.4\}\],"meta":\{"from":"2026-11-22T00:00:00.000Z","to":"2026-11-22T06:30:00.000Z","count":\d+\}\}$/,
        );
      },
    },
    {
      id: 'clock-read-once',
      name: 'MUST read the clock once per request',
      async fn(ctx) {
        for (const [target, key] of [
          ['?status=open', undefined],
          ['?status=open&includeGmp=true', ctx.keys.proGmp],
          ['/ORBIT?includeGmp=true', ctx.keys.proGmp],
          ['/ORBIT/gmp?from=2026-11-01', ctx.keys.proGmp],
          ['/ORBIT/gmp', ctx.keys.free],
          ['/NOPE', ctx.keys.paid],
          ['/ORBIT', ctx.keys.wrong],
          ['?status=bogus', ctx.keys.paid],
        ] as const) {
          const before = ctx.clockReads;
          await ctx.request(target, key === undefined ? {} : { key });
          expect(ctx.clockReads - before, target).toBe(1);
        }
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------
// 11. The OpenAPI document, served with the openapi option (every response of every check
// is also validated against the document: see runCheck)

function openApiChecks(): HttpCheck[] {
  const DOC = '/-/openapi.json';
  return [
    {
      id: 'openapi-served',
      name: 'MUST serve the OpenAPI document at {mount}/-/openapi.json when the openapi option is on: 200, JSON, servers = the mount path, no key needed, no window charged',
      options: { openapi: true, limits: {} },
      async fn(ctx) {
        const mount = new URL(ctx.baseUrl).pathname.replace(/\/$/, '');
        const expected = JSON.stringify(openApiDocument({ serverUrl: mount }));
        // more requests than the keyless quota (6), with every kind of key: none is refused or counted
        for (const key of [undefined, '', ctx.keys.wrong, ctx.keys.revoked, ctx.keys.free, ctx.keys.proGmp, undefined, undefined]) {
          const res = await ctx.request(DOC, key === undefined ? {} : { key });
          expectOk(res);
          expect(res.text).toBe(expected);
          expectNoRateHeaders(res);
        }
        for (const target of [`${DOC}/`, `${DOC}?status=bogus&x=1`, '/%2D/openapi%2Ejson']) {
          const res = await ctx.request(target);
          expect(res.status, target).toBe(200);
          expect(res.text, target).toBe(expected);
        }
        const absolute = await ctx.raw(DOC, { absoluteForm: true });
        expect(absolute.status).toBe(200);
        expect(absolute.text).toBe(expected);
        const doc = asOpenApiDocument(JSON.parse(expected));
        expect(Object.keys(doc.paths)).toEqual(['/', '/{identifier}', '/{identifier}/gmp', '/{identifier}/subscription']);
        expect(doc.servers).toEqual([{ url: mount, description: expect.any(String) }]);
        // the windows were not touched: the first counted request sees the full keyless quota
        const list = await ctx.request('?status=open');
        expectRateHeaders(list, { limit: 6, remaining: 5, reset: 60 });
      },
    },
    {
      id: 'openapi-head-methods-414',
      name: 'MUST answer HEAD of the OpenAPI document as GET without a body, other methods 405 with Allow: GET, HEAD, and a request-target over maxUrlLength 414',
      options: { openapi: true },
      async fn(ctx) {
        const get = await ctx.request(DOC);
        const head = await ctx.request(DOC, { method: 'HEAD' });
        expect(head.status).toBe(200);
        expect(head.text).toBe('');
        const strip = (h: Record<string, string>): Record<string, string> => {
          const out = { ...h };
          for (const k of ['date', 'connection', 'keep-alive']) delete out[k];
          return out;
        };
        expect(strip(head.headers)).toEqual(strip(get.headers));
        expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.text)));
        for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
          const res = await ctx.request(DOC, { method, key: ctx.keys.paid });
          expectError(res, 405);
          expect(res.headers['allow']).toBe('GET, HEAD');
          expectNoRateHeaders(res);
        }
        const mount = new URL(ctx.baseUrl).pathname;
        expectError(await ctx.request(targetOfLength(mount, `${DOC}?pad=`, 4097)), 414);
        expect((await ctx.request(targetOfLength(mount, `${DOC}?pad=`, 4096))).status).toBe(200);
      },
    },
    {
      id: 'openapi-off-by-default',
      name: 'MUST answer {mount}/-/openapi.json 404 ERR:NOTFOUND, as any unknown path, when the openapi option is off (the default)',
      async fn(ctx) {
        for (let round = 0; round < 2; round++) {
          for (const method of ['GET', 'HEAD', 'POST']) {
            for (const target of [DOC, `${DOC}/`, '/%2D/openapi%2Ejson']) {
              const res = await ctx.request(target, { method, key: ctx.keys.paid });
              expect(res.status, `${method} ${target}`).toBe(404);
              if (method !== 'HEAD') expectError(res, 404);
              expectNoRateHeaders(res);
            }
          }
          await ctx.restart({ openapi: false });
        }
      },
    },
    {
      id: 'openapi-no-shadowing',
      name: 'MUST leave every identifier to the IPO routes when the document is served: an IPO with the id openapi.json is found at /openapi.json, and /- is an identifier',
      options: { openapi: true },
      async fn(ctx) {
        expectError(await ctx.request('/openapi.json', { key: ctx.keys.paid }), 404);
        await importDataset(ctx.store, {
          ipos: [{ id: 'openapi.json', name: 'OpenAPI Json Ltd', symbol: 'OAJ', slug: 'openapi-json', type: 'EQ', exchanges: ['nse'], startDate: '2026-11-20', endDate: '2026-11-24' }],
          gmp: [{ ipoId: 'openapi.json', timestamp: '2026-11-21T06:30:00.000Z', sources: [{ name: 'ipowatch', gmpPrice: 12.5 }] }],
        });
        const one = asIpo(await ctx.request('/openapi.json', { key: ctx.keys.paid }));
        expect(one.ipo.id).toBe('openapi.json');
        const series = asSeries(await ctx.request('/openapi.json/gmp?from=2026-11-20&to=2026-11-22', { key: ctx.keys.proGmp }));
        expect(series.ipoId).toBe('openapi.json');
        expect(series.series).toEqual([{ timestamp: '2026-11-21T00:00:00.000Z', price: 12.5 }]);
        expectError(await ctx.request('/openapi.json'), 401);
        // '-' is an identifier (one that names no IPO), and the document's path is not a prefix
        expectError(await ctx.request('/-', { key: ctx.keys.paid }), 404);
        expectError(await ctx.request('/-/gmp', { key: ctx.keys.proGmp }), 404);
        for (const target of ['/-/openapi.jsonx', '/-/openapi.json/gmp', '/-/OPENAPI.JSON', '/x/openapi.json']) {
          expectError(await ctx.request(target, { key: ctx.keys.paid }), 404);
        }
        expect((await ctx.request(DOC)).status).toBe(200);
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------
// 12. Subscription snapshots (docs/spec.md#subscription)

/** The category keys of a subscription snapshot, in wire order. */
const SUBSCRIPTION_KEYS = ['qib', 'nii', 'bnii', 'snii', 'retail', 'employee', 'shareholder', 'total'] as const;

function subscriptionChecks(): HttpCheck[] {
  const defaults: IpoRouterOptions = { limits: {} };
  const expected = (q: Partial<SubscriptionSeriesQuery> = {}): SubscriptionSeries => {
    const body = expectedSubscriptionSeries({ ipoId: ORBIT, from: null, to: null, now: T0, ...q });
    if (body === 'from') throw new Error('the reference found the range empty');
    return body;
  };
  const read = async (ctx: CheckContext, target: string, key = ctx.keys.paid): Promise<SubscriptionSeries> => asSubscription(await ctx.request(target, { key }));
  return [
    {
      id: 'subscription-shape',
      name: 'MUST answer the subscription route with {ipoId,symbol,series:[{timestamp,qib,nii,bnii,snii,retail,employee,shareholder,total}],meta:{from,to,count}}, every snapshot ascending, every category present (exact bytes)',
      async fn(ctx) {
        const res = await ctx.request('/ORBIT/subscription', { key: ctx.keys.paid });
        const body = asSubscription(res);
        expect(res.text).toBe(JSON.stringify(expected()));
        expect(body.series.map((p) => p.timestamp)).toEqual(['2026-11-20T11:30:00.000Z', '2026-11-21T11:30:00.000Z', '2026-11-22T06:30:00.000Z']);
        // written with an IST offset and shareholder left out: UTC with milliseconds, null
        expect(body.series[0]).toEqual({ timestamp: '2026-11-20T11:30:00.000Z', qib: 0.01, nii: 0.52, bnii: 0.41, snii: 0.74, retail: 1.2, employee: 0.3, shareholder: null, total: 0.66 });
        expect(body.series[2]?.shareholder).toBe(0);
        expect(body.meta).toEqual({ from: '2000-01-01T00:00:00.000Z', to: iso(T0), count: 3 });
        const harbor = await read(ctx, '/HARBOR/subscription');
        expect(harbor.series).toEqual([{ timestamp: '2026-11-18T12:00:00.000Z', qib: null, nii: 9_999_999.99, bnii: null, snii: null, retail: 0, employee: null, shareholder: null, total: 1_234_567.89 }]);
        const lumen = await read(ctx, '/lumen-retail-ipo/subscription');
        expect(lumen.series.map((p) => p.timestamp)).toEqual(['2026-11-13T11:30:00.000Z', '2026-11-14T11:30:00.000Z']);
        expect(lumen).toEqual(expected({ ipoId: IPO_IDS.lumen }));
      },
    },
    {
      id: 'subscription-default-range',
      name: 'MUST start the subscription series at 2000-01-01T00:00:00.000Z without from (also with only to), end at now without to, and at 23:59:59.999Z of to',
      async fn(ctx) {
        const tidal = await read(ctx, '/TIDAL/subscription');
        expect(tidal.meta).toEqual({ from: '2000-01-01T00:00:00.000Z', to: iso(T0), count: 2 });
        expect(tidal.series[0]?.timestamp).toBe('2000-01-01T00:00:00.000Z');
        const onlyTo = await read(ctx, '/TIDAL/subscription?to=2026-11-18');
        expect(onlyTo).toEqual(expected({ ipoId: IPO_IDS.tidal, to: '2026-11-18' }));
        expect(onlyTo.meta).toEqual({ from: '2000-01-01T00:00:00.000Z', to: '2026-11-18T23:59:59.999Z', count: 1 });
        const onlyFrom = await read(ctx, '/ORBIT/subscription?from=2026-11-21');
        expect(onlyFrom).toEqual(expected({ from: '2026-11-21' }));
        expect(onlyFrom.meta).toEqual({ from: '2026-11-21T00:00:00.000Z', to: iso(T0), count: 2 });
        const both = await read(ctx, '/ORBIT/subscription?from=2026-11-20&to=2026-11-20');
        expect(both.meta).toEqual({ from: '2026-11-20T00:00:00.000Z', to: '2026-11-20T23:59:59.999Z', count: 1 });
        // bounds inclusive: from = the day of a snapshot at 00:00Z, to = its whole day
        expect((await read(ctx, '/TIDAL/subscription?from=2000-01-01&to=2000-01-01')).meta.count).toBe(1);
        ctx.clock.set(T0 + 3 * DAY);
        expect(await read(ctx, '/ORBIT/subscription?from=2026-11-20')).toEqual(expected({ from: '2026-11-20', now: T0 + 3 * DAY }));
      },
    },
    {
      id: 'subscription-future-invisible',
      name: 'MUST leave subscription snapshots after now out of the series (meta.to still the asked end) and out of the IPO object until their time comes',
      async fn(ctx) {
        const key = ctx.keys.paid;
        const late = await read(ctx, '/ORBIT/subscription?to=2026-11-30');
        expect(late.meta).toEqual({ from: '2000-01-01T00:00:00.000Z', to: '2026-11-30T23:59:59.999Z', count: 3 });
        expect(late).toEqual(expected({ to: '2026-11-30' }));
        expect(await read(ctx, '/ASTER/subscription')).toEqual(expected({ ipoId: IPO_IDS.aster }));
        expect((await read(ctx, '/ASTER/subscription?from=2026-11-25&to=2026-11-25')).series).toEqual([]);
        expect(asIpo(await ctx.request('/ORBIT', { key })).ipo.subscription).toEqual(expectedSubscription(ORBIT, T0));
        expect(asIpo(await ctx.request('/ORBIT', { key })).ipo.subscription?.times.total).toBe(15.87);
        ctx.clock.set(T0 + 1);
        expect((await read(ctx, '/ORBIT/subscription?to=2026-11-30')).meta.count).toBe(4);
        expect(asIpo(await ctx.request('/ORBIT', { key })).ipo.subscription).toEqual({ asOf: '2026-11-22T06:30:00.001Z', times: { qib: null, nii: null, bnii: null, snii: null, retail: null, employee: null, shareholder: null, total: 99 } });
        ctx.clock.set(Date.parse('2026-11-25T09:00:00.000Z'));
        const list = asList(await ctx.request('?status=open&limit=100', { key }));
        expect(list.ipos.find((i) => i.id === IPO_IDS.aster)?.subscription).toEqual({ asOf: '2026-11-25T09:00:00.000Z', times: expect.objectContaining({ total: 1 }) as unknown });
      },
    },
    {
      id: 'subscription-bad-params',
      name: 'MUST answer 400 naming from or to for a bad date or a malformed percent-encoding, and from when the start is after the end',
      async fn(ctx) {
        const key = ctx.keys.paid;
        const cases: Array<[string, string]> = [
          ['from=2026-13-01', 'from'],
          ['from=2026-2-3', 'from'],
          ['from=2026-11-01T00:00:00Z', 'from'],
          ['from=', 'from'],
          ['from', 'from'],
          ['from=%ZZ', 'from'],
          ['from=2026-11-0%', 'from'],
          ['from=%E0%A4', 'from'],
          ['from=2026-11-01&from=2026-11-01', 'from'],
          ['to=2026-02-30', 'to'],
          ['to=', 'to'],
          ['to=%2', 'to'],
          ['to=%C0%AF', 'to'],
          ['to=20261101', 'to'],
          ['to=2026-11-01&to=2026-11-02', 'to'],
          ['to=bad&from=bad', 'from'],
          ['from=2026-11-10&to=bad', 'to'],
          ['from=2026-11-10&to=2026-11-09', 'from'],
          // only from, after now: start > now = end
          ['from=2026-11-23', 'from'],
        ];
        for (const [q, parameter] of cases) expectError(await ctx.request(`/ORBIT/subscription?${q}`, { key }), 400, parameter);
        // parameters before the lookup; the interval and field of the GMP route are not this route's
        expectError(await ctx.request('/NOPE/subscription?from=bad', { key }), 400, 'from');
        expect((await ctx.request('/ORBIT/subscription?interval=bogus&field=avg&includeGmp=maybe&q=', { key })).status).toBe(200);
        expectError(await ctx.request('/%E0%A4/subscription?from=bad', { key }), 400, 'identifier');
        // from today (before now) and from = to are fine
        expect((await read(ctx, '/ORBIT/subscription?from=2026-11-22')).meta).toEqual({ from: '2026-11-22T00:00:00.000Z', to: iso(T0), count: 1 });
      },
    },
    {
      id: 'subscription-identifier',
      name: 'MUST resolve the subscription identifier like one IPO (id, symbol, slug; 404 when none) and answer 200 with series [] for an IPO without snapshots',
      async fn(ctx) {
        const want = JSON.stringify(expected());
        for (const target of ['/ORBIT/subscription', '/orbit/subscription', `/${ORBIT}/subscription`, '/orbit-aerospace-ipo/subscription', '/%4FRBIT/subscription']) {
          const res = await ctx.request(target, { key: ctx.keys.paid });
          expectOk(res);
          // "orbit" is the id of Orbit Holdings: id before symbol
          if (target === '/orbit/subscription') expect(asSubscription(res).ipoId).toBe(IPO_IDS.orbitHoldings);
          else expect(res.text).toBe(want);
        }
        const kappa = await read(ctx, '/kappa/subscription');
        expect(kappa).toEqual({ ipoId: IPO_IDS.kappa, symbol: 'KAPPA', series: [], meta: { from: '2000-01-01T00:00:00.000Z', to: iso(T0), count: 0 } });
        const indus = await read(ctx, `/${IPO_IDS.indusBonds}/subscription`);
        expect(indus.symbol).toBeNull();
        expect(indus.series).toEqual([]);
        expectError(await ctx.request('/NOPE/subscription', { key: ctx.keys.paid }), 404);
        expectError(await ctx.request('/NOPE/subscription?from=2026-11-01', { key: ctx.keys.paid }), 404);
      },
    },
    {
      id: 'subscription-keys-any-plan',
      name: 'MUST answer the subscription route to a key of any plan (no GMP add-on needed) and 401 without a valid key',
      async fn(ctx) {
        const want = JSON.stringify(expected());
        for (const key of [ctx.keys.free, ctx.keys.paid, ctx.keys.paid2, ctx.keys.pro, ctx.keys.proGmp]) {
          const res = await ctx.request('/ORBIT/subscription', { key });
          expectOk(res);
          expect(res.text).toBe(want);
        }
        for (const options of [{}, { key: '' }, { key: ctx.keys.wrong }, { key: ctx.keys.revoked }]) {
          expectError(await ctx.request('/ORBIT/subscription', options), 401);
          expectError(await ctx.request('/ORBIT/subscription?from=bad', options), 401);
          expectError(await ctx.request('/NOPE/subscription', options), 401);
        }
      },
    },
    {
      id: 'subscription-main-windows',
      name: 'MUST draw the subscription route on the main windows, not the GMP ones: the 7th request in a minute is a 429 of the minute window, a full GMP window refuses nothing here',
      options: defaults,
      async fn(ctx) {
        const key = ctx.keys.proGmp;
        for (let i = 0; i < 3; i++) expect((await ctx.request('/ORBIT/gmp', { key })).status).toBe(200);
        expect429(await ctx.request('/ORBIT/gmp', { key }), 3, 60, 'gmp-minute');
        const res = await ctx.request('/ORBIT/subscription', { key });
        expect(res.status).toBe(200);
        expectRateHeaders(res, { limit: 6, remaining: 2, reset: 60 });
        for (let i = 0; i < 2; i++) expect((await ctx.request('/ORBIT/subscription', { key })).status).toBe(200);
        expect429(await ctx.request('/ORBIT/subscription', { key }), 6, 60);
        expect429(await ctx.request('/ORBIT', { key }), 6, 60);
        // the hits at T0 leave the minute window exactly 60 s later
        ctx.clock.set(T0 + 60_000);
        expect((await ctx.request('/ORBIT/subscription', { key })).status).toBe(200);
      },
    },
    {
      id: 'subscription-usage',
      name: 'MUST count subscription requests under the usage route subscription: a 400 or 404 after admission as admitted, a 429 as refused',
      options: { limits: { paid: { perMinute: 4 } } },
      async fn(ctx) {
        const key = ctx.keys.paid;
        const statuses = [
          (await ctx.request('/ORBIT/subscription', { key })).status,
          (await ctx.request('/ORBIT/subscription?from=bad', { key })).status,
          (await ctx.request('/NOPE/subscription', { key })).status,
          (await ctx.request('/ORBIT', { key })).status,
          (await ctx.request('/ORBIT/subscription', { key })).status,
          (await ctx.request('/ORBIT/subscription', { key: ctx.keys.wrong })).status,
        ];
        expect(statuses).toEqual([200, 400, 404, 200, 429, 401]);
        const usage = await getUsage(ctx.store, { accountId: ctx.fixture.accounts.paid, from: '2026-11-01', to: '2026-11-30' }, { limiter: ctx.limiter });
        expect(usage).toEqual([
          { day: '2026-11-22', keyId: ctx.fixture.keyIds.paid, route: 'ipo', admitted: 1, refused: 0 },
          { day: '2026-11-22', keyId: ctx.fixture.keyIds.paid, route: 'subscription', admitted: 3, refused: 1 },
        ]);
      },
    },
    {
      id: 'subscription-route-exact',
      name: 'MUST match the route segment subscription exactly after percent-decoding (/X/Subscription is an unknown path: 404 without rate-limit headers), one trailing slash tolerated',
      async fn(ctx) {
        const key = ctx.keys.paid;
        for (const path of ['/ORBIT/Subscription', '/ORBIT/SUBSCRIPTION', '/ORBIT/subscriptions', '/ORBIT/subscriptio', '/ORBIT/subscription/x', '/ORBIT/subscription//', '//subscription', '/ORBIT/%53ubscription']) {
          const res = await ctx.request(path, { key });
          expectError(res, 404);
          expectNoRateHeaders(res);
        }
        const want = JSON.stringify(expected());
        for (const path of ['/ORBIT/subscription/', '/ORBIT/%73ubscription', '/ORBIT/subscriptio%6E']) {
          const res = await ctx.request(path, { key });
          expectOk(res);
          expect(res.text).toBe(want);
        }
      },
    },
    {
      id: 'subscription-methods',
      name: 'MUST answer HEAD of the subscription route as GET without a body, and 405 to other methods',
      async fn(ctx) {
        const key = ctx.keys.paid;
        const get = await ctx.request('/ORBIT/subscription', { key });
        const head = await ctx.request('/ORBIT/subscription', { key, method: 'HEAD' });
        expect(head.status).toBe(200);
        expect(head.text).toBe('');
        expect(head.headers['content-length']).toBe(get.headers['content-length']);
        for (const method of ['POST', 'PUT', 'DELETE']) {
          const res = await ctx.request('/ORBIT/subscription', { key, method });
          expectError(res, 405);
          expect(res.headers['allow']).toBe('GET, HEAD');
        }
      },
    },
    {
      id: 'subscription-on-ipo-object',
      name: 'MUST give every IPO object subscription (the latest snapshot at or before now, null when none), after listingPrices and before gmp, in the list and the one-IPO answer',
      async fn(ctx) {
        for (const status of STATUSES) {
          const body = asList(await ctx.request(`?status=${status}&limit=100`, { key: ctx.keys.paid }));
          expect(body.ipos).toEqual(EXPECTED_ORDER[status].map((id) => expectedIpo(id)));
          for (const ipo of body.ipos) expect(Object.keys(ipo).slice(-2)).toEqual(['listingPrices', 'subscription']);
          const gmp = asList(await ctx.request(`?status=${status}&limit=100&includeGmp=true`, { key: ctx.keys.proGmp }));
          for (const ipo of gmp.ipos) expect(Object.keys(ipo).slice(-3)).toEqual(['listingPrices', 'subscription', 'gmp']);
        }
        const want: Array<[string, unknown]> = [
          [ORBIT, { asOf: '2026-11-22T06:30:00.000Z', times: { qib: 12.5, nii: 30.05, bnii: 28, snii: 34.15, retail: 8.9, employee: 4.45, shareholder: 0, total: 15.87 } }],
          [IPO_IDS.nimbus, { asOf: '2026-11-21T12:00:00.000Z', times: { qib: null, nii: null, bnii: null, snii: null, retail: 0.5, employee: null, shareholder: null, total: null } }],
          [IPO_IDS.lumen, { asOf: '2026-11-14T11:30:00.000Z', times: { qib: 100.25, nii: 50, bnii: null, snii: null, retail: 10.5, employee: null, shareholder: null, total: 60.12 } }],
          [IPO_IDS.aster, null],
          [IPO_IDS.kappa, null],
          // the dataset's own `subscription` on the IPO record is ignored
          [IPO_IDS.meridian, null],
        ];
        for (const [id, subscription] of want) {
          const one = asIpo(await ctx.request(`/${id}`, { key: ctx.keys.paid }));
          expect(one.ipo.subscription).toEqual(subscription);
          if (subscription !== null) expect(Object.keys((one.ipo.subscription as { times: object }).times)).toEqual([...SUBSCRIPTION_KEYS]);
          expect(one.ipo).toEqual(expectedIpo(id));
          const withGmp = asIpo(await ctx.request(`/${id}?includeGmp=true`, { key: ctx.keys.proGmp }));
          expect(withGmp.ipo).toEqual(expectedIpo(id, { gmpAt: T0 }));
        }
        const keyless = asList(await ctx.request('?status=open'));
        expect(keyless.ipos).toEqual([expectedIpo(EXPECTED_ORDER.open[0] as string)]);
      },
    },
    {
      id: 'subscription-property-reference',
      name: 'MUST answer any from, to and now on the subscription route like the naive reference (property)',
      async fn(ctx) {
        const day = fc.oneof(
          fc.integer({ min: 0, max: 60 }).map((d) => new Date(Date.UTC(2026, 9, 12) + d * DAY).toISOString().slice(0, 10)),
          fc.constantFrom('2000-01-01', '1999-12-31', '2026-11-22', '9999-12-31'),
        );
        const ids = [ORBIT, IPO_IDS.lumen, IPO_IDS.aster, IPO_IDS.tidal, IPO_IDS.kappa, IPO_IDS.harbor];
        const now = fc.constantFrom(T0 - 1, T0, T0 + 1, Date.parse('2026-11-24T10:00:00.000Z'), Date.parse('2026-11-25T09:00:00.000Z'), Date.UTC(2026, 11, 31));
        await fc.assert(
          fc.asyncProperty(fc.constantFrom(...ids), fc.option(day, { nil: null }), fc.option(day, { nil: null }), now, async (ipoId, from, to, at) => {
            ctx.clock.set(at);
            const query = [from === null ? null : `from=${from}`, to === null ? null : `to=${to}`].filter((p) => p !== null).join('&');
            const res = await ctx.request(`/${ipoId}/subscription${query === '' ? '' : `?${query}`}`, { key: ctx.keys.paid });
            const want = expectedSubscriptionSeries({ ipoId, from, to, now: at });
            if (want === 'from') expectError(res, 400, 'from');
            else {
              expectOk(res);
              expect(res.text).toBe(JSON.stringify(want));
            }
          }),
          { numRuns: 60 },
        );
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------
// 13. The list filter q (docs/spec.md#list)

function qChecks(): HttpCheck[] {
  const records = fixtureDataset().ipos ?? [];
  const fold = (text: string): string => text.replace(/[A-Z]/g, (c) => c.toLowerCase());
  /** The fixture's IPOs of a status in list order whose name or symbol contains q, ASCII case ignored. */
  const matching = (status: IpoStatus, q: string): string[] =>
    EXPECTED_ORDER[status].filter((id) => {
      const r = records.find((x) => x.id === id);
      return r !== undefined && (fold(r.name).includes(fold(q)) || (r.symbol != null && fold(r.symbol).includes(fold(q))));
    });
  const ids = async (ctx: CheckContext, query: string): Promise<string[]> => asList(await ctx.request(`?${query}&limit=100`, { key: ctx.keys.paid })).ipos.map((i) => i.id);
  return [
    {
      id: 'list-q-filter',
      name: 'MUST keep the IPOs whose name or symbol contains q, ASCII case ignored (no other folding), order unchanged',
      async fn(ctx) {
        const cases: Array<[IpoStatus, string, string, string[]]> = [
          ['open', 'orbit', 'orbit', [ORBIT]],
          ['open', 'ORBIT+AEROSPACE', 'ORBIT AEROSPACE', [ORBIT]],
          ['open', 'oRbIt%20aErOsPaCe%20lTd', 'oRbIt aErOsPaCe lTd', [ORBIT]],
          ['open', 'N', 'N', [IPO_IDS.indusBonds, IPO_IDS.nimbus]],
          ['open', 'in', 'in', [IPO_IDS.indusBonds]],
          ['open', 'SLTEX', 'SLTEX', [IPO_IDS.textiles]],
          ['open', '%C5%9Ar%C4%AB', 'Śrī', [IPO_IDS.textiles]],
          ['open', '%C5%9Br%C4%AB', 'śrī', []],
          ['open', '%C5%9AR%C4%AA', 'ŚRĪ', []],
          ['upcoming', 'ORB', 'ORB', [IPO_IDS.orbitHoldings]],
          ['upcoming', 'r%26d', 'r&d', [IPO_IDS.crest]],
          ['upcoming', 'e', 'e', [IPO_IDS.beacon, IPO_IDS.aster, IPO_IDS.crest]],
          ['announced', 'alpha+mills', 'alpha mills', [IPO_IDS.alphaSme, IPO_IDS.alphaIpo]],
          ['announced', 'nova', 'nova', [IPO_IDS.novaChem, IPO_IDS.novaPower]],
          ['announced', '%C3%A9clair', 'éclair', []],
          ['announced', '%C3%89CLAIR', 'ÉCLAIR', [IPO_IDS.eclair]],
          ['announced', 'eclair', 'eclair', [IPO_IDS.eclair]],
          ['announced', '%EF%BD%86ull', 'ｆull', []],
          ['announced', '%EF%BC%A6ULL', 'ＦULL', [IPO_IDS.fullWidth]],
          ['announced', '%F0%9D%94%B8rc', '𝔸rc', [IPO_IDS.arc]],
          ['announced', 'BETA', 'BETA', [IPO_IDS.beta]],
          ['listed', 'e', 'e', EXPECTED_ORDER.listed.filter((id) => matching('listed', 'e').includes(id))],
          ['closed', 'zzz', 'zzz', []],
        ];
        for (const [status, sent, q, want] of cases) {
          expect(matching(status, q), `the reference for ${q}`).toEqual(want);
          expect(await ids(ctx, `status=${status}&q=${sent}`), `q=${sent}`).toEqual(want);
        }
      },
    },
    {
      id: 'list-q-literal',
      name: 'MUST take q as sent: no trimming, and %, _ and \\ as plain characters',
      async fn(ctx) {
        expect(await ids(ctx, 'status=open&q=%20orbit')).toEqual([]);
        expect(await ids(ctx, 'status=open&q=orbit%20')).toEqual([ORBIT]);
        expect(await ids(ctx, 'status=open&q=ltd%20')).toEqual([]);
        for (const q of ['%25', '_', '%5C', 'o_bit', 'orb%25', '%25orbit', 'O%5C', 'Orbit_Aerospace', '%2A', '.']) {
          for (const status of STATUSES) expect(await ids(ctx, `status=${status}&q=${q}`), `q=${q}`).toEqual([]);
        }
        expect(await ids(ctx, 'status=upcoming&q=%26')).toEqual([IPO_IDS.crest]);
      },
    },
    {
      id: 'list-q-combined',
      name: 'MUST combine q with the other filters and count only what it keeps (meta.count, totalPages, pages)',
      async fn(ctx) {
        expect(await ids(ctx, 'status=open&q=in&type=DEBT')).toEqual([IPO_IDS.indusBonds]);
        expect(await ids(ctx, 'status=open&q=in&source=bse')).toEqual([IPO_IDS.indusBonds]);
        expect(await ids(ctx, 'status=open&q=o&startDate=2026-11-20')).toEqual(matching('open', 'o').filter((id) => id !== IPO_IDS.indusBonds));
        expect(await ids(ctx, 'status=upcoming&q=e&year=2027')).toEqual([IPO_IDS.crest]);
        expect(await ids(ctx, 'status=upcoming&q=e&endDate=2026-11-27')).toEqual([IPO_IDS.aster]);
        const all = matching('upcoming', 'e');
        expect(all).toHaveLength(3);
        const page1 = asList(await ctx.request('?status=upcoming&q=e&limit=2', { key: ctx.keys.paid }));
        expect(page1.meta).toEqual({ count: 3, countOnPage: 2, totalPages: 2, page: 1, limit: 2 });
        const page2 = asList(await ctx.request('?status=upcoming&q=e&limit=2&page=2', { key: ctx.keys.paid }));
        expect(page2.meta).toEqual({ count: 3, countOnPage: 1, totalPages: 2, page: 2, limit: 2 });
        expect([...page1.ipos, ...page2.ipos].map((i) => i.id)).toEqual(all);
        expect(page2.ipos).toEqual(all.slice(2).map((id) => expectedIpo(id)));
        const keyless = asList(await ctx.request('?status=announced&q=nova'));
        expect(keyless.meta.count).toBe(2);
        expect(keyless.ipos.map((i) => i.id)).toEqual([IPO_IDS.novaChem]);
        const none = asList(await ctx.request('?status=open&q=nothing', { key: ctx.keys.paid }));
        expect(none.meta).toEqual({ count: 0, countOnPage: 0, totalPages: 0, page: 1, limit: 3 });
      },
    },
    {
      id: 'list-q-bad',
      name: 'MUST answer 400 naming q for an empty, repeated, malformed or longer than 64 code points q, and accept 64 (astral characters counting one)',
      async fn(ctx) {
        const a64 = 'a'.repeat(64);
        const smile = '%F0%9F%98%80';
        const bad = ['q=', 'q', 'q=a&q=a', 'q=a&q=b', 'q=%ZZ', 'q=%', 'q=ab%2', 'q=%E0%A4', 'q=%C0%AF', `q=${a64}a`, `q=${smile.repeat(65)}`, `q=${'a'.repeat(63)}${smile}${smile}`];
        for (const q of bad) {
          for (const key of [undefined, ctx.keys.paid]) {
            expectError(await ctx.request(`?status=open&${q}`, key === undefined ? {} : { key }), 400, 'q');
          }
        }
        for (const q of [a64, smile.repeat(64), `${'a'.repeat(63)}${smile}`, `${'%C3%A9'.repeat(64)}`]) {
          const body = asList(await ctx.request(`?status=open&q=${q}`, { key: ctx.keys.paid }));
          expect(body.meta.count).toBe(0);
        }
        // q is a list parameter only: the one-IPO and series routes ignore it
        expect((await ctx.request('/ORBIT?q=', { key: ctx.keys.paid })).status).toBe(200);
        expect((await ctx.request('/ORBIT/gmp?q=&q=', { key: ctx.keys.proGmp })).status).toBe(200);
      },
    },
  ];
}

function asSubscription(res: HttpResult): SubscriptionSeries {
  expectOk(res);
  const body = res.json;
  if (!isRecord(body) || !Array.isArray(body['series']) || !isRecord(body['meta'])) throw new Error(`not a subscription body: ${res.text.slice(0, 200)}`);
  expect(Object.keys(body)).toEqual(['ipoId', 'symbol', 'series', 'meta']);
  expect(Object.keys(body['meta'])).toEqual(['from', 'to', 'count']);
  const series = body['series'] as unknown[];
  for (const point of series) {
    if (!isRecord(point)) throw new Error('a series point is not an object');
    expect(Object.keys(point)).toEqual(['timestamp', ...SUBSCRIPTION_KEYS]);
  }
  const stamps = series.map((p) => (p as { timestamp: string }).timestamp);
  expect(stamps).toEqual([...stamps].sort());
  expect(new Set(stamps).size).toBe(stamps.length);
  expect(body['meta']['count']).toBe(series.length);
  return body as unknown as SubscriptionSeries;
}

/** The served document, typed for the checks. */
function asOpenApiDocument(value: unknown): OpenApiDocument {
  if (!isRecord(value) || !isRecord(value['paths'])) throw new Error('the served document is not an OpenAPI document');
  return value as unknown as OpenApiDocument;
}

// ---------------------------------------------------------------------------------------
// Assertions

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function expectCommonHeaders(res: HttpResult): void {
  expect(res.headers['content-type'], 'content-type').toBe(JSON_TYPE);
  expect(res.headers['cache-control'], 'cache-control').toBe(CACHE_CONTROL);
  expect(res.headers['etag'], 'etag').toBeUndefined();
}

function expectOk(res: HttpResult): void {
  expect(res.status, res.text.slice(0, 300)).toBe(200);
  expectCommonHeaders(res);
  expect(res.json, 'a JSON body').toBeDefined();
  // compact: re-serialising the parsed body gives the same bytes
  expect(res.text).toBe(JSON.stringify(res.json));
}

function asList(res: HttpResult): ListResponse {
  expectOk(res);
  const body = res.json;
  if (!isRecord(body) || !isRecord(body['meta']) || !Array.isArray(body['ipos'])) throw new Error(`not a list body: ${res.text.slice(0, 200)}`);
  expect(Object.keys(body)).toEqual(['meta', 'ipos']);
  return body as unknown as ListResponse;
}

function asIpo(res: HttpResult): IpoResponse {
  expectOk(res);
  const body = res.json;
  if (!isRecord(body) || !isRecord(body['ipo'])) throw new Error(`not an IPO body: ${res.text.slice(0, 200)}`);
  expect(Object.keys(body)).toEqual(['ipo']);
  return body as unknown as IpoResponse;
}

function asSeries(res: HttpResult): GmpSeries {
  expectOk(res);
  const body = res.json;
  if (!isRecord(body) || !Array.isArray(body['series'])) throw new Error(`not a series body: ${res.text.slice(0, 200)}`);
  expect(Object.keys(body)).toEqual(['ipoId', 'symbol', 'interval', 'field', 'series', 'meta']);
  return body as unknown as GmpSeries;
}

/**
 * An error response: status, headers, the exact key order and bytes, the code and title
 * of the status, `meta.parameter` on a 400 (and no meta on others but 429).
 */
function expectError(res: HttpResult, status: number, parameter?: string): ErrorBody {
  expect(res.status, res.text.slice(0, 300)).toBe(status);
  expectCommonHeaders(res);
  const body = res.json;
  if (!isRecord(body)) throw new Error(`not a JSON object: ${res.text.slice(0, 200)}`);
  const withMeta = status === 400 || status === 429;
  expect(Object.keys(body)).toEqual(withMeta ? ['status', 'title', 'detail', 'code', 'meta'] : ['status', 'title', 'detail', 'code']);
  expect(body['status']).toBe(String(status));
  expect(body['title']).toBe(TITLES[status]);
  expect(body['code']).toBe(CODES[status]);
  const detail = body['detail'];
  if (typeof detail !== 'string') throw new Error('detail is not a string');
  expect(detail.length).toBeGreaterThan(0);
  if (status === 400) {
    if (parameter !== undefined) expect(body['meta']).toEqual({ parameter });
    else expect(Object.keys(isRecord(body['meta']) ? body['meta'] : {})).toEqual(['parameter']);
  }
  expect(res.text).toBe(JSON.stringify(body));
  expect(res.text).not.toMatch(/\n\s+at |node_modules|\.ts:\d/);
  return body as unknown as ErrorBody;
}

function expect429(res: HttpResult, quotaPerMinute: number | null, expiresIn: number, window: RateWindowName = 'minute', quota = quotaPerMinute): void {
  const body = expectError(res, 429);
  expect(body.meta).toEqual({ quotaPerMinute, expiresIn, window, quota });
  expect(Object.keys(body.meta ?? {})).toEqual(['quotaPerMinute', 'expiresIn', 'window', 'quota']);
  expect(res.headers['retry-after']).toBe(String(expiresIn));
}

function expectRateHeaders(res: HttpResult, want: { limit: number; remaining: number; reset: number; retryAfter?: number }): void {
  const got = {
    limit: res.headers['ratelimit-limit'],
    remaining: res.headers['ratelimit-remaining'],
    reset: res.headers['ratelimit-reset'],
    retryAfter: res.headers['retry-after'],
  };
  expect(got, `RateLimit-* of a ${res.status}`).toEqual({
    limit: String(want.limit),
    remaining: String(want.remaining),
    reset: String(want.reset),
    retryAfter: want.retryAfter === undefined ? undefined : String(want.retryAfter),
  });
}

function expectNoRateHeaders(res: HttpResult): void {
  for (const h of RATE_HEADERS) expect(res.headers[h], `${h} on a ${res.status}`).toBeUndefined();
}

function expectNoLeak(res: HttpResult, key: string | undefined): void {
  for (const secret of ['SELECT', 'db-7', 'internal.example', 'exploded', 'Error:', 'stack']) expect(res.text).not.toContain(secret);
  if (key !== undefined) expect(res.text).not.toContain(key);
}

/** Any response of the API: never 5xx; 200 is JSON; every other status has the error body. */
function expectWellFormed(res: HttpResult, parameters: readonly string[]): void {
  expect(res.status, res.text.slice(0, 300)).toBeLessThan(500);
  expectCommonHeaders(res);
  if (res.status === 200) {
    expect(res.text).toBe(JSON.stringify(res.json));
    return;
  }
  expect([400, 401, 403, 404]).toContain(res.status);
  const body = expectError(res, res.status);
  const meta: unknown = body.meta;
  if (res.status === 400 && isRecord(meta)) expect(parameters).toContain(meta['parameter']);
}

function chainHas(error: unknown, text: string): boolean {
  let e: unknown = error;
  for (let depth = 0; depth < 6 && e !== undefined && e !== null; depth++) {
    if (e instanceof Error && e.message.includes(text)) return true;
    e = e instanceof Error ? e.cause : undefined;
  }
  return false;
}

/** A target (below the mount) whose request-target, mount included, is exactly `bytes` long. */
function targetOfLength(mount: string, prefix: string, bytes: number): string {
  const pad = bytes - Buffer.byteLength(mount + prefix);
  if (pad < 0) throw new Error('prefix too long');
  return prefix + 'x'.repeat(pad);
}

// ---------------------------------------------------------------------------------------
// Plumbing

function faultyStore<S extends object>(store: S, state: { fault: StoreFault | null }): S {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]): unknown => {
        const f = state.fault;
        if (f !== null && (f.method === '*' || f.method === prop)) {
          if (f.mode === 'hang') return new Promise<never>(() => undefined);
          return Promise.reject(new Error(`store failed: ${STORE_FAULT_SECRET}`));
        }
        return Reflect.apply(method, target, args);
      };
    },
  });
}

/** A response as the checks see it: the body also parsed as JSON when it is JSON. */
export function toResult(status: number, headers: Record<string, string>, text: string): HttpResult {
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status, headers, text, json };
}

async function fetchResult(url: string, options: RequestOptions = {}): Promise<HttpResult> {
  const headers = new Headers(options.headers);
  if (options.key !== undefined) headers.set('x-api-key', options.key);
  const res = await fetch(url, { method: options.method ?? 'GET', headers, redirect: 'manual' });
  const text = await res.text();
  const out: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    out[name] = value;
  });
  return toResult(res.status, out, text);
}

function rawResult(base: URL, target: string, options: RawRequestOptions = {}): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: base.hostname, port: base.port, path: (options.absoluteForm === true ? base.origin : '') + base.pathname + target, method: options.method ?? 'GET', headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
          }
          resolve(toResult(res.statusCode ?? 0, headers, Buffer.concat(chunks).toString('utf8')));
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}
