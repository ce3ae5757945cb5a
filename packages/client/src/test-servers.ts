/**
 * Real servers for the client's tests: Express 5 (`app.use('/ipos', ipoRouter(store))`) and
 * Koa 3 (`ipoRouter(store, { prefix: '/ipos' })`) over a memory store seeded with the HTTP
 * suite's fixture, on 127.0.0.1 port 0, with a clock the test moves. Not published (the
 * package ships dist/ only, built from index.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Koa from 'koa';
import type { IpoRouterOptions, Store } from '@ipokit/core';
import { FIXTURE_NOW, seedFixture, type FixtureKeys } from '@ipokit/core/testing';
import { ipoRouter as expressRouter } from '@ipokit/express';
import { ipoRouter as koaRouter } from '@ipokit/koa';
import { memoryStore } from '@ipokit/storage-memory';

/** A way to serve the router at `/ipos`. */
export interface Framework {
  name: string;
  serve(store: Store, options: IpoRouterOptions): Promise<Served>;
}

/** A server that listens. */
export interface Served {
  /** The mount URL, e.g. `http://127.0.0.1:40123/ipos`. */
  baseUrl: string;
  close(): Promise<void>;
}

/** The frameworks the client is tested against. */
export const FRAMEWORKS: readonly Framework[] = [
  {
    name: 'express 5',
    serve: (store, options) => {
      const app = express();
      app.use('/ipos', expressRouter(store, options));
      return listen(app, '/ipos');
    },
  },
  {
    name: 'koa 3',
    serve: (store, options) => {
      const app = new Koa();
      app.use(koaRouter(store, { ...options, prefix: '/ipos' }));
      return listen(app.callback(), '/ipos');
    },
  },
];

/** No window refuses anything (for tests that send many requests). */
export const NO_LIMITS: NonNullable<IpoRouterOptions['limits']> = {
  free: { perMinute: Infinity, gmpPerMinute: Infinity },
  paid: { perMinute: Infinity, gmpPerMinute: Infinity },
  pro: { perMinute: Infinity, gmpPerMinute: Infinity },
  keyless: { perMinute: Infinity },
};

/** A fixture server: its URL, the fixture's keys, and its clock (epoch ms, starting at FIXTURE_NOW). */
export interface FixtureServer extends Served {
  keys: FixtureKeys;
  clock: { now: number };
}

/**
 * Seeds a fresh memory store with the fixture and serves it with `framework`; the router's
 * clock reads `clock.now`.
 *
 * @example
 * ```ts
 * const server = await fixtureServer(FRAMEWORKS[0]!, { limits: NO_LIMITS });
 * ```
 */
export async function fixtureServer(framework: Framework, options: IpoRouterOptions = {}): Promise<FixtureServer> {
  const store = memoryStore();
  const { keys } = await seedFixture(store);
  const clock = { now: FIXTURE_NOW };
  const served = await framework.serve(store, { onError: () => {}, ...options, now: () => new Date(clock.now) });
  return {
    ...served,
    keys,
    clock,
    close: async () => {
      await served.close();
      await store.close?.();
    },
  };
}

async function listen(handler: http.RequestListener, mount: string): Promise<Served> {
  const server = http.createServer(handler);
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
