/**
 * The Koa apps the HTTP suite runs against (Koa 2 and 3, with `prefix` and under
 * koa-mount), for this package's tests and for the stores' HTTP tests. Not published.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Koa2 from 'koa2';
import mount from 'koa-mount';
import type { AccountHttpTarget, HttpTarget, StartedTarget } from '@ipokit/testing';
import { accountRouter, ipoRouter, type KoaContextLike } from './index.js';

/** The Koa versions the adapter supports, each as a way to create an app. */
export const KOA_VERSIONS = [
  { name: 'koa 3', create: (): Koa => new Koa() },
  { name: 'koa 2', create: (): Koa => new Koa2() },
];

/**
 * The suite's targets: each Koa version with `prefix: '/ipos'`, and Koa 3 under koa-mount
 * (`only: 'koa 3'` keeps the first alone).
 *
 * @example
 * ```ts
 * for (const target of koaTargets()) testHttp({ target, createStore: () => memoryStore() });
 * ```
 */
export function koaTargets(only?: 'koa 3'): HttpTarget[] {
  const prefixed = KOA_VERSIONS.map(
    (framework): HttpTarget => ({
      name: `${framework.name}, prefix`,
      start: (store, options) => {
        const app = framework.create();
        app.use(ipoRouter(store, { ...options, prefix: '/ipos' }));
        return listen(app, '/ipos');
      },
      startInApp: (store, options) => listen(inApp(framework.create(), ipoRouter(store, { ...options, prefix: '/ipos' })), '/ipos'),
    }),
  );
  const mounted: HttpTarget = {
    name: 'koa 3, koa-mount',
    start: (store, options) => {
      const app = new Koa();
      app.use(mount('/ipos', ipoRouter(store, options)));
      return listen(app, '/ipos');
    },
    startInApp: (store, options) => listen(inApp(new Koa(), mount('/ipos', ipoRouter(store, options))), '/ipos'),
  };
  return only === 'koa 3' ? [prefixed[0]!] : [...prefixed, mounted];
}

/**
 * The account suite's targets: each Koa version with `prefix: '/account'`, signing in the
 * account the `x-test-account` header names; with `parseJson` after a JSON body parser
 * that sets `ctx.request.body` as koa-bodyparser does.
 *
 * @example
 * ```ts
 * for (const target of koaAccountTargets()) testAccountRouter({ target, createStore: () => memoryStore() });
 * ```
 */
export function koaAccountTargets(): AccountHttpTarget[] {
  return KOA_VERSIONS.map((framework) => ({
    name: framework.name,
    start: (store, options, { parseJson }) => {
      const app = framework.create();
      if (parseJson) app.use(jsonBodyParser);
      app.use(accountRouter(store, { ...options, prefix: '/account', account: (ctx) => headerOf(ctx, 'x-test-account') }));
      return listen(app, '/account');
    },
  }));
}

function headerOf(ctx: KoaContextLike, name: string): string | null {
  const value = ctx.headers[name];
  return typeof value === 'string' ? value : null;
}

/** What koa-bodyparser does for JSON, in a few lines: parse an application/json body into `ctx.request.body`. */
async function jsonBodyParser(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  if (ctx.method === 'POST' && ctx.is('application/json') !== false && ctx.is('application/json') !== null) {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      (ctx.request as { body?: unknown }).body = text === '' ? {} : JSON.parse(text);
    } catch {
      ctx.status = 400;
      ctx.body = 'bad json';
      return;
    }
  }
  await next();
}

/** The app of {@link HttpTarget.startInApp}, around `router`. */
function inApp(app: Koa, router: Koa.Middleware<Koa.DefaultState, KoaContextLike>): Koa {
  app.use(async (ctx, next) => {
    ctx.set('x-app', 'before');
    await next();
  });
  app.use(async (ctx, next) => {
    if (ctx.method !== 'GET' || ctx.path !== '/health') return next();
    ctx.type = 'text/plain';
    ctx.body = 'ok';
  });
  app.use(router);
  app.use(async (ctx, next) => {
    const page = ctx.method === 'GET' ? { '/iposX': 'app iposX', '/other': 'app other' }[ctx.path] : undefined;
    if (page === undefined) return next();
    ctx.type = 'text/plain';
    ctx.body = page;
  });
  app.use((ctx) => {
    ctx.status = 404;
    ctx.type = 'text/plain';
    ctx.body = 'app 404';
  });
  return app;
}

/**
 * Serves an app on 127.0.0.1, port 0.
 *
 * @example
 * ```ts
 * const { baseUrl, close } = await listen(app, '/ipos');
 * ```
 */
export async function listen(app: Koa, mountPath: string): Promise<StartedTarget> {
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${mountPath}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err === undefined ? resolve() : reject(err)));
        server.closeAllConnections();
      }),
  };
}

