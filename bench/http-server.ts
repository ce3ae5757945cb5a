/**
 * One HTTP contender of the benchmark, in its own process: `node ... bench/http-server.ts <name>`.
 * Serves the demo dataset on 127.0.0.1 (port 0) and prints one JSON line: { port, key, id }.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import Koa from 'koa';
import KoaRouter from '@koa/router';
import { createAccount, createApiKey, importDataset } from '@ipokit/core';
import { ipoRouter } from '@ipokit/express';
import { ipoRouter as koaIpoRouter } from '@ipokit/koa';
import { memoryStore } from '@ipokit/storage-memory';
import { generateDataset } from '../demo/src/generate.js';

const NOW = Date.UTC(2026, 10, 22, 6, 30);

const contenders: Record<string, (ctx: Ctx) => Server> = {
  /** Our router, mounted as the README says, with limits that never trip. */
  'ipokit-express': ({ store }) => {
    const app = express();
    app.use('/ipos', ipoRouter(store, { now: () => new Date(NOW), limits: { paid: { perMinute: Infinity } } }));
    return app.listen(0, '127.0.0.1');
  },
  /** The floor: a bare Express 5 route sending the same bytes, prebuilt. */
  'bare-express': ({ body }) => {
    const app = express();
    app.get('/ipos/:id', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    return app.listen(0, '127.0.0.1');
  },
  /** Our Koa router with a prefix. */
  'ipokit-koa': ({ store }) => {
    const app = new Koa();
    app.use(koaIpoRouter(store, { prefix: '/ipos', now: () => new Date(NOW), limits: { paid: { perMinute: Infinity } } }));
    return app.listen(0, '127.0.0.1');
  },
  /** The floor on Koa: Koa 3 + @koa/router sending the same bytes, prebuilt. */
  'bare-koa': ({ body }) => {
    const app = new Koa();
    const router = new KoaRouter();
    router.get('/ipos/:id', (ctx) => {
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = body;
    });
    app.use(router.routes());
    return app.listen(0, '127.0.0.1');
  },
};

interface Ctx {
  store: ReturnType<typeof memoryStore>;
  body: string;
}

async function main(): Promise<void> {
  const name = process.argv[2] ?? '';
  const make = contenders[name];
  if (make === undefined) throw new Error(`unknown contender ${name}; one of ${Object.keys(contenders).join(', ')}`);
  const dataset = generateDataset({ today: '2026-11-22', now: NOW });
  const store = memoryStore();
  await importDataset(store, dataset);
  const account = await createAccount(store, { name: 'bench', plan: 'paid' });
  const { key } = await createApiKey(store, { accountId: account.id, label: 'bench' });
  const id = dataset.ipos?.[0]?.id ?? '';
  // The bytes our router answers, so the bare contender sends exactly the same.
  const reference = express();
  reference.use('/ipos', ipoRouter(store, { now: () => new Date(NOW), limits: { paid: { perMinute: Infinity } } }));
  const probe = reference.listen(0, '127.0.0.1');
  await new Promise((r) => probe.once('listening', r));
  const body = await (await fetch(`http://127.0.0.1:${(probe.address() as AddressInfo).port}/ipos/${id}`, { headers: { 'x-api-key': key } })).text();
  probe.close();
  const server = make({ store, body });
  await new Promise((r) => server.once('listening', r));
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port, key, id })}\n`);
}

// Exit cleanly on a signal, so `node --cpu-prof` writes its profile.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
await main();
