/**
 * The ipokit demo: `npm start` serves a generated dataset (or `IPOKIT_DATASET=file.json`)
 * with Express on PORT (default 3000), and prints one key per plan and three curl lines.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import express from 'express';
import Koa from 'koa';
import { createAccount, createApiKey, importDataset, todayInIst, type Plan, type Store } from '@ipokit/core';
import { ipoRouter } from '@ipokit/express';
import { ipoRouter as koaIpoRouter } from '@ipokit/koa';
import { memoryStore } from '@ipokit/storage-memory';
import { DEFAULT_SCHEMA, migrate, postgresStore } from '@ipokit/storage-postgres';
import pg from 'pg';
import { generateDataset } from './generate.js';

/** What a started demo gives back. */
export interface Demo {
  server: Server;
  url: string;
  keys: Record<'free' | 'paid' | 'pro', string>;
  /** False when PostgreSQL already held IPOs and nothing was imported. */
  imported: boolean;
  /** Three curl lines that work as pasted. */
  curls: string[];
  close(): Promise<void>;
}

/** Options of {@link startDemo}. */
export interface DemoOptions {
  /** 0 picks a free port. */
  port: number;
  /** A dataset JSON file instead of the generated dataset. */
  datasetFile?: string;
  now?: () => Date;
  framework?: 'express' | 'koa';
  /** Serve from PostgreSQL: migrate, and import the dataset when the database holds no IPO. */
  databaseUrl?: string;
  /** PostgreSQL schema, default `ipokit`. */
  schema?: string;
}

/**
 * Loads the dataset, creates one account and key per plan, and serves the router.
 *
 * @example
 * ```ts
 * const demo = await startDemo({ port: 0 });
 * console.log(demo.curls.join('\n'));
 * await demo.close();
 * ```
 */
export async function startDemo(options: DemoOptions): Promise<Demo> {
  const now = options.now ?? (() => new Date());
  const load = async (): Promise<unknown> =>
    options.datasetFile === undefined ? generateDataset({ today: todayInIst(now()), now: now().getTime() }) : readDataset(options.datasetFile);
  let store: Store;
  let pool: pg.Pool | undefined;
  let imported = true;
  if (options.databaseUrl === undefined) {
    store = memoryStore();
    await importDataset(store, await load());
  } else {
    const schema = options.schema ?? DEFAULT_SCHEMA;
    // PostgreSQL: migrate, and import only into an empty database (or when a file is given).
    pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
    // An idle connection the server drops must not take the process down with it.
    pool.on('error', (err) => console.error('PostgreSQL connection lost:', err.message));
    try {
      await migrate(pool, { schema });
      store = postgresStore({ client: pool, schema });
      const empty = (await pool.query<{ empty: boolean }>(`SELECT NOT EXISTS (SELECT 1 FROM "${schema}".ipos) AS empty`)).rows[0]?.empty;
      imported = empty === true || options.datasetFile !== undefined;
      if (imported) await importDataset(store, await load());
    } catch (err) {
      await pool.end();
      throw err;
    }
  }
  const keys = await createKeys(store);

  const home = { service: 'ipokit demo', routes: ['/ipos?status=listed', '/ipos/{identifier}', '/ipos/{identifier}/gmp'] };
  let handler: Parameters<typeof createServer>[1];
  if (options.framework === 'koa') {
    const app = new Koa();
    app.use(async (ctx, next) => {
      if (ctx.path !== '/') return next();
      ctx.body = home;
    });
    app.use(koaIpoRouter(store, { now, prefix: '/ipos' }));
    handler = app.callback();
  } else {
    const app = express();
    app.get('/', (_req, res) => {
      res.json(home);
    });
    app.use('/ipos', ipoRouter(store, { now }));
    handler = app;
  }

  const server = await new Promise<Server>((resolve, reject) => {
    const s = createServer(handler).listen(options.port, '127.0.0.1', () => resolve(s)).on('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const url = `http://localhost:${port}`;
  const sample = await pickSample(store, now());
  const curls = [
    `curl -s '${url}/ipos?status=listed&limit=5' -H 'x-api-key: ${keys.paid}'`,
    `curl -s '${url}/ipos/${sample}?includeGmp=true' -H 'x-api-key: ${keys.pro}'`,
    `curl -s '${url}/ipos/${sample}/gmp?interval=hourly&field=median' -H 'x-api-key: ${keys.pro}'`,
  ];
  return {
    server,
    url,
    keys,
    imported,
    curls,
    close: async () => {
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
      await pool?.end();
    },
  };
}

/** Reads and parses a dataset file; a bad file is reported with every problem. */
async function readDataset(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new DemoError(`Cannot read IPOKIT_DATASET file ${file}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new DemoError(`IPOKIT_DATASET file ${file} is not valid JSON: ${(err as Error).message}`);
  }
}

async function createKeys(store: Store): Promise<Record<'free' | 'paid' | 'pro', string>> {
  const make = async (plan: Plan, gmpAddon: boolean) => {
    const account = await createAccount(store, { name: `Demo ${plan}`, plan, gmpAddon });
    return (await createApiKey(store, { accountId: account.id, label: `demo ${plan} key` })).key;
  };
  return { free: await make('free', false), paid: await make('paid', false), pro: await make('pro', true) };
}

/** An IPO worth showing: open today, with the most hourly GMP buckets in the last 30 days. */
async function pickSample(store: Store, at: Date): Promise<string> {
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
  return 'unknown';
}

/** A start-up problem the user can fix (a missing or unreadable dataset file). */
export class DemoError extends Error {}
