/**
 * The server behind `ipokit serve` and the demo's `npm start`: a store (memory, or
 * PostgreSQL on a client it is given), optionally one demo account and key per plan, and
 * the router mounted at /ipos with Express or Koa.
 */
import { createServer, type Server } from 'node:http';
import express from 'express';
import Koa from 'koa';
import { createAccount, createApiKey, importDataset, IpokitError, isIpokitError, todayInIst, type Plan, type Store } from '@ipokit/core';
import { ipoRouter } from '@ipokit/express';
import { ipoRouter as koaIpoRouter } from '@ipokit/koa';
import { memoryStore } from '@ipokit/storage-memory';
import { migrate, postgresStore, type PostgresClient } from '@ipokit/storage-postgres';
import { applyConnectionLimits, type ConnectionLimits } from './connection-limits.js';
import { readDatasetJson } from './dataset-file.js';
import { generateDataset } from './generate.js';
import { CliError } from './io.js';

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
  /** Default `express`. */
  framework?: 'express' | 'koa';
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
}

/** A started server. */
export interface RunningServer {
  server: Server;
  /** `http://localhost:3000`: the router answers under `${url}/ipos`. */
  url: string;
  /** The demo keys, when they were created. */
  keys: DemoKeys | null;
  /** What is served: the generated dataset, the file, or what PostgreSQL already held. */
  source: 'generated' | 'file' | 'stored';
  /** IPOs in the store when serving began. */
  ipoCount: number;
  /** Curl lines that work as pasted (with `$KEY` for the key when no demo key was made): a list, and one IPO and its GMP series when some IPO has GMP data. */
  curls: string[];
  /** Stops listening (if still listening) and frees the store and the database. */
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
  const generated = () => generateDataset({ today: todayInIst(now()), now: now().getTime() });
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

  let store: Store | undefined;
  let source: RunningServer['source'];
  let ipoCount: number;
  let keys: DemoKeys | null = null;
  let server: Server | undefined;
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
      store = postgresStore({ client, schema });
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
    if (options.demoKeys ?? database === undefined) keys = await createDemoKeys(store);
    sample = await pickSample(store, now());
    server = await listen(handlerFor(store, options.framework ?? 'express', now, options.onError), options.port, options.host ?? '127.0.0.1', options.connectionLimits);
  } catch (err) {
    await release().catch(() => undefined);
    throw err;
  }

  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const url = `http://${displayHost(options.host ?? '127.0.0.1')}:${port}`;
  const key = (plan: Plan) => (keys === null ? `-H "x-api-key: $KEY"` : `-H 'x-api-key: ${keys[plan]}'`);
  const curls = [`curl -s '${url}/ipos?status=listed&limit=5' ${key('paid')}`];
  if (sample !== null) {
    curls.push(`curl -s '${url}/ipos/${sample}?includeGmp=true' ${key('pro')}`, `curl -s '${url}/ipos/${sample}/gmp?interval=hourly&field=median' ${key('pro')}`);
  }
  const listening = server;
  return {
    server: listening,
    url,
    keys,
    source,
    ipoCount,
    curls,
    close: async () => {
      if (listening.listening) await new Promise<void>((resolve, reject) => listening.close((err) => (err ? reject(err) : resolve())));
      await release();
    },
  };
}

function handlerFor(store: Store, framework: 'express' | 'koa', now: () => Date, onError: ((err: unknown) => void) | undefined) {
  const home = { service: 'ipokit', routes: ['/ipos?status=listed', '/ipos/{identifier}', '/ipos/{identifier}/gmp'] };
  const routerOptions = { now, ...(onError === undefined ? {} : { onError }) };
  if (framework === 'koa') {
    const app = new Koa();
    app.use(async (ctx, next) => {
      if (ctx.path !== '/') return next();
      ctx.body = home;
    });
    app.use(koaIpoRouter(store, { ...routerOptions, prefix: '/ipos' }));
    return app.callback();
  }
  const app = express();
  app.get('/', (_req, res) => {
    res.json(home);
  });
  app.use('/ipos', ipoRouter(store, routerOptions));
  return app;
}

function listen(handler: Parameters<typeof createServer>[1], port: number, host: string, limits: Partial<ConnectionLimits> | undefined): Promise<Server> {
  return new Promise<Server>((resolve, reject) => {
    const s = createServer(handler);
    applyConnectionLimits(s, limits);
    s.once('error', (err: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      if (err.code === 'EADDRINUSE') reject(new CliError(`cannot listen on ${where}: the port is in use (choose another with --port, or 0 for any free one)`, 1));
      else if (err.code === 'EACCES') reject(new CliError(`cannot listen on ${where}: permission denied (ports below 1024 need privileges)`, 1));
      else reject(new CliError(`cannot listen on ${where}: ${err.message}`, 1));
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

async function createDemoKeys(store: Store): Promise<DemoKeys> {
  const make = async (plan: Plan, gmpAddon: boolean) => {
    const account = await createAccount(store, { name: `Demo ${plan}`, plan, gmpAddon });
    return (await createApiKey(store, { accountId: account.id, label: `demo ${plan} key` })).key;
  };
  return { free: await make('free', false), paid: await make('paid', false), pro: await make('pro', true) };
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
