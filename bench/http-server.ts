/**
 * One HTTP contender of the benchmark, in its own process: `node ... bench/http-server.ts <name>`.
 * Serves the demo dataset on 127.0.0.1 (port 0) and prints one JSON line: { port, key, paths }.
 * Every contender answers the same two paths with the same JSON bytes (checked at start).
 * `ipokit-serve` is the real `startServer` of `ipokit serve` (framework node, limits and
 * access log off, a pro key) and `bare-node` a node:http server answering its bytes.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import Koa from 'koa';
import KoaRouter from '@koa/router';
import { Hono, type Context } from 'hono';
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { createAccount, createApiKey, importDataset, type IpoRouterOptions } from '@ipokit/core';
import { ipoRouter } from '@ipokit/express';
import { ipoRouter as koaIpoRouter } from '@ipokit/koa';
import { ipoHandler } from '@ipokit/fetch';
import { memoryStore } from '@ipokit/storage-memory';
import { generateDataset, startServer, type RunningServer } from '@ipokit/cli';

const NOW = Date.UTC(2026, 10, 22, 6, 30);
/** Quotas no benchmark run can reach (finite, so the limiter does its work). */
const OPTIONS: IpoRouterOptions = { now: () => new Date(NOW), limits: { paid: { perMinute: 100_000_000, gmpPerMinute: 100_000_000 } } };

interface Ctx {
  store: ReturnType<typeof memoryStore>;
  key: string;
  /** Path -> the parsed JSON our router answers there. */
  answers: Map<string, unknown>;
}

const contenders: Record<string, (ctx: Ctx) => Server> = {
  /** Our router, mounted as the README says. */
  'ipokit-express': ({ store }) => {
    const app = express();
    app.use('/ipos', ipoRouter(store, OPTIONS));
    return app.listen(0, '127.0.0.1');
  },
  /** The same, for the one-IPO and subscription paths (bench/ipo-data.ts). */
  'ipokit-express-subscription': ({ store }) => {
    const app = express();
    app.use('/ipos', ipoRouter(store, OPTIONS));
    return app.listen(0, '127.0.0.1');
  },
  /** A bare Express 5 router answering the prebuilt objects: no keys, no limits, no rules. */
  'bare-express': ({ answers }) => {
    const app = express();
    const router = express.Router();
    router.get('/', (_req, res) => {
      res.json(answers.get('/ipos?status=listed&limit=100'));
    });
    router.get('/:id', (req, res) => {
      res.json(answers.get(`/ipos/${req.params.id}`));
    });
    app.use('/ipos', router);
    return app.listen(0, '127.0.0.1');
  },
  /**
   * What a user writes without us: a Map of keys, express-rate-limit keyed by the key
   * (its default memory store), and the prebuilt answers.
   */
  'handrolled-express': ({ answers, key }) => {
    const keys = new Map([[key, { plan: 'paid' }]]);
    const app = express();
    const router = express.Router();
    router.use((req, res, next) => {
      const k = req.get('x-api-key');
      if (k === undefined || !keys.has(k)) {
        res.status(401).json({ status: '401', title: 'Unauthorized', detail: 'bad key', code: 'ERR:INVLDKEY' });
        return;
      }
      next();
    });
    router.use(rateLimit({ windowMs: 60_000, limit: 100_000_000, keyGenerator: (req) => req.get('x-api-key') ?? '', standardHeaders: 'draft-6', legacyHeaders: false }));
    router.get('/', (_req, res) => {
      res.json(answers.get('/ipos?status=listed&limit=100'));
    });
    router.get('/:id', (req, res) => {
      res.json(answers.get(`/ipos/${req.params.id}`));
    });
    app.use('/ipos', router);
    return app.listen(0, '127.0.0.1');
  },
  /** Our Koa router with a prefix. */
  'ipokit-koa': ({ store }) => {
    const app = new Koa();
    app.use(koaIpoRouter(store, { ...OPTIONS, prefix: '/ipos' }));
    return app.listen(0, '127.0.0.1');
  },
  /** Koa 3 + @koa/router answering the prebuilt objects. */
  'bare-koa': ({ answers }) => {
    const app = new Koa();
    const router = new KoaRouter({ prefix: '/ipos' });
    router.get('/', (ctx) => {
      ctx.body = answers.get('/ipos?status=listed&limit=100');
    });
    router.get('/:id', (ctx) => {
      ctx.body = answers.get(`/ipos/${ctx.params.id}`);
    });
    app.use(router.routes());
    return app.listen(0, '127.0.0.1');
  },
  /** Our fetch handler under a Hono route on @hono/node-server, as the README mounts it. */
  'ipokit-fetch': ({ store }) => {
    const handle = ipoHandler(store, { ...OPTIONS, prefix: '/ipos', clientAddress: (_request, c: Context) => getConnInfo(c).remote.address });
    const app = new Hono();
    app.all('/ipos/*', (c) => handle(c.req.raw, c));
    return serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
  },
  /** Hono 4 routes on @hono/node-server answering the prebuilt objects. */
  'bare-hono': ({ answers }) => {
    const app = new Hono();
    app.get('/ipos', (c) => c.json(answers.get('/ipos?status=listed&limit=100')));
    app.get('/ipos/:id', (c) => c.json(answers.get(`/ipos/${c.req.param('id')}`)));
    return serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
  },
};

/** The one-IPO path and the subscription path of the IPO with the most subscription snapshots. */
function subscriptionPaths(dataset: ReturnType<typeof generateDataset>): string[] {
  const counts = new Map<string, number>();
  for (const s of dataset.subscription ?? []) counts.set(s.ipoId, (counts.get(s.ipoId) ?? 0) + 1);
  const best = [...counts].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))[0];
  if (best === undefined) throw new Error('the demo dataset has no subscription snapshots');
  return [`/ipos/${best[0]}`, `/ipos/${best[0]}/subscription`];
}

/** Every window of every plan off: `ipokit serve --limit PLAN.WINDOW=off` for each. */
const UNLIMITED = { perMinute: Infinity, perHour: Infinity, perDay: Infinity, gmpPerMinute: Infinity, gmpPerDay: Infinity };
const NO_LIMITS = { free: UNLIMITED, paid: UNLIMITED, pro: UNLIMITED, keyless: { perMinute: Infinity, perHour: Infinity, perDay: Infinity } };

/**
 * `ipokit serve` as an operator runs it (the generated dataset, demo keys, node:http, no
 * access log), limits off, against a bare node:http server sending the bytes it answers
 * for the same paths: the same body and the same headers (all but those Node adds itself).
 * The bare server serialises the prebuilt answer per request, as the other bare contenders
 * do (`res.json`, `ctx.body`, `c.json`).
 */
async function serveContender(name: 'ipokit-serve' | 'bare-node'): Promise<void> {
  const running: RunningServer = await startServer({ port: 0, host: '127.0.0.1', framework: 'node', now: () => new Date(NOW), router: { limits: NO_LIMITS } });
  const key = running.keys!.pro;
  const dataset = generateDataset({ today: '2026-11-22', now: NOW });
  const id = dataset.ipos?.find((ipo) => ipo.listingDate != null && ipo.listingDate < '2026-11-01')?.id ?? '';
  const paths = [`/ipos/${id}`, '/ipos?status=listed&limit=100'];
  const base = `http://127.0.0.1:${(running.server.address() as AddressInfo).port}`;
  const texts = new Map<string, string>();
  const headers = new Map<string, Record<string, string>>();
  for (const path of paths) {
    const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    texts.set(path, await res.text());
    headers.set(path, Object.fromEntries([...res.headers].filter(([h]) => !['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(h))));
  }
  let port = (running.server.address() as AddressInfo).port;
  if (name === 'bare-node') {
    await running.close();
    const answers = new Map([...texts].map(([path, text]) => [path, { value: JSON.parse(text) as unknown, headers: headers.get(path)! }]));
    const server = createServer((req, res) => {
      const answer = answers.get(req.url ?? '');
      if (answer === undefined) {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.stringify(answer.value);
      res.writeHead(200, { ...answer.headers, 'content-length': String(Buffer.byteLength(body)) });
      res.end(body);
    });
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    port = (server.address() as AddressInfo).port;
    for (const [path, text] of texts) {
      const got = await (await fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'x-api-key': key } })).text();
      if (got !== text) throw new Error(`${name} answers ${path} with other bytes than ipokit serve`);
    }
  }
  process.stdout.write(`${JSON.stringify({ port, key, paths })}\n`);
}

async function main(): Promise<void> {
  const name = process.argv[2] ?? '';
  if (name === 'ipokit-serve' || name === 'bare-node') return serveContender(name);
  const make = contenders[name];
  if (make === undefined) throw new Error(`unknown contender ${name}; one of ${Object.keys(contenders).join(', ')}`);
  const dataset = generateDataset({ today: '2026-11-22', now: NOW });
  const store = memoryStore();
  await importDataset(store, dataset);
  const account = await createAccount(store, { name: 'bench', plan: 'paid' });
  const { key } = await createApiKey(store, { accountId: account.id, label: 'bench' });
  const id = dataset.ipos?.find((ipo) => ipo.listingDate != null && ipo.listingDate < '2026-11-01')?.id ?? '';
  // `ipokit-express-subscription` is our router again, measured on one IPO and its
  // subscription series (the IPO with the most snapshots) instead of the two usual paths.
  const paths = name === 'ipokit-express-subscription' ? subscriptionPaths(dataset) : [`/ipos/${id}`, '/ipos?status=listed&limit=100'];
  // The bytes our router answers, so that every contender sends exactly the same.
  const reference = express();
  reference.use('/ipos', ipoRouter(store, OPTIONS));
  const probe = reference.listen(0, '127.0.0.1');
  await new Promise((r) => probe.once('listening', r));
  const texts = new Map<string, string>();
  for (const path of paths) {
    const res = await fetch(`http://127.0.0.1:${(probe.address() as AddressInfo).port}${path}`, { headers: { 'x-api-key': key } });
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    texts.set(path, await res.text());
  }
  probe.close();
  const answers = new Map([...texts].map(([path, text]) => [path, JSON.parse(text) as unknown]));
  const server = make({ store, key, answers });
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as AddressInfo).port;
  for (const [path, text] of texts) {
    const got = await (await fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'x-api-key': key } })).text();
    if (got !== text) throw new Error(`${name} answers ${path} with other bytes than ipokit`);
  }
  process.stdout.write(`${JSON.stringify({ port, key, paths })}\n`);
}

// Exit cleanly on a signal, so `node --cpu-prof` writes its profile.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
await main();
