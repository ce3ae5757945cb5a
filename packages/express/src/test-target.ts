/**
 * The Express apps the HTTP suite runs against (Express 4 and 5), for this package's
 * tests and for the stores' HTTP tests. Not part of the published package.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import express4 from 'express4';
import type { AccountHttpTarget, HttpTarget, StartedTarget } from '@ipokit/testing';
import { accountRouter, ipoRouter } from './index.js';

/** The Express versions the adapter supports, each as a way to create an app. */
export const EXPRESS_VERSIONS = [
  { name: 'express 5', create: (): Express => express() },
  { name: 'express 4', create: (): Express => express4() },
];

/**
 * The suite's target on one Express version: the router mounted at /ipos, on 127.0.0.1 port 0.
 *
 * @example
 * ```ts
 * testHttp({ target: expressTarget(EXPRESS_VERSIONS[0]!), createStore: () => memoryStore() });
 * ```
 */
export function expressTarget(framework: { name: string; create: () => Express }): HttpTarget {
  return {
    name: framework.name,
    start: (store, options) => {
      const app = framework.create();
      app.use('/ipos', ipoRouter(store, options));
      return listen(app, '/ipos');
    },
    startInApp: (store, options) => {
      const app = framework.create();
      app.use((_req, res, next) => {
        res.setHeader('x-app', 'before');
        next();
      });
      app.use(express.json());
      app.get('/health', (_req, res) => {
        res.type('text/plain').send('ok');
      });
      app.use('/ipos', ipoRouter(store, options));
      app.get('/iposX', (_req, res) => {
        res.type('text/plain').send('app iposX');
      });
      app.get('/other', (_req, res) => {
        res.type('text/plain').send('app other');
      });
      app.use((_req, res) => {
        res.status(404).type('text/plain').send('app 404');
      });
      return listen(app, '/ipos');
    },
  };
}

/**
 * The account suite's target on one Express version: the account router at /account,
 * signing in the account the `x-test-account` header names; with `parseJson` after
 * `express.json()`.
 *
 * @example
 * ```ts
 * testAccountRouter({ target: expressAccountTarget(EXPRESS_VERSIONS[0]!), createStore: () => memoryStore() });
 * ```
 */
export function expressAccountTarget(framework: { name: string; create: () => Express }): AccountHttpTarget {
  return {
    name: framework.name,
    start: (store, options, { parseJson }) => {
      const app = framework.create();
      if (parseJson) app.use(express.json());
      app.use('/account', accountRouter(store, { ...options, account: (req) => req.get('x-test-account') ?? null }));
      return listen(app, '/account');
    },
  };
}

/**
 * Serves an app (an Express app or any node:http request listener) on 127.0.0.1, port 0.
 *
 * @example
 * ```ts
 * const { baseUrl, close } = await listen(app, '/ipos');
 * ```
 */
export async function listen(app: http.RequestListener, mount: string): Promise<StartedTarget> {
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${mount}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err === undefined ? resolve() : reject(err)));
        server.closeAllConnections();
      }),
  };
}

