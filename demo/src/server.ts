/**
 * The ipokit demo: `npm start` serves a generated dataset (or `IPOKIT_DATASET=file.json`)
 * with Express on PORT (default 3000), and prints one key per plan and three curl lines.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import express from 'express';
import Koa from 'koa';
import { createAccount, createApiKey, importDataset, todayInIst, type Dataset, type Plan, type Store } from '@ipokit/core';
import { ipoRouter } from '@ipokit/express';
import { ipoRouter as koaIpoRouter } from '@ipokit/koa';
import { memoryStore } from '@ipokit/storage-memory';
import { generateDataset } from './generate.js';

/** What a started demo gives back. */
export interface Demo {
  server: Server;
  url: string;
  keys: Record<'free' | 'paid' | 'pro', string>;
  /** Three curl lines that work as pasted. */
  curls: string[];
  close(): Promise<void>;
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
export async function startDemo(options: { port: number; datasetFile?: string; now?: () => Date; framework?: 'express' | 'koa' }): Promise<Demo> {
  const now = options.now ?? (() => new Date());
  const store = memoryStore();
  const dataset = options.datasetFile === undefined ? generateDataset({ today: todayInIst(now()), now: now().getTime() }) : await readDataset(options.datasetFile);
  await importDataset(store, dataset);
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
  const sample = pickSample(dataset, todayInIst(now()));
  const curls = [
    `curl -s '${url}/ipos?status=listed&limit=5' -H 'x-api-key: ${keys.paid}'`,
    `curl -s '${url}/ipos/${sample}?includeGmp=true' -H 'x-api-key: ${keys.pro}'`,
    `curl -s '${url}/ipos/${sample}/gmp?interval=hourly&field=median' -H 'x-api-key: ${keys.pro}'`,
  ];
  return {
    server,
    url,
    keys,
    curls,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
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

/** An IPO worth showing: open today with the most GMP snapshots, else any with GMP data. */
function pickSample(dataset: unknown, today: string): string {
  const d = dataset as Dataset;
  const counts = new Map<string, number>();
  for (const s of d.gmp ?? []) counts.set(s.ipoId, (counts.get(s.ipoId) ?? 0) + 1);
  const ipos = d.ipos ?? [];
  const isOpen = (i: (typeof ipos)[number]) =>
    i.startDate != null && i.startDate <= today && today <= (i.endDate ?? i.startDate) && !(i.listingDate != null && i.listingDate <= today);
  const ranked = [...ipos].sort((a, b) => Number(isOpen(b)) - Number(isOpen(a)) || (counts.get(b.id) ?? 0) - (counts.get(a.id) ?? 0));
  const best = ranked[0];
  return best === undefined ? 'unknown' : encodeURIComponent(best.symbol ?? best.id);
}

/** A start-up problem the user can fix (a missing or unreadable dataset file). */
export class DemoError extends Error {}
