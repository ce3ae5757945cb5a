/**
 * The Koa apps the HTTP suite runs against (Koa 2 and 3, with `prefix` and under
 * koa-mount), for this package's tests and for the stores' HTTP tests. Not published.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Koa2 from 'koa2';
import mount from 'koa-mount';
import type { HttpTarget, StartedTarget } from '@ipokit/core/testing';
import { ipoRouter, type KoaContextLike } from './index.js';

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

