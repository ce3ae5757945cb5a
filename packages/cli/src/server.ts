/**
 * The server behind `ipokit serve` and the demo's `npm start`: a store (memory, or
 * PostgreSQL on a client it is given), optionally one demo account and key per plan, the
 * router mounted at /ipos (or another mount path) on node:http itself (node-app.ts), or
 * with Express or Koa, the health checks at /healthz and /readyz, optionally the push
 * route at /-/ingest, optionally an access log line per request, and optionally a webhook
 * worker delivering the store's events from the same process.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import express from 'express';
import Koa from 'koa';
import { createAccount, createApiKey, importDataset, IpokitError, isIpokitError, listApiKeys, revokeApiKey, todayInIst, updateAccount, type Dataset, type IpoRouterOptions, type Plan, type Store, type WebhookStore } from '@ipokit/core';
import { type WebhookWorker, type WebhookWorkerOptions } from '@ipokit/webhooks';
import { accountRouter, ipoRouter } from '@ipokit/express';
import { accountHandlerOf, createIpoHandler, outsideAnswer } from '@ipokit/core/adapter';
import { accountRouter as koaAccountRouter, ipoRouter as koaIpoRouter } from '@ipokit/koa';
import { memoryStore } from '@ipokit/storage-memory';
import { migrate, type PostgresClient } from '@ipokit/storage-postgres';
import { observeAccounts, requestRecords, withAccessLog, type AccessLogEntry, type RequestListener } from './access-log.js';
import { DEFAULT_MOUNT, HEALTH_PATHS, MAX_TRUST_PROXY, mountProblem } from './config.js';
import { applyConnectionLimits, type ConnectionLimits } from './connection-limits.js';
import { storeOf } from './database.js';
import { readDatasetJson } from './dataset-file.js';
import { generateDataset } from './generate.js';
import { healthChecks, type HealthAnswer } from './health.js';
import { checkIngestOptions, holdContinue, INGEST_PATH, ingestRoute, sourcesRoute, type IngestAnswer } from './ingest.js';
import { startCollector, type Collector, type CollectorOptions, type SourceStatus } from '@ipokit/sources';
import { demoLiveSources } from './demo-live.js';
import { CliError } from './io.js';
import { startNodeWorker } from './worker.js';
import { nodeApp } from './node-app.js';
import { createServerMetrics, listenMetrics, metricsUrl, type MetricsSettings } from './metrics.js';

/** One demo key per plan (the pro account has the GMP add-on). */
export type DemoKeys = Record<Plan, string>;

/** A PostgreSQL database to serve from. */
export interface ServerDatabase {
  /** A `pg.Pool`, a `pg.Client` or a PGlite instance. */
  client: PostgresClient;
  /** The schema of the tables. */
  schema: string;
  /** Called by {@link RunningServer.close} (and when starting fails). */
  close(): Promise<void>;
}

/** Options of {@link startServer}. */
export interface ServerOptions {
  /** 0 picks a free port. */
  port: number;
  /** The address to listen on. Default `127.0.0.1`. */
  host?: string;
  /** What answers the requests: `node` (node:http calling the core directly), `express` or `koa`. Default `node`. */
  framework?: 'node' | 'express' | 'koa';
  /** A dataset JSON file: served instead of the generated dataset (memory), or imported first (PostgreSQL). */
  datasetFile?: string;
  /** How messages name the file. Default `dataset file`. */
  datasetLabel?: string;
  /** Serve from PostgreSQL (migrated first) instead of memory. */
  database?: ServerDatabase;
  /** Create one demo account and key per plan. Default: true in memory, false on PostgreSQL. */
  demoKeys?: boolean;
  /** PostgreSQL: import the generated dataset when the database holds no IPO (what `npm start` does). */
  seedEmptyDatabase?: boolean;
  /** The clock of the router and of the generated dataset. */
  now?: () => Date;
  /** The router's `onError`. Default `console.error`. */
  onError?: (err: unknown) => void;
  /** Timeouts and the most connections at once; each one not given has its default (see {@link ConnectionLimits}). */
  connectionLimits?: Partial<ConnectionLimits>;
  /** The path the API answers under. Default `/ipos`; `/` for the root. */
  mount?: string;
  /**
   * How many proxies in front of the server append the client's address to X-Forwarded-For:
   * the address that many entries from the right is the client's (Express `trust proxy`,
   * Koa `proxy` with `maxIpsCount`). Default 0: the connection's address.
   */
  trustProxy?: number;
  /** The router's options (not `now` or `onError`, given above). The OpenAPI document is on unless `openapi: false`. */
  router?: ServerRouterOptions;
  /** Receives one entry per request, once its response is done. Default: no access log. */
  accessLog?: (entry: AccessLogEntry) => void;
  /**
   * Deliver the store's webhooks from this process: a worker (`startWebhookWorker` of
   * `@ipokit/core`, with these options and the clock above; by default through undici,
   * `nodeWebhookTransport`) runs beside the server until
   * {@link RunningServer.close}. Default: no worker.
   */
  webhookWorker?: Omit<WebhookWorkerOptions, 'now'>;
  /** Networks outside the public internet that the demo's account router creates endpoints for (`webhookAllowedNetworks`). Default none. */
  webhookAllowedNetworks?: readonly string[];
  /**
   * Accept pushed datasets at `POST /-/ingest` (outside the mount, no API key) from a client
   * that sends one of `tokens` as a bearer token, bodies of at most `maxBytes` (default 16 MiB);
   * see {@link ingestRoute}. Default: no push route.
   */
  ingest?: ServerIngest;
  /**
   * Run a collector in this process (docs/spec.md#sources): `startCollector` of
   * `@ipokit/sources` on the store, with these sources and options and the clock above, until
   * {@link RunningServer.close}. With {@link ingest}, `GET /-/sources` shows its status.
   * Default: none.
   */
  collector?: ServerCollector;
  /**
   * With the generated dataset: the demo's simulated live sources (GMP sites and the
   * exchange's bids moving during Indian market hours) run in the collector too, so the
   * data, the charts and webhooks change while the demo runs (`npm start`). Default false.
   */
  demoLive?: boolean;
  /**
   * Serve Prometheus metrics at `GET /metrics` on a listener of their own (not the API's port
   * or mount), e.g. `{ port: 9464 }`; `host` defaults to `127.0.0.1`. Default: no metrics.
   */
  metrics?: MetricsSettings;
}

/** The collector a server runs: its sources and its options but the clock. */
export type ServerCollector = Omit<CollectorOptions, 'now' | 'timers'>;

/** The push route's settings: the accepted bearer tokens and the largest body. */
export interface ServerIngest {
  /** Each at least 32 characters (`readIngestTokens` reads them from a file). */
  tokens: readonly string[];
  /** Default 16 MiB. */
  maxBytes?: number;
}

/** The router options {@link startServer} takes: all but the clock and the error sink, which it has as its own options. */
export type ServerRouterOptions = Omit<IpoRouterOptions, 'now' | 'onError'>;

/** The names of the demo's accounts, by plan: a restart finds them by name and gives each a new key. */
export const DEMO_ACCOUNT_NAMES: Readonly<Record<Plan, string>> = Object.freeze({
  free: 'ipokit demo (free)',
  paid: 'ipokit demo (paid)',
  pro: 'ipokit demo (pro)',
});

/** Where the demo's account router answers, its dashboard page, and the sign-in that sets the demo's cookie. */
export const DEMO_ACCOUNT_MOUNT = '/account';
export const DEMO_SIGN_IN_PATH = '/demo/sign-in';
/** The demo's sign-in cookie: the plan of the demo account signed in as. */
const DEMO_COOKIE = 'ipokit_demo_plan';
const COOKIE_VALUE = new RegExp(`(?:^|;\\s*)${DEMO_COOKIE}=([^;]*)`);

/** A started server. */
export interface RunningServer {
  server: Server;
  /** `http://localhost:3000`: the router answers under `${url}${mount}`. */
  url: string;
  /** The path the router answers under, e.g. `/ipos`. */
  mount: string;
  /** Where the OpenAPI document is served; null when it is off. */
  openapiUrl: string | null;
  /** Where datasets are pushed (`POST`); null without {@link ServerOptions.ingest}. */
  ingestUrl: string | null;
  /** Where Prometheus scrapes, e.g. `http://127.0.0.1:9464/metrics`; null without {@link ServerOptions.metrics}. */
  metricsUrl: string | null;
  /** The demo keys, when they were created. */
  keys: DemoKeys | null;
  /**
   * With the demo keys, the demo's sign-in: opening it signs the browser in as the demo pro
   * account (a cookie; `?plan=free` or `paid` for the others) and shows the account
   * dashboard at `/account/-/dashboard/`. Null without demo keys.
   */
  dashboardUrl: string | null;
  /** What is served: the generated dataset, the file, or what PostgreSQL already held. */
  source: 'generated' | 'file' | 'stored';
  /** IPOs in the store when serving began. */
  ipoCount: number;
  /** Curl lines that work as pasted (with `$KEY` for the key when no demo key was made): a list, and one IPO and its GMP series when some IPO has GMP data. */
  curls: string[];
  /** The webhook worker, when {@link ServerOptions.webhookWorker} asked for one; `stop()` drains it (more than once is fine). */
  worker: WebhookWorker | null;
  /** The collector, when {@link ServerOptions.collector} or {@link ServerOptions.demoLive} gave it sources. */
  collector: Collector | null;
  /** Stops listening (if still listening) and the webhook worker (its attempts under way finish), and frees the store and the database. */
  close(): Promise<void>;
}

/**
 * Loads the store, creates the demo keys if asked, and listens.
 *
 * @example
 * ```ts
 * const running = await startServer({ port: 0 });    // memory, generated dataset, demo keys
 * console.log(running.curls.join('\n'));
 * await running.close();
 * ```
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const now = options.now ?? (() => new Date());
  // Settings are checked before anything is loaded: a typo fails at once.
  const mount = options.mount ?? DEFAULT_MOUNT;
  const wrongMount = mountProblem(mount);
  if (wrongMount !== null) throw new IpokitError('ERR:BADPARAM', `mount ${wrongMount}, got ${JSON.stringify(mount)}.`, { parameter: 'mount' });
  const trustProxy = options.trustProxy ?? 0;
  if (!Number.isSafeInteger(trustProxy) || trustProxy < 0 || trustProxy > MAX_TRUST_PROXY) {
    throw new IpokitError('ERR:BADPARAM', `trustProxy must be a whole number of proxies from 0 to ${MAX_TRUST_PROXY}, got ${String(trustProxy)}.`, { parameter: 'trustProxy' });
  }
  if (options.ingest !== undefined) {
    try {
      checkIngestOptions(options.ingest);
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      throw new IpokitError('ERR:BADPARAM', `${err.message}.`, { parameter: 'ingest' });
    }
  }
  let dataset: Dataset | null = null;
  const generated = () => (dataset = generateDataset({ today: todayInIst(now()), now: now().getTime() }));
  const label = options.datasetLabel ?? 'dataset file';
  const fromFile = async (store: Store, file: string) => {
    try {
      await importDataset(store, await readDataset(file, label));
    } catch (err) {
      if (!isIpokitError(err, 'ERR:DATASET')) throw err;
      throw new IpokitError('ERR:DATASET', `${label} ${file} is not a valid dataset: ${err.message}`, {
        cause: err,
        ...(err.problems === undefined ? {} : { problems: err.problems }),
        ...(err.problemCount === undefined ? {} : { problemCount: err.problemCount }),
      });
    }
  };

  let store: (Store & WebhookStore) | undefined;
  let worker: WebhookWorker | null = null;
  let collector: Collector | null = null;
  let source: RunningServer['source'];
  let ipoCount: number;
  let keys: DemoKeys | null = null;
  let demoAccounts: Record<Plan, string> | null = null;
  let server: Server | undefined;
  let metricsServer: Server | null = null;
  let sample: string | null;
  const database = options.database;
  const release = async () => {
    await store?.close?.();
    await database?.close();
  };
  try {
    if (database === undefined) {
      store = memoryStore();
      if (options.datasetFile === undefined) await importDataset(store, generated());
      else await fromFile(store, options.datasetFile);
      source = options.datasetFile === undefined ? 'generated' : 'file';
    } else {
      const { client, schema } = database;
      await migrate(client, { schema });
      store = storeOf(database);
      if (options.datasetFile !== undefined) {
        await fromFile(store, options.datasetFile);
        source = 'file';
      } else if (options.seedEmptyDatabase && (await countIpos(client, schema)) === 0) {
        await importDataset(store, generated());
        source = 'generated';
      } else {
        source = 'stored';
      }
    }
    ipoCount = database === undefined ? await countMemory(store, now()) : await countIpos(database.client, database.schema);
    if (options.demoKeys ?? database === undefined) {
      ({ keys, accounts: demoAccounts } = await createDemoKeys(store, database === undefined ? undefined : (name) => findAccountByName(database.client, database.schema, name)));
    }
    sample = await pickSample(store, now());
    // (the outbox gauges where the store counts its backlog: absent, not zero, where it cannot)
    const outbox = store.outboxStats?.bind(store);
    const metrics = options.metrics === undefined ? null : createServerMetrics({ now, sources: () => collector?.status() ?? [], ...(outbox === undefined ? {} : { outbox }) });
    if (options.webhookWorker !== undefined) worker = startNodeWorker(store, { ...options.webhookWorker, now, ...(metrics === null ? {} : { onAttempt: metrics.onAttempt }) });
    const sources = [...(options.collector?.sources ?? [])];
    const generatedData: Dataset | null = dataset;
    if (options.demoLive === true && generatedData !== null) {
      // Only the generated dataset's IPOs: their generated GMP and subscription go on moving.
      const { ipos = [], gmp = [], subscription = [] } = generatedData;
      sources.push(...demoLiveSources({ ipos, gmp, subscription }));
    }
    if (sources.length > 0) collector = await startCollector(store, { ...options.collector, sources, now });
    const running = collector;
    const router = metrics === null ? options.router : { ...options.router, ...metrics.router };
    server = await listen(handlerFor(store, { ...options, router, mount, now, demoAccounts, sourcesStatus: () => running?.status() ?? [] }), options.port, options.host ?? '127.0.0.1', options.connectionLimits, options.ingest !== undefined);
    if (options.metrics !== undefined) metricsServer = await listenMetrics(metrics!, options.metrics);
  } catch (err) {
    server?.close();
    await collector?.stop().catch(() => undefined);
    await worker?.stop().catch(() => undefined);
    await release().catch(() => undefined);
    throw err;
  }

  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const url = `http://${displayHost(options.host ?? '127.0.0.1')}:${port}`;
  const api = `${url}${mount === '/' ? '' : mount}`;
  const key = (plan: Plan) => (keys === null ? `-H "x-api-key: $KEY"` : `-H 'x-api-key: ${keys[plan]}'`);
  const curls = [`curl -s '${api === url ? `${url}/` : api}?status=listed&limit=5' ${key('paid')}`];
  if (sample !== null) {
    curls.push(`curl -s '${api}/${sample}?includeGmp=true' ${key('pro')}`, `curl -s '${api}/${sample}/gmp?interval=hourly&field=median' ${key('pro')}`);
  }
  const listening = server;
  return {
    server: listening,
    url,
    mount,
    openapiUrl: options.router?.openapi === false ? null : `${api}/-/openapi.json`,
    ingestUrl: options.ingest === undefined ? null : `${url}${INGEST_PATH}`,
    metricsUrl: metricsServer === null ? null : metricsUrl(metricsServer, displayHost(options.metrics?.host ?? '127.0.0.1')),
    keys,
    dashboardUrl: demoAccounts === null ? null : `${url}${DEMO_SIGN_IN_PATH}`,
    source,
    ipoCount,
    curls,
    worker,
    collector,
    close: async () => {
      // The collector's runs are cut first: what they write is whole or not written.
      await collector?.stop();
      const drained = worker?.stop();
      try {
        if (listening.listening) await new Promise<void>((resolve, reject) => listening.close((err) => (err ? reject(err) : resolve())));
      } finally {
        metricsServer?.close();
        metricsServer?.closeAllConnections();
        await drained;
      }
      await release();
    },
  };
}

/** What {@link handlerFor} needs of the options. */
type AppOptions = Pick<ServerOptions, 'framework' | 'onError' | 'trustProxy' | 'router' | 'accessLog' | 'webhookAllowedNetworks' | 'ingest'> & {
  mount: string;
  now: () => Date;
  /** The demo accounts: with them, the account router and dashboard at /account and the demo's sign-in. */
  demoAccounts?: Record<Plan, string> | null;
  /** The collector's status, for `GET /-/sources` (with the ingest tokens). */
  sourcesStatus?: () => readonly SourceStatus[];
};

/**
 * The request listener: the health checks and the push route first (outside the mount, no
 * key, no window), then the home route at `/` and the router at the mount; with an access log, each request
 * runs inside its record, which the first middleware fills with the client address as the
 * framework reads it (after `trustProxy`) and the store with the account of a valid key.
 */
function handlerFor(store: Store, options: AppOptions): RequestListener {
  const { mount, now, onError } = options;
  const routerOptions: IpoRouterOptions = { ...options.router, openapi: options.router?.openapi ?? true, now, ...(onError === undefined ? {} : { onError }) };
  const allowed = options.webhookAllowedNetworks === undefined ? {} : { webhookAllowedNetworks: options.webhookAllowedNetworks };
  const logged = options.accessLog !== undefined;
  const routerStore = logged ? observeAccounts(store) : store;
  const health = healthChecks(store, {
    timeoutMs: routerOptions.storeTimeoutMs ?? 5_000,
    onError: (err) => (onError ?? ((e: unknown) => console.error('[ipokit]', e)))(err),
  });
  const ingest = options.ingest === undefined ? null : ingestRoute(store, { ...options.ingest, now, onError: (err) => (onError ?? ((e: unknown) => console.error('[ipokit]', e)))(err) });
  const sources = options.ingest === undefined ? null : sourcesRoute(options.ingest.tokens, options.sourcesStatus ?? (() => []));
  const rootRoutes = (method: string, path: string, req: IncomingMessage): Promise<HealthAnswer | IngestAnswer> | null => {
    const status = sources?.(req) ?? null;
    return status !== null ? Promise.resolve(status) : (health(method, path) ?? ingest?.(req) ?? null);
  };
  const api = mount === '/' ? '' : mount;
  const home = {
    service: 'ipokit',
    routes: [`${api}?status=listed`, `${api}/{identifier}`, `${api}/{identifier}/gmp`],
    ...(routerOptions.openapi ? { openapi: `${api}/-/openapi.json` } : {}),
    health: [HEALTH_PATHS.live, HEALTH_PATHS.ready],
  };
  const trustProxy = options.trustProxy ?? 0;
  const demo = options.demoAccounts === undefined || options.demoAccounts === null ? null : demoSignIn(options.demoAccounts);
  const note = (address: string | undefined) => {
    const record = logged ? requestRecords.getStore() : undefined;
    if (record !== undefined) record.address = address ?? null;
  };
  let listener: RequestListener;
  if (options.framework === undefined || options.framework === 'node') {
    const apiMount = mount === '/' ? '' : mount.toLowerCase();
    listener = nodeApp({
      first: rootRoutes,
      ...(mount === '/' ? {} : { home }),
      ...(demo === null
        ? {}
        : {
            page: { path: DEMO_SIGN_IN_PATH, answer: demo.signIn },
            account: {
              mount: DEMO_ACCOUNT_MOUNT,
              accountOf: (req: IncomingMessage) => demo.account(req.headers.cookie),
              handle: accountHandlerOf<[req: IncomingMessage]>(routerStore, { ...routerOptions, ...allowed, dashboard: true, account: (req) => demo.account(req.headers.cookie) }, { accountArgs: '(req)', loadDashboard: () => import('@ipokit/dashboard') }).handle,
            },
          }),
      api: { handle: createIpoHandler(routerStore, routerOptions), mount: apiMount },
      outside: outsideAnswer(mount, 'the IPO API'),
      trustProxy,
      ...(logged ? { onAddress: note } : {}),
      onError: onError ?? ((e: unknown) => console.error('[ipokit]', e)),
    });
  } else if (options.framework === 'koa') {
    const app = new Koa();
    if (trustProxy > 0) {
      app.proxy = true;
      app.maxIpsCount = trustProxy;
    }
    app.use(async (ctx, next) => {
      note(ctx.ip);
      const answering = rootRoutes(ctx.method, ctx.path, ctx.req);
      if (answering !== null) {
        const answer = await answering;
        ctx.status = answer.status;
        ctx.set(withoutLength(answer));
        ctx.body = answer.body;
        return;
      }
      if (ctx.path !== '/' || mount === '/') return next();
      ctx.body = home;
    });
    if (demo !== null) {
      app.use(async (ctx, next) => {
        if (ctx.method !== 'GET' || ctx.path !== DEMO_SIGN_IN_PATH) return next();
        const answer = demo.signIn(ctx.querystring);
        ctx.status = answer.status;
        ctx.set(answer.headers);
        ctx.body = answer.body;
      });
      app.use(koaAccountRouter(routerStore, { ...routerOptions, ...allowed, prefix: DEMO_ACCOUNT_MOUNT, dashboard: true, account: (ctx) => demo.account(ctx.headers.cookie) }));
    }
    app.use(koaIpoRouter(routerStore, { ...routerOptions, prefix: mount === '/' ? '' : mount }));
    listener = app.callback();
  } else {
    const app = express();
    app.disable('x-powered-by');
    if (trustProxy > 0) app.set('trust proxy', trustProxy);
    app.use((req, res, next) => {
      note(req.ip);
      const answering = rootRoutes(req.method, req.path, req);
      if (answering === null) return next();
      answering.then((answer) => {
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
      }, next);
    });
    if (mount !== '/') {
      app.get('/', (_req, res) => {
        res.json(home);
      });
    }
    if (demo !== null) {
      app.get(DEMO_SIGN_IN_PATH, (req, res) => {
        const answer = demo.signIn(new URL(req.originalUrl, 'http://x').search.slice(1));
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
      });
      app.use(DEMO_ACCOUNT_MOUNT, accountRouter(routerStore, { ...routerOptions, ...allowed, dashboard: true, account: (req) => demo.account(req.headers.cookie) }));
    }
    app.use(mount, ipoRouter(routerStore, routerOptions));
    listener = app;
  }
  return logged ? withAccessLog(listener, options.accessLog!) : listener;
}

/** Koa measures the body itself. */
function withoutLength(answer: HealthAnswer | IngestAnswer): Record<string, string> {
  const { 'Content-Length': _length, ...headers } = answer.headers;
  return headers;
}

function listen(handler: RequestListener, port: number, host: string, limits: Partial<ConnectionLimits> | undefined, ingest: boolean): Promise<Server> {
  return new Promise<Server>((resolve, reject) => {
    const s = createServer(handler);
    applyConnectionLimits(s, limits);
    // A push with `Expect: 100-continue` gets its 100 only once the route reads its body: a push
    // refused on its headers is answered before a byte of its body is sent.
    if (ingest) {
      s.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
        if (!holdContinue(req, () => res.writeContinue())) res.writeContinue();
        handler(req, res);
      });
    }
    s.once('error', (err: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      const why =
        err.code === 'EADDRINUSE'
          ? 'the port is in use (choose another with --port or PORT, or 0 for any free one)'
          : err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND'
            ? 'no network interface of this machine has that address (choose another with --host or HOST; 0.0.0.0 is every interface)'
            : err.code === 'EACCES'
              ? 'permission denied (ports below 1024 need privileges)'
              : err.message;
      reject(new CliError(`cannot listen on ${where}: ${why}`, 1));
    });
    s.listen(port, host, () => resolve(s));
  });
}

/** `localhost` for the loopback and wildcard addresses, brackets around other IPv6 ones. */
function displayHost(host: string): string {
  if (['127.0.0.1', 'localhost', '0.0.0.0', '::', '::1'].includes(host)) return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Reads and parses a dataset file; a file that cannot be read, is not UTF-8 or not JSON is
 * a one-line error, worded as `ipokit import` words it.
 */
async function readDataset(file: string, label: string): Promise<unknown> {
  return readDatasetJson(file, label);
}

async function countIpos(client: PostgresClient, schema: string): Promise<number> {
  try {
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM "${schema}".ipos`);
    return Number((rows[0] as { n: number } | undefined)?.n ?? 0);
  } catch (err) {
    throw new IpokitError('ERR:UNAVAILABLE', 'The PostgreSQL store failed.', { cause: err });
  }
}

async function countMemory(store: Store, at: Date): Promise<number> {
  let n = 0;
  const base = { today: todayInIst(at), types: null, source: null, startDate: null, endDate: null, year: null, offset: 0, limit: 1, gmpAt: null };
  for (const status of ['listed', 'closed', 'open', 'upcoming', 'announced'] as const) n += (await store.listIpos({ ...base, status })).count;
  return n;
}

/**
 * One key per plan, for the demo's accounts (the pro one with the GMP add-on). An account
 * found by its name ({@link DEMO_ACCOUNT_NAMES}, with `findAccount`) is reused: the demo
 * keys made for it before are revoked (a key is shown once, so they cannot be printed
 * again, and the free plan holds one active key) and its plan put back if it was changed.
 * Without `findAccount` (memory, which starts empty) the accounts are created.
 */
async function createDemoKeys(store: Store, findAccount?: (name: string) => Promise<string | null>): Promise<{ keys: DemoKeys; accounts: Record<Plan, string> }> {
  const accounts = {} as Record<Plan, string>;
  const make = async (plan: Plan, gmpAddon: boolean) => {
    const name = DEMO_ACCOUNT_NAMES[plan];
    const label = `demo ${plan} key`;
    let accountId = findAccount === undefined ? null : await findAccount(name);
    if (accountId === null) {
      accountId = (await createAccount(store, { name, plan, gmpAddon })).id;
    } else {
      for (const key of await listApiKeys(store, { accountId })) {
        if (key.revokedAt === null && key.label === label) await revokeApiKey(store, key.id);
      }
      const account = await store.getAccount(accountId);
      if (account !== null && (account.plan !== plan || account.gmpAddon !== gmpAddon)) await updateAccount(store, { accountId, plan, gmpAddon });
    }
    accounts[plan] = accountId;
    try {
      return (await createApiKey(store, { accountId, label })).key;
    } catch (err) {
      if (!isIpokitError(err, 'ERR:PLAN')) throw err;
      throw new IpokitError(
        'ERR:PLAN',
        `The demo account "${name}" (${accountId}) holds an active key the demo did not make, and its plan allows one: revoke it ('ipokit keys list --account ${accountId}', then 'ipokit keys revoke ID').`,
        { cause: err },
      );
    }
  };
  const keys = { free: await make('free', false), paid: await make('paid', false), pro: await make('pro', true) };
  return { keys, accounts };
}

/**
 * The demo's one-line sign-in, standing in for an app's own login: `GET /demo/sign-in`
 * sets a cookie naming a demo plan (`?plan=free|paid|pro`, default pro) and redirects to
 * the dashboard; the account router reads the cookie back as that plan's demo account. It
 * can sign in as the demo accounts only. A real app uses its own login here.
 */
function demoSignIn(accounts: Record<Plan, string>): {
  signIn: (query: string) => { status: number; headers: Record<string, string>; body: string };
  account: (cookie: string | undefined) => string | null;
} {
  const planOf = (text: string | null | undefined): Plan | null => (text === 'free' || text === 'paid' || text === 'pro' ? text : null);
  return {
    signIn: (query): { status: number; headers: Record<string, string>; body: string } => {
      const asked = new URLSearchParams(query).get('plan');
      const plan = asked === null ? 'pro' : planOf(asked);
      if (plan === null) return { status: 400, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body: 'plan must be free, paid or pro.\n' };
      return {
        status: 303,
        headers: {
          'Set-Cookie': `${DEMO_COOKIE}=${plan}; Path=/; HttpOnly; SameSite=Lax`,
          Location: `${DEMO_ACCOUNT_MOUNT}/-/dashboard/`,
          'Cache-Control': 'no-store',
          'Content-Type': 'text/plain; charset=utf-8',
        },
        body: `Signed in as the demo ${plan} account: ${DEMO_ACCOUNT_MOUNT}/-/dashboard/\n`,
      };
    },
    account: (cookie) => {
      const value = COOKIE_VALUE.exec(cookie ?? '')?.[1];
      const plan = planOf(value);
      return plan === null ? null : accounts[plan];
    },
  };
}

/** The oldest account with this name, by SQL on the accounts table: the store has no lookup by name. */
async function findAccountByName(client: PostgresClient, schema: string, name: string): Promise<string | null> {
  try {
    const { rows } = await client.query(`SELECT id FROM "${schema}".accounts WHERE name = $1 ORDER BY created_at, id LIMIT 1`, [name]);
    return (rows[0] as { id: string } | undefined)?.id ?? null;
  } catch (err) {
    throw new IpokitError('ERR:UNAVAILABLE', 'The PostgreSQL store failed.', { cause: err });
  }
}

/** An IPO worth showing: open today, with the most hourly GMP buckets in the last 30 days; null when no IPO has GMP data. */
async function pickSample(store: Store, at: Date): Promise<string | null> {
  const base = { today: todayInIst(at), types: null, source: null, startDate: null, endDate: null, year: null, offset: 0, limit: 100, gmpAt: at.getTime() };
  for (const status of ['open', 'closed', 'listed', 'upcoming'] as const) {
    const withGmp = (await store.listIpos({ ...base, status })).rows.filter((r) => r.gmp != null);
    let best: { name: string; buckets: number } | null = null;
    for (const { ipo } of withGmp) {
      const hour = 3_600_000;
      const buckets = (await store.gmpBuckets({ ipoId: ipo.id, field: 'median', from: at.getTime() - 30 * 24 * hour, to: at.getTime(), size: hour, origin: 0 })).length;
      if (best === null || buckets > best.buckets) best = { name: ipo.symbol ?? ipo.id, buckets };
    }
    if (best !== null) return encodeURIComponent(best.name);
  }
  return null;
}
